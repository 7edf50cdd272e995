// A small JSON reader for tests that read published test vectors (the AWS SigV4 suite's
// index.json). Test-only: strict RFC 8259 syntax, numbers kept as their text, \u escapes
// (surrogate pairs included) decoded to UTF-8.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace::testing {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  static Result<JsonValue> Parse(std::string_view text);

  Kind kind() const { return kind_; }
  bool is_string() const { return kind_ == Kind::kString; }
  // The string (or the number's text); "" for other kinds.
  const std::string& str() const { return text_; }
  bool boolean() const { return bool_; }
  const std::vector<JsonValue>& items() const { return items_; }
  // Member of an object; a null value when absent.
  const JsonValue& operator[](std::string_view name) const;
  bool has(std::string_view name) const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

}  // namespace millrace::testing
