// Offset: how far a job has read its source, as named parts (a JSON object).
//
// A file job's offset is {"fileName": "<key>"} (Doris's form). A change stream's may have
// several parts: snapshot-split progress plus a log position, or the batches still in flight,
// e.g. {"lsn": "0/16B6C50", "snapshot": {"done": ["t1"], "next": "t2"}}. The job layer does not
// look inside an offset: it stores it, shows it (CurrentOffset) and compares it whole in the
// commit gate; only the job's source reads its parts.
//
// Contract
// - ToJson() is canonical: parts in key order, no spaces, so two equal offsets have equal text
//   and the catalog can compare offsets as text. The empty offset ("from the beginning") is "".
// - Parse(ToJson()) == *this for any parts, whatever bytes the strings hold (escapes
//   round-trip; invalid UTF-8 is kept as U+FFFD).
// - Parse("") is the empty offset; text that is not a JSON object is INVALID_ARGUMENT.
// - A value type; thread-compatible.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::job {

class Offset {
 public:
  Offset() = default;  // from the beginning
  static Result<Offset> Parse(std::string_view json);
  // {"fileName": key}; the empty offset for "".
  static Offset FileName(std::string_view key);

  bool empty() const { return parts_.empty(); }
  std::string ToJson() const;
  const nlohmann::json& parts() const { return parts_; }

  // The string part `name`, "" when absent or not a string.
  std::string Text(std::string_view name) const;
  // A copy with part `name` set to `value`.
  Offset With(std::string_view name, nlohmann::json value) const;

  friend bool operator==(const Offset& a, const Offset& b) { return a.parts_ == b.parts_; }

 private:
  explicit Offset(nlohmann::json parts) : parts_(std::move(parts)) {}
  nlohmann::json parts_ = nlohmann::json::object();
};

// The part of a file job's offset.
inline constexpr std::string_view kFileNamePart = "fileName";

}  // namespace millrace::job
