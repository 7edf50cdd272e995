// ParamSpec: a parameter or property as every table of them declares it, in one shape: a job's
// properties (job/job_properties.h), S3()'s and local()'s parameters (load/file_params.h), and a
// change stream's (cdc/cdc_params.h). Parsers, validators, masking and the docs tables read it.
//
// Contract
// - A key names a spec when it equals its name or one of its aliases, in any case (FindParam).
// - `scopes` says which calls of a table take it (S3() and/or local()); a table without scopes
//   leaves the default, every scope.
// - A `secret` value is never shown: views, SHOW CREATE and logs mask it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace millrace {

enum class ParamType { kString, kBool, kInt, kChoice };

// ParamSpec::scopes of a parameter every call of its table takes.
inline constexpr uint8_t kEveryScope = 0xff;

struct ParamSpec {
  std::string_view name;
  ParamType type = ParamType::kString;
  std::string_view default_value;              // "" when none
  std::string_view description;                // the docs table's line
  uint8_t scopes = kEveryScope;                // the calls that take it (bits a table defines)
  std::vector<std::string_view> choices = {};  // for kChoice
  bool secret = false;
  // Other names it is known by (Doris's AWS_ENDPOINT for s3.endpoint).
  std::vector<std::string_view> aliases = {};
  // The values it takes, in words, where the type does not say it ("an integer from 1 to 100").
  std::string_view accepted = {};
  bool required = false;
};

// Whether `key` is `spec`'s name or one of its aliases, in any case.
bool ParamNamed(const ParamSpec& spec, std::string_view key);
// The spec of `specs` that `key` names and that a call of `scope` takes, or null.
const ParamSpec* FindParam(const std::vector<ParamSpec>& specs, std::string_view key,
                           uint8_t scope = kEveryScope);

}  // namespace millrace
