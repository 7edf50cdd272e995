// Command-line flags declared once as a table: the parser, the environment fallback and the
// --help text all read the same FlagSpec list.
//
// Contract
// - Accepts "--name value" and "--name=value"; boolean flags take no value ("--path-style").
// - A flag absent from the command line takes its value from its environment variable (when
//   it names one), else from its default. Unknown flags and missing values are
//   INVALID_ARGUMENT errors naming the flag.
// - Arguments that do not start with "--" are positional and kept in order.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace {

struct FlagSpec {
  std::string name;           // without the leading "--"
  std::string env;            // environment variable consulted when the flag is absent; may be ""
  std::string default_value;  // used when neither is set; "" means unset
  std::string help;
  bool is_bool = false;  // a switch: present means "true"
  // May be given several times, each value kept (GetAll); its environment variable holds the
  // values separated by ':'.
  bool repeatable = false;
};

// Reads an environment variable; injectable so tests do not touch the process environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup ProcessEnv();

class ParsedFlags {
 public:
  // The flag's value, or nullopt when it is unset everywhere.
  std::optional<std::string> Get(std::string_view name) const;
  // The value or "" when unset.
  std::string GetOr(std::string_view name, std::string fallback) const;
  bool GetBool(std::string_view name) const;
  // Every value of a repeatable flag, in order (the environment's or the default when the
  // command line has none); empty when unset.
  std::vector<std::string> GetAll(std::string_view name) const;
  // Parses the flag as an integer in [min, max]; errors name the flag.
  Result<int64_t> GetInt(std::string_view name, int64_t min, int64_t max) const;
  // Parses the flag as a decimal number ("0.005", "5e-3") in [min, max]; errors name the flag.
  Result<double> GetDouble(std::string_view name, double min, double max) const;
  const std::vector<std::string>& positional() const { return positional_; }
  bool help() const { return help_; }

 private:
  friend Result<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                        const std::vector<FlagSpec>& specs, const EnvLookup& env);
  std::map<std::string, std::string, std::less<>> values_;
  std::map<std::string, std::vector<std::string>, std::less<>> all_;  // repeatable flags
  std::vector<std::string> positional_;
  bool help_ = false;
};

Result<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                               const std::vector<FlagSpec>& specs, const EnvLookup& env);

// Renders the specs as an aligned option list for --help.
std::string FlagsHelp(const std::vector<FlagSpec>& specs);

}  // namespace millrace
