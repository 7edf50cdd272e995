#include "access/sandbox.h"

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>

#include "access/privilege.h"
#include "common/strings.h"
#include "sql/mysql_errors.h"

namespace millrace::access {
namespace {

using engine::StatementKind;

// Functions that take SQL text and parse, bind or run it, or that reveal secrets: through
// them a statement could reach what the checks of its own text never saw.
constexpr std::array<std::string_view, 5> kDeniedFunctions = {
    "json_serialize_sql", "json_serialize_plan", "json_deserialize_sql",
    "json_execute_serialized_sql", "which_secret"};

// Scalar functions that tell the host's settings (paths, memory, threads) or the versions of
// its libraries: for holders of ADMIN_PRIV (duckdb_settings() and the other metadata table
// functions are theirs already).
constexpr std::array<std::string_view, 4> kHostFactFunctions = {
    "current_setting", "version", "current_schemas", "get_block_size"};

// Table functions anyone may call (Millrace's own are added at Create).
constexpr std::array<std::string_view, 5> kTableFunctions = {"range", "generate_series", "unnest",
                                                             "json_each", "json_tree"};

// Window functions the parser knows without a catalog entry.
constexpr std::array<std::string_view, 12> kWindowFunctions = {
    "row_number", "rank", "dense_rank",  "percent_rank", "cume_dist", "ntile",
    "lag",        "lead", "first_value", "last_value",   "nth_value", "rank_dense"};

bool IsMetadataFunction(std::string_view name) {
  return name.starts_with("duckdb_") || name.starts_with("show_") || name == "pg_timezone_names" ||
         name == "test_all_types" || name == "test_vector_types";
}

}  // namespace

Result<std::unique_ptr<Sandbox>> Sandbox::Create(engine::Connection& conn,
                                                 std::vector<std::string> extra_table_functions,
                                                 std::vector<std::string> admin_table_functions) {
  MR_ASSIGN_OR_RETURN(auto rows, engine::QueryTextRows(
                                     conn,
                                     "SELECT DISTINCT lower(function_name) FROM duckdb_functions() "
                                     "WHERE function_type IN ('scalar', 'aggregate', 'macro')"));
  std::set<std::string, std::less<>> functions;
  for (auto& row : rows)
    functions.insert(std::move(row[0]));
  for (std::string_view name : kWindowFunctions)
    functions.emplace(name);
  for (std::string_view name : kDeniedFunctions)
    functions.erase(std::string(name));
  Names admin_tables = {"checkpoint"};
  for (const std::string& name : admin_table_functions)
    admin_tables.insert(ToLower(name));
  Names tables(kTableFunctions.begin(), kTableFunctions.end());
  for (const std::string& name : extra_table_functions) {
    if (!admin_tables.contains(ToLower(name))) tables.insert(ToLower(name));
  }
  MR_ASSIGN_OR_RETURN(auto table_rows,
                      engine::QueryTextRows(conn,
                                            "SELECT DISTINCT lower(function_name) FROM "
                                            "duckdb_functions() WHERE function_type IN ('table', "
                                            "'table_macro', 'pragma')"));
  Names duckdb_tables;
  for (auto& row : table_rows)
    duckdb_tables.insert(std::move(row[0]));
  return std::unique_ptr<Sandbox>(new Sandbox(std::move(functions), std::move(tables),
                                              std::move(admin_tables), std::move(duckdb_tables)));
}

Status Sandbox::CheckStart(std::string_view start) const {
  static const std::set<std::string, std::less<>> kAllowed = {
      "SELECT",      "WITH",          "FROM",         "VALUES",     "TABLE",     "PIVOT",
      "UNPIVOT",     "INSERT",        "UPDATE",       "DELETE",     "TRUNCATE",  "BEGIN",
      "START",       "COMMIT",        "END",          "ROLLBACK",   "ABORT",     "CALL",
      "CHECKPOINT",  "DESCRIBE",      "DESC",         "SHOW",       "SUMMARIZE", "CREATE TABLE",
      "CREATE VIEW", "CREATE SCHEMA", "CREATE INDEX", "DROP TABLE", "DROP VIEW", "DROP SCHEMA",
      "DROP INDEX",  "ALTER TABLE",   "ALTER VIEW"};
  static const std::map<std::string, StatementKind, std::less<>> kKinds = {
      {"COPY", StatementKind::kCopy},       {"EXPORT", StatementKind::kExport},
      {"IMPORT", StatementKind::kExport},   {"ATTACH", StatementKind::kAttach},
      {"DETACH", StatementKind::kDetach},   {"INSTALL", StatementKind::kLoad},
      {"LOAD", StatementKind::kLoad},       {"SET", StatementKind::kSet},
      {"RESET", StatementKind::kSet},       {"PRAGMA", StatementKind::kPragma},
      {"VACUUM", StatementKind::kVacuum},   {"ANALYZE", StatementKind::kAnalyze},
      {"PREPARE", StatementKind::kPrepare}, {"EXECUTE", StatementKind::kExecute}};
  if (start.empty() || kAllowed.contains(start)) return Status::Ok();
  const std::string_view verb = start.substr(0, start.find(' '));
  if (auto it = kKinds.find(verb); it != kKinds.end()) return CheckKind(it->second);
  if (verb == "CREATE" || verb == "DROP" || verb == "ALTER") {
    return sql::SandboxError(start,
                             "only tables, views, databases and indexes can be created, "
                             "altered or dropped");
  }
  // Anything else is for DuckDB's parser to judge (a typo is a syntax error); what it parses is
  // checked by its kind before it binds anything that could read a file.
  return Status::Ok();
}

Status Sandbox::CheckCalledNames(const std::vector<std::string>& names, bool admin) const {
  std::vector<std::string> table_functions;
  for (const std::string& name : names) {
    if (duckdb_table_functions_.contains(name)) table_functions.push_back(name);
  }
  return CheckFunctions({}, table_functions, admin, false);
}

Status Sandbox::CheckKind(StatementKind kind) const {
  switch (kind) {
    case StatementKind::kSelect:
    case StatementKind::kInsert:
    case StatementKind::kUpdate:
    case StatementKind::kDelete:
    case StatementKind::kCreate:
    case StatementKind::kAlter:
    case StatementKind::kDrop:
    case StatementKind::kTransaction:
    // CALL runs a table function, which the function allowlist then judges: CHECKPOINT is
    // CALL checkpoint() to DuckDB.
    case StatementKind::kCall:
      return Status::Ok();
    case StatementKind::kCopy:
    case StatementKind::kExport:
    case StatementKind::kAttach:
    case StatementKind::kDetach:
      return sql::SandboxError(engine::StatementKindName(kind),
                               "it reads or writes files or databases outside Millrace");
    case StatementKind::kLoad:
      return sql::SandboxError(engine::StatementKindName(kind), "extensions stay off");
    case StatementKind::kSet:
    case StatementKind::kVariableSet:
      return sql::SandboxError(engine::StatementKindName(kind),
                               "the engine's settings are fixed at start");
    default:
      return sql::SandboxError(engine::StatementKindName(kind),
                               "Millrace runs queries, DML and DDL on tables, views and "
                               "databases only");
  }
}

Status Sandbox::CheckPlan(const engine::PlanFacts& plan) const {
  static const std::set<std::string, std::less<>> kObjects = {"TABLE", "VIEW", "SCHEMA", "INDEX"};
  if (!plan.target) return Status::Ok();
  const engine::PlanTarget& target = *plan.target;
  if (target.writes_rows()) return Status::Ok();
  if ((target.operation == "CREATE" || target.operation == "DROP" || target.operation == "ALTER") &&
      kObjects.contains(target.kind)) {
    return Status::Ok();
  }
  return sql::SandboxError(target.operation + " " + target.kind,
                           "only tables, views, databases and indexes can be created, altered "
                           "or dropped");
}

Status Sandbox::CheckFunctions(const std::vector<std::string>& functions,
                               const std::vector<std::string>& table_functions, bool admin,
                               bool bound, bool metadata) const {
  for (const std::string& name : table_functions) {
    if (table_functions_.contains(name)) continue;
    if (admin_table_functions_.contains(name)) {
      if (admin) continue;
      return sql::SpecificAccessDeniedError(PrivilegeName(Privilege::kAdmin));
    }
    if (IsMetadataFunction(name)) {
      if (admin || metadata) continue;
      return sql::SandboxError(name + "()",
                               "DuckDB's metadata lists every database and needs ADMIN_PRIV; use "
                               "SHOW DATABASES, SHOW TABLES, DESC or information_schema");
    }
    if (name == "force_checkpoint") {
      return sql::SandboxError("FORCE CHECKPOINT",
                               "it aborts the open transactions of running jobs; use CHECKPOINT");
    }
    return sql::SandboxError("the table function " + name + "()",
                             "it is not one Millrace allows (files are read with S3() and "
                             "local(), or by a streaming job)");
  }
  for (const std::string& name : functions) {
    if (!admin && std::find(kHostFactFunctions.begin(), kHostFactFunctions.end(), name) !=
                      kHostFactFunctions.end()) {
      return sql::SandboxError("the function " + name + "()",
                               "it tells the host's settings or library versions, which need "
                               "ADMIN_PRIV");
    }
    if (functions_.contains(name)) continue;
    const bool denied =
        std::find(kDeniedFunctions.begin(), kDeniedFunctions.end(), name) != kDeniedFunctions.end();
    if (!bound && !denied) continue;
    return sql::SandboxError("the function " + name + "()",
                             "it is not one of DuckDB's built-in functions Millrace allows");
  }
  return Status::Ok();
}

}  // namespace millrace::access
