// ParamSpec: a parameter or property as every table of them declares it, in one shape: a job's
// properties (job/job_properties.h), S3()'s and local()'s parameters (load/file_params.h), and a
// change stream's (cdc/cdc_params.h). Parsing, validation, masking and the docs tables all read
// it.
//
// Contract
// - A key names a spec when it equals its name or one of its aliases, in any case (FindParam).
// - `scopes` says which calls of a table take it (S3() and/or local()); a table without scopes
//   leaves the default, every scope.
// - ParseParamValue reads a value as its spec's type within its bounds; anything else is
//   INVALID_ARGUMENT `"<key>" must be <AcceptedValues>, got '<value>'`, which callers prefix
//   with where it was given.
// - A `secret` value is never shown: views, SHOW CREATE and logs mask it (IsSecretParam).
// - ParamsMarkdown renders a table of specs for the docs; tests keep the docs holding it.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace {

enum class ParamType {
  kString,
  kBool,     // true/false, 1/0, on/off, yes/no (ParseBool)
  kInt,      // a decimal integer
  kNumber,   // a decimal number
  kSeconds,  // an integer of seconds, or with a unit: "10s", "5m", "1h"
  kBytes,    // an integer of bytes, or with a unit: "512K", "100M", "10G", "1T" (a "B" may follow)
  kChoice,   // one of `choices`, in any case
};

// ParamSpec::scopes of a parameter every call of its table takes.
inline constexpr uint8_t kEveryScope = 0xff;
inline constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();

struct ParamSpec {
  std::string_view name;
  ParamType type = ParamType::kString;
  std::string_view default_value;              // "" when none
  std::string_view description;                // the docs table's line
  uint8_t scopes = kEveryScope;                // the calls that take it (bits a table defines)
  std::vector<std::string_view> choices = {};  // for kChoice, lower-case
  bool secret = false;
  // Other names it is known by (Doris's AWS_ENDPOINT for s3.endpoint).
  std::vector<std::string_view> aliases = {};
  // The values it takes, in words, where the type and bounds do not say it (an offset's shape).
  std::string_view accepted = {};
  bool required = false;
  // Bounds of kInt, kNumber, kSeconds (in seconds) and kBytes (in bytes) values, inclusive.
  int64_t min = 0;
  int64_t max = kNoBound;
};

// A value read as its spec says. `text` is the value as given (kChoice: lower-cased);
// `integer` holds kInt, kSeconds (seconds) and kBytes (bytes), `number` kNumber, `boolean` kBool.
struct ParamValue {
  std::string text;
  int64_t integer = 0;
  double number = 0;
  bool boolean = false;
};

// Whether `key` is `spec`'s name or one of its aliases, in any case.
bool ParamNamed(const ParamSpec& spec, std::string_view key);
// The spec of `specs` that `key` names and that a call of `scope` takes, or null.
const ParamSpec* FindParam(const std::vector<ParamSpec>& specs, std::string_view key,
                           uint8_t scope = kEveryScope);
// The names of the specs of `specs` that a call of `scope` takes, comma-separated (for errors
// listing what is supported).
std::string ParamNames(const std::vector<ParamSpec>& specs, uint8_t scope = kEveryScope);
// Whether `key` names a secret of `specs`.
bool IsSecretParam(const std::vector<ParamSpec>& specs, std::string_view key);

// `key`: the name the value was given under, for the error (empty: the spec's name).
Result<ParamValue> ParseParamValue(const ParamSpec& spec, std::string_view value,
                                   std::string_view key = {});
// What `spec` accepts, in words: `accepted` if given, else from its type, bounds and choices.
std::string AcceptedValues(const ParamSpec& spec);

// The values of one call's parameters, by spec name: those given, each read by
// ParseParamValue, then the defaults of the others (Complete).
class ParamValues {
 public:
  // `value`, given under `key` (the spec's name or an alias), for `spec`; an error names `key`.
  Status Add(const ParamSpec& spec, std::string_view key, std::string_view value);
  // Fills in the defaults of the specs of `specs` that a call of `scope` takes and that were not
  // given; a required one not given is INVALID_ARGUMENT `"<name>" is required (<description>)`.
  Status Complete(const std::vector<ParamSpec>& specs, uint8_t scope = kEveryScope);

  bool Given(std::string_view name) const { return given_.contains(name); }
  // The value's text ("" when neither given nor defaulted).
  std::string Text(std::string_view name) const;
  bool Bool(std::string_view name) const;
  // nullopt when neither given nor defaulted.
  std::optional<int64_t> Int(std::string_view name) const;
  double Number(std::string_view name) const;

 private:
  const ParamValue* Find(std::string_view name) const;

  std::map<std::string, ParamValue, std::less<>> values_;
  std::set<std::string, std::less<>> given_;
};

// A column of ParamsMarkdown that says whether the calls of `scope` take a parameter.
struct ParamScopeColumn {
  uint8_t scope;
  std::string_view header;  // "S3()"
};
// | <name_header> | <scope columns> | default | accepted | meaning |, one row per spec: its name
// and aliases, "(required)" or its default, AcceptedValues and its description.
std::string ParamsMarkdown(const std::vector<ParamSpec>& specs, std::string_view name_header,
                           const std::vector<ParamScopeColumn>& scope_columns = {});

}  // namespace millrace
