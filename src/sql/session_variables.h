// MySQL system variables as a session sees them (@@version, @@autocommit, SHOW VARIABLES).
//
// Contract
// - A SessionVariables starts from a table of defaults (DefaultSystemVariables(), extended by
//   the server with its port, timeouts and packet size) and holds the session's own values.
// - Names are matched ASCII case-insensitively; Get and Set of an unknown name is the MySQL
//   error 1193 "Unknown system variable".
// - Values are text; `numeric` values are rendered as numbers in SELECT @@x, strings as
//   strings, and a null value (SET character_set_results = NULL) as NULL.
// - Not thread-safe: owned by one session.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace::sql {

struct SystemVariable {
  std::string name;                  // lower case
  std::optional<std::string> value;  // nullopt: NULL
  bool numeric = false;
};

// The variables MySQL clients and drivers read on connect, with Millrace's values.
std::vector<SystemVariable> DefaultSystemVariables(std::string_view server_version,
                                                   std::string_view version_comment);

class SessionVariables {
 public:
  explicit SessionVariables(const std::vector<SystemVariable>& defaults);

  Result<SystemVariable> Get(std::string_view name) const;
  // Sets a known variable; "DEFAULT" restores the default; for numeric variables ON/TRUE and
  // OFF/FALSE become 1 and 0.
  Status Set(std::string_view name, std::optional<std::string> value);
  bool Has(std::string_view name) const;
  // Every variable, ordered by name.
  std::vector<SystemVariable> All() const;

 private:
  std::map<std::string, SystemVariable, std::less<>> defaults_;
  std::map<std::string, SystemVariable, std::less<>> values_;
};

}  // namespace millrace::sql
