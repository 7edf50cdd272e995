// Streaming job properties (SPEC section 3), declared once.
//
// JobPropertySpecs() is the single declaration of every property: the parser accepts only its
// keys, the validator checks values against its types, the Properties column of jobs() lists
// them, and docs/jobs.md is generated from it (a test keeps the two in sync).
//
// Contract
// - Parse rejects an unknown key with INVALID_ARGUMENT listing the supported keys, and a bad
//   value naming the key, the value and what is accepted. Keys are case-sensitive, as in Doris
//   (the variable of a session.<variable> key is not).
// - Merge (for ALTER JOB) applies new values over existing ones and validates the result.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/param_spec.h"
#include "common/result.h"

namespace millrace::job {

enum class IngestionMode { kStreaming, kOnce };
enum class LateFiles { kLoad, kIgnore };
enum class OnError { kPause, kSkipFile };

// A job's properties are ParamSpecs (common/param_spec.h): name, default, the values accepted
// (in words) and the docs line.
const std::vector<ParamSpec>& JobPropertySpecs();

// "session.<variable>" sets a Doris session variable for the job's tasks. Those Millrace reads
// are in JobPropertySpecs; these are real Doris variables a script may set that mean nothing
// here: accepted with any value, and ignored. Any other name is "Invalid session variable, [x]",
// as in Doris. Variable names match in any case.
inline constexpr std::string_view kSessionPrefix = "session.";
struct IgnoredSessionVariable {
  std::string_view name;    // without "session."
  std::string_view reason;  // why it means nothing here
};
const std::vector<IgnoredSessionVariable>& IgnoredSessionVariables();

using PropertyMap = std::map<std::string, std::string, std::less<>>;

struct JobProperties {
  int64_t max_interval_seconds = 10;
  int64_t max_batch_files = 256;
  int64_t max_batch_bytes = 10LL * 1024 * 1024 * 1024;
  int64_t max_concurrent_tasks = 1;  // file jobs into DUPLICATE tables only (task_window.h)
  std::string offset;                // start after this key; "" from the beginning
  bool has_offset = false;
  IngestionMode ingestion_mode = IngestionMode::kStreaming;
  LateFiles late_files = LateFiles::kLoad;
  int64_t reconcile_interval_seconds = 300;
  OnError on_error = OnError::kPause;
  double max_filter_ratio = 0;
  bool strict = true;
  int64_t wal_retention_warning_bytes = 1LL * 1024 * 1024 * 1024;
  std::string event_secret;  // s3.event_secret; "" none

  // The properties as the user gave them (normalized keys), for jobs().Properties and ALTER.
  PropertyMap given;

  static Result<JobProperties> Parse(const PropertyMap& values);
  // `given` of this object with `changes` applied, parsed again.
  Result<JobProperties> Merge(const PropertyMap& changes) const;
  // {"key":"value",...} of the given properties, in key order, but s3.event_secret (a secret,
  // which SHOW CREATE JOB shows): jobs().Properties and the jobs API.
  std::string ToJson() const;
};

// Parses `{"fileName":"key"}` (or a bare key / s3:// URI) into the key. A value starting
// with '{' is JSON (escapes such as \", \n and \u00e9 decoded; other members ignored); one that
// is not valid JSON, or has no string "fileName", is INVALID_ARGUMENT naming the property,
// the value and what is wrong. Anything else is the key itself, surrounding spaces trimmed.
Result<std::string> ParseOffset(std::string_view value);
// {"fileName":"key"}, which ParseOffset reads back as `key` (when it is valid UTF-8; see
// common/json.h).
std::string OffsetJson(std::string_view key);

// The property table, and the ignored session variables, as Markdown (for docs/jobs.md).
std::string JobPropertiesMarkdown();
std::string IgnoredSessionVariablesMarkdown();

}  // namespace millrace::job
