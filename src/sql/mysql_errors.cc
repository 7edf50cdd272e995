#include "sql/mysql_errors.h"

#include <array>

namespace millrace::sql {
namespace {

// A message pattern: `prefix` at the start and, when set, `contains` anywhere.
struct Rule {
  std::string_view prefix;
  std::string_view contains;
  MySqlError error;
};

// First match wins: the specific catalog rules precede the generic prefixes.
constexpr std::array kRules = {
    Rule{"Parser Error", "", {kErParse, "42000"}},
    Rule{"You have an error in your SQL syntax", "", {kErParse, "42000"}},
    Rule{"Unknown database '", "", {kErBadDb, "42000"}},
    Rule{"No database selected", "", {kErNoDb, "3D000"}},
    Rule{"Can't create database '", "", {kErDbCreateExists, "HY000"}},
    Rule{"Can't drop database '", "", {kErDbDropExists, "HY000"}},
    Rule{"Access denied for user", " to database ", {kErDbAccessDenied, "42000"}},
    Rule{"Access denied for user", "", {kErAccessDenied, "28000"}},
    Rule{"Table '", "doesn't exist", {kErNoSuchTable, "42S02"}},
    Rule{"Unknown system variable '", "", {kErUnknownSystemVariable, "HY000"}},
    Rule{"Query was empty", "", {kErEmptyQuery, "42000"}},
    Rule{"Variable '", "can't be set to the value of", {kErWrongValueForVar, "42000"}},
    Rule{"Catalog Error: Table with name", "does not exist", {kErNoSuchTable, "42S02"}},
    Rule{"Catalog Error: View with name", "does not exist", {kErNoSuchTable, "42S02"}},
    Rule{"Catalog Error: Table or view with name", "does not exist", {kErNoSuchTable, "42S02"}},
    Rule{"Catalog Error: Table with name", "already exists", {kErTableExists, "42S01"}},
    Rule{"Catalog Error: View with name", "already exists", {kErTableExists, "42S01"}},
    Rule{"Catalog Error: Schema with name", "does not exist", {kErBadDb, "42000"}},
    Rule{"Catalog Error: Schema with name", "already exists", {kErDbCreateExists, "HY000"}},
    Rule{"Catalog Error:", "Function with name", {kErSpDoesNotExist, "42000"}},
    Rule{"Catalog Error: unrecognized configuration parameter",
         "",
         {kErUnknownSystemVariable, "HY000"}},
    Rule{"Binder Error: Referenced column", "not found", {kErBadField, "42S22"}},
    // "Duplicate key ... violates primary key constraint" (against stored rows) and
    // "PRIMARY KEY or UNIQUE constraint violation: duplicate key" (within one statement).
    Rule{"Constraint Error:", "uplicate key", {kErDupEntry, "23000"}},
    Rule{"Constraint Error: NOT NULL constraint failed", "", {kErBadNull, "23000"}},
    Rule{"Conversion Error", "", {kErTruncatedWrongValue, "HY000"}},
    Rule{"Out of Range Error", "", {kErDataOutOfRange, "22003"}},
    Rule{"INTERRUPT Error", "", {kErQueryInterrupted, "70100"}},
    Rule{"Interrupt Error", "", {kErQueryInterrupted, "70100"}},
    Rule{"Not implemented Error", "", {kErNotSupportedYet, "42000"}},
};

}  // namespace

MySqlError ClassifyError(const Status& status) {
  const std::string& msg = status.message();
  for (const Rule& rule : kRules) {
    if (msg.compare(0, rule.prefix.size(), rule.prefix) != 0) continue;
    if (!rule.contains.empty() && msg.find(rule.contains) == std::string::npos) continue;
    return rule.error;
  }
  switch (status.code()) {
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return {kErAccessDenied, "28000"};
    case StatusCode::kCancelled:
      return {kErQueryInterrupted, "70100"};
    case StatusCode::kResourceExhausted:
      return {kErOutOfResources, "HY000"};
    case StatusCode::kNotSupported:
      return {kErNotSupportedYet, "42000"};
    default:
      return {kErUnknown, "HY000"};
  }
}

Status UnknownDatabaseError(std::string_view name) {
  return Status::NotFound("Unknown database '" + std::string(name) + "'");
}

Status NoDatabaseSelectedError() {
  return Status::FailedPrecondition("No database selected");
}

Status DatabaseExistsError(std::string_view name) {
  return Status::AlreadyExists("Can't create database '" + std::string(name) +
                               "'; database exists");
}

Status DatabaseMissingError(std::string_view name) {
  return Status::NotFound("Can't drop database '" + std::string(name) +
                          "'; database doesn't exist");
}

Status DatabaseAccessDeniedError(std::string_view name) {
  return Status::PermissionDenied("Access denied for user 'root'@'%' to database '" +
                                  std::string(name) + "' (internal to Millrace)");
}

Status NoSuchTableError(std::string_view database, std::string_view table) {
  return Status::NotFound("Table '" + std::string(database) + "." + std::string(table) +
                          "' doesn't exist");
}

Status UnknownSystemVariableError(std::string_view name) {
  return Status::NotFound("Unknown system variable '" + std::string(name) + "'");
}

Status WrongValueForVariableError(std::string_view name, std::string_view value) {
  return Status::InvalidArgument("Variable '" + std::string(name) +
                                 "' can't be set to the value of '" + std::string(value) + "'");
}

Status EmptyQueryError() {
  return Status::InvalidArgument("Query was empty");
}

Status SyntaxError(std::string_view detail) {
  return Status::InvalidArgument(
      "You have an error in your SQL syntax; check the manual that corresponds to your "
      "Millrace server version: " +
      std::string(detail));
}

}  // namespace millrace::sql
