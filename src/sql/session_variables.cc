#include "sql/session_variables.h"

#include "sql/lexer.h"
#include "sql/mysql_errors.h"

namespace millrace::sql {

std::vector<SystemVariable> DefaultSystemVariables(std::string_view server_version,
                                                   std::string_view version_comment) {
  auto text = [](std::string name, std::string value) {
    return SystemVariable{std::move(name), std::move(value), false};
  };
  auto number = [](std::string name, std::string value) {
    return SystemVariable{std::move(name), std::move(value), true};
  };
  return {
      number("auto_increment_increment", "1"),
      number("autocommit", "1"),
      text("character_set_client", "utf8mb4"),
      text("character_set_connection", "utf8mb4"),
      text("character_set_database", "utf8mb4"),
      text("character_set_results", "utf8mb4"),
      text("character_set_server", "utf8mb4"),
      text("character_set_system", "utf8mb3"),
      text("collation_connection", "utf8mb4_general_ci"),
      text("collation_database", "utf8mb4_general_ci"),
      text("collation_server", "utf8mb4_general_ci"),
      text("default_storage_engine", "DuckDB"),
      text("have_query_cache", "NO"),
      text("init_connect", ""),
      // Doris's statement bounds, in seconds (Router::InterruptOverdue); 0 or less: none.
      number("insert_timeout", "14400"),
      number("interactive_timeout", "28800"),
      text("license", "Apache-2.0"),
      number("lower_case_table_names", "0"),
      number("max_allowed_packet", "67108864"),
      number("max_execution_time", "0"),
      number("net_buffer_length", "16384"),
      number("net_read_timeout", "60"),
      number("net_write_timeout", "60"),
      number("performance_schema", "0"),
      number("query_cache_size", "0"),
      number("query_timeout", "900"),
      text("query_cache_type", "OFF"),
      number("sql_auto_is_null", "0"),
      number("sql_select_limit", "18446744073709551615"),
      // Strings are DuckDB's: a backslash is an ordinary character.
      text("sql_mode", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES"),
      text("system_time_zone", "UTC"),
      text("time_zone", "SYSTEM"),
      text("transaction_isolation", "REPEATABLE-READ"),
      number("transaction_read_only", "0"),
      text("tx_isolation", "REPEATABLE-READ"),
      number("tx_read_only", "0"),
      text("version", std::string(server_version)),
      text("version_comment", std::string(version_comment)),
      text("version_compile_machine", "x86_64"),
      text("version_compile_os", "Linux"),
      number("wait_timeout", "28800"),
  };
}

SessionVariables::SessionVariables(const std::vector<SystemVariable>& defaults) {
  for (const SystemVariable& variable : defaults) {
    SystemVariable v = variable;
    v.name = ToLower(v.name);
    defaults_[v.name] = v;  // a later entry (a server override) replaces an earlier one
  }
  values_ = defaults_;
}

bool SessionVariables::Has(std::string_view name) const {
  return values_.contains(ToLower(name));
}

Result<SystemVariable> SessionVariables::Get(std::string_view name) const {
  auto it = values_.find(ToLower(name));
  if (it == values_.end()) return UnknownSystemVariableError(name);
  return it->second;
}

Status SessionVariables::Set(std::string_view name, std::optional<std::string> value) {
  const std::string key = ToLower(name);
  auto it = values_.find(key);
  if (it == values_.end()) return UnknownSystemVariableError(name);
  if (value && EqualsIgnoreCase(*value, "DEFAULT")) {
    it->second = defaults_.at(key);
    return Status::Ok();
  }
  if (value && it->second.numeric) {
    if (EqualsIgnoreCase(*value, "ON") || EqualsIgnoreCase(*value, "TRUE")) value = "1";
    if (EqualsIgnoreCase(*value, "OFF") || EqualsIgnoreCase(*value, "FALSE")) value = "0";
  }
  if (value && it->second.numeric) {
    const std::string& v = *value;
    const size_t digits = v.find_first_not_of("0123456789", !v.empty() && v[0] == '-' ? 1 : 0);
    if (v.empty() || digits != std::string::npos) return WrongValueForVariableError(name, v);
  }
  it->second.value = std::move(value);
  return Status::Ok();
}

std::vector<SystemVariable> SessionVariables::All() const {
  std::vector<SystemVariable> all;
  all.reserve(values_.size());
  for (const auto& [name, variable] : values_)
    all.push_back(variable);
  return all;
}

}  // namespace millrace::sql
