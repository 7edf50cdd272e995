#include "sql/mysql_errors.h"

#include <optional>

#include "engine/duckdb_status.h"

namespace millrace::sql {
namespace {

using engine::DuckDbReason;

struct SqlState {
  uint16_t code;
  std::string_view sqlstate;
};

// MySQL's SQLSTATE for each errno Millrace sends (MySQL's error reference).
constexpr SqlState kSqlStates[] = {
    {kErDbCreateExists, "HY000"},
    {kErDbDropExists, "HY000"},
    {kErConCount, "08004"},
    {kErOutOfResources, "HY000"},
    {kErHandshake, "08S01"},
    {kErDbAccessDenied, "42000"},
    {kErAccessDenied, "28000"},
    {kErNoDb, "3D000"},
    {kErUnknownCommand, "08S01"},
    {kErBadNull, "23000"},
    {kErBadDb, "42000"},
    {kErTableExists, "42S01"},
    {kErBadField, "42S22"},
    {kErDupEntry, "23000"},
    {kErParse, "42000"},
    {kErEmptyQuery, "42000"},
    {kErPasswordNoMatch, "42000"},
    {kErNonexistingGrant, "42000"},
    {kErTableAccessDenied, "42000"},
    {kErUnknown, "HY000"},
    {kErNoSuchTable, "42S02"},
    {kErNetPacketTooLarge, "08S01"},
    {kErNetPacketsOutOfOrder, "08S01"},
    {kErUnknownSystemVariable, "HY000"},
    {kErTooManyUserConnections, "42000"},
    {kErQueryTimeout, "HY000"},
    {kErWrongUsage, "HY000"},
    {kErSpecificAccessDenied, "42000"},
    {kErWrongValueForVar, "42000"},
    {kErNotSupportedYet, "42000"},
    {kErUnknownStmtHandler, "HY000"},
    {kErStmtHasNoOpenCursor, "HY000"},
    {kErSpDoesNotExist, "42000"},
    {kErCannotUser, "HY000"},
    {kErCantCreateUserWithGrant, "42000"},
    {kErOptionPreventsStatement, "HY000"},
    {kErQueryInterrupted, "70100"},
    {kErTruncatedWrongValue, "HY000"},
    {kErDataOutOfRange, "22003"},
    {kErPasswordFormat, "HY000"},
    {kErMalformedPacket, "HY000"},
};

// The MySQL errno of a DuckDB error, when MySQL has one for it. A reason is only ever set with
// its own type (engine/duckdb_status.h), so the reason decides first.
std::optional<uint16_t> DuckDbErrno(const ErrorDetail& detail) {
  switch (static_cast<DuckDbReason>(detail.reason)) {
    case DuckDbReason::kTableMissing:
      return kErNoSuchTable;
    case DuckDbReason::kTableExists:
      return kErTableExists;
    case DuckDbReason::kSchemaMissing:
      return kErBadDb;
    case DuckDbReason::kSchemaExists:
      return kErDbCreateExists;
    case DuckDbReason::kFunctionMissing:
      return kErSpDoesNotExist;
    case DuckDbReason::kUnknownSetting:
      return kErUnknownSystemVariable;
    case DuckDbReason::kColumnMissing:
      return kErBadField;
    case DuckDbReason::kDuplicateKey:
      return kErDupEntry;
    case DuckDbReason::kNotNullViolated:
      return kErBadNull;
    default:
      break;
  }
  switch (static_cast<duckdb_error_type>(detail.code)) {
    case DUCKDB_ERROR_PARSER:
    case DUCKDB_ERROR_SYNTAX:
      return kErParse;
    case DUCKDB_ERROR_CONVERSION:
      return kErTruncatedWrongValue;
    case DUCKDB_ERROR_OUT_OF_RANGE:
      return kErDataOutOfRange;
    case DUCKDB_ERROR_INTERRUPT:
      return kErQueryInterrupted;
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return kErNotSupportedYet;
    // DuckDB's own lock (engine::Database::LockDown) refused a file or a setting.
    case DUCKDB_ERROR_PERMISSION:
      return kErOptionPreventsStatement;
    default:
      return std::nullopt;
  }
}

MySqlError ErrorOf(uint16_t code) {
  return {code, SqlStateOf(code)};
}

// A SQL layer error: MySQL's wording, and the errno that goes with it.
Status WithErrno(Status status, uint16_t code) {
  return status.WithDetail({ErrorDomain::kMySql, code, 0});
}

}  // namespace

std::string_view SqlStateOf(uint16_t code) {
  for (const SqlState& s : kSqlStates) {
    if (s.code == code) return s.sqlstate;
  }
  return "HY000";
}

MySqlError ClassifyError(const Status& status) {
  const ErrorDetail& detail = status.detail();
  switch (detail.domain) {
    case ErrorDomain::kMySql:
      return ErrorOf(static_cast<uint16_t>(detail.code));
    case ErrorDomain::kDuckDb:
      if (std::optional<uint16_t> code = DuckDbErrno(detail)) return ErrorOf(*code);
      break;
    default:
      break;
  }
  switch (status.code()) {
    case StatusCode::kUnauthenticated:
      return ErrorOf(kErAccessDenied);
    // A refusal with no MySQL errno of its own (a file outside the local roots): a setting of
    // the server prevents the statement, which is MySQL's 1290.
    case StatusCode::kPermissionDenied:
      return ErrorOf(kErOptionPreventsStatement);
    case StatusCode::kCancelled:
      return ErrorOf(kErQueryInterrupted);
    case StatusCode::kResourceExhausted:
      return ErrorOf(kErOutOfResources);
    case StatusCode::kNotSupported:
      return ErrorOf(kErNotSupportedYet);
    default:
      return ErrorOf(kErUnknown);
  }
}

Status UnknownDatabaseError(std::string_view name) {
  return WithErrno(Status::NotFound("Unknown database '" + std::string(name) + "'"), kErBadDb);
}

Status NoDatabaseSelectedError() {
  return WithErrno(Status::FailedPrecondition("No database selected"), kErNoDb);
}

Status DatabaseExistsError(std::string_view name) {
  return WithErrno(
      Status::AlreadyExists("Can't create database '" + std::string(name) + "'; database exists"),
      kErDbCreateExists);
}

Status DatabaseMissingError(std::string_view name) {
  return WithErrno(
      Status::NotFound("Can't drop database '" + std::string(name) + "'; database doesn't exist"),
      kErDbDropExists);
}

Status UnknownThreadError(int64_t id) {
  return WithErrno(Status::NotFound("Unknown thread id: " + std::to_string(id)), kErNoSuchThread);
}

Status NotOwnerOfThreadError(uint32_t id) {
  return WithErrno(Status::PermissionDenied("You are not owner of thread " + std::to_string(id)),
                   kErKillDenied);
}

Status TableDefinitionError(std::string_view detail) {
  return WithErrno(Status::InvalidArgument(std::string(detail)), kErUnknown);
}

Status NotSupportedError(std::string_view what, std::string_view why) {
  return WithErrno(Status::NotSupported("Millrace does not support " + std::string(what) + ": " +
                                        std::string(why)),
                   kErNotSupportedYet);
}

Status DatabaseAccessDeniedError(std::string_view name) {
  return WithErrno(Status::PermissionDenied("Access denied for user 'root'@'%' to database '" +
                                            std::string(name) + "' (internal to Millrace)"),
                   kErDbAccessDenied);
}

Status NoSuchTableError(std::string_view database, std::string_view table) {
  return WithErrno(Status::NotFound("Table '" + std::string(database) + "." + std::string(table) +
                                    "' doesn't exist"),
                   kErNoSuchTable);
}

Status UnknownSystemVariableError(std::string_view name) {
  return WithErrno(Status::NotFound("Unknown system variable '" + std::string(name) + "'"),
                   kErUnknownSystemVariable);
}

Status WrongValueForVariableError(std::string_view name, std::string_view value) {
  return WithErrno(
      Status::InvalidArgument("Variable '" + std::string(name) +
                              "' can't be set to the value of '" + std::string(value) + "'"),
      kErWrongValueForVar);
}

Status EmptyQueryError() {
  return WithErrno(Status::InvalidArgument("Query was empty"), kErEmptyQuery);
}

Status SyntaxError(std::string_view detail) {
  return WithErrno(Status::InvalidArgument(
                       "You have an error in your SQL syntax; check the manual that corresponds "
                       "to your Millrace server version: " +
                       std::string(detail)),
                   kErParse);
}

// ---------------------------------------------------------------------------------------------
// Users and privileges

namespace {

std::string Account(std::string_view user, std::string_view host) {
  return "'" + std::string(user) + "'@'" + std::string(host) + "'";
}

}  // namespace

Status AccessDeniedError(std::string_view user, std::string_view host, bool using_password) {
  return WithErrno(
      Status::PermissionDenied("Access denied for user " + Account(user, host) +
                               " (using password: " + (using_password ? "YES" : "NO") + ")"),
      kErAccessDenied);
}

Status LoginThrottledError(std::string_view user, std::string_view host, int64_t wait_seconds) {
  return WithErrno(Status::ResourceExhausted("Access denied for user " + Account(user, host) +
                                             ": too many failed logins from " + std::string(host) +
                                             "; try again in " + std::to_string(wait_seconds) +
                                             (wait_seconds == 1 ? " second" : " seconds")),
                   kErAccessDenied);
}

Status DatabaseAccessDeniedError(std::string_view user, std::string_view host,
                                 std::string_view database) {
  return WithErrno(Status::PermissionDenied("Access denied for user " + Account(user, host) +
                                            " to database '" + std::string(database) + "'"),
                   kErDbAccessDenied);
}

Status TableAccessDeniedError(std::string_view privilege, std::string_view user,
                              std::string_view host, std::string_view database,
                              std::string_view table) {
  const std::string object =
      database.empty() ? std::string(table) : std::string(database) + "." + std::string(table);
  return WithErrno(Status::PermissionDenied(std::string(privilege) + " command denied to user " +
                                            Account(user, host) + " for table '" + object + "'"),
                   kErTableAccessDenied);
}

Status SpecificAccessDeniedError(std::string_view privileges) {
  return WithErrno(
      Status::PermissionDenied("Access denied; you need (at least one of) the " +
                               std::string(privileges) + " privilege(s) for this operation"),
      kErSpecificAccessDenied);
}

Status CannotUserError(std::string_view operation, std::string_view user, std::string_view host,
                       std::string_view reason) {
  std::string message =
      "Operation " + std::string(operation) + " failed for " + Account(user, host);
  if (!reason.empty()) message += ": " + std::string(reason);
  return WithErrno(Status::FailedPrecondition(std::move(message)), kErCannotUser);
}

Status PasswordNoMatchError() {
  return WithErrno(Status::NotFound("Can't find any matching row in the user table"),
                   kErPasswordNoMatch);
}

Status NonexistingGrantError(std::string_view user, std::string_view host) {
  return WithErrno(Status::NotFound("There is no such grant defined for user '" +
                                    std::string(user) + "' on host '" + std::string(host) + "'"),
                   kErNonexistingGrant);
}

Status CantCreateUserWithGrantError() {
  return WithErrno(Status::NotFound("You are not allowed to create a user with GRANT"),
                   kErCantCreateUserWithGrant);
}

Status WrongUsageError(std::string_view a, std::string_view b) {
  return WithErrno(
      Status::InvalidArgument("Incorrect usage of " + std::string(a) + " and " + std::string(b)),
      kErWrongUsage);
}

Status PasswordFormatError() {
  return WithErrno(Status::InvalidArgument("The password hash doesn't have the expected format."),
                   kErPasswordFormat);
}

Status TooManyUserConnectionsError(std::string_view user) {
  return WithErrno(Status::ResourceExhausted("User " + std::string(user) +
                                             " already has more than 'max_user_connections' "
                                             "active connections"),
                   kErTooManyUserConnections);
}

Status QueryTimeoutError(std::string_view variable, int64_t seconds) {
  return WithErrno(
      Status::DeadlineExceeded(
          "Query execution was interrupted, maximum statement execution time exceeded: " +
          std::string(variable) + " is " + std::to_string(seconds) + " s (SET " +
          std::string(variable) + " = <seconds> to allow more)"),
      kErQueryTimeout);
}

Status SandboxError(std::string_view what, std::string_view why) {
  return WithErrno(Status::PermissionDenied("The Millrace sandbox refuses " + std::string(what) +
                                            ": " + std::string(why)),
                   kErOptionPreventsStatement);
}

}  // namespace millrace::sql
