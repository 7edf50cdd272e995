// MySQL error numbers and SQLSTATEs for the outcomes of the SQL layer.
//
// Contract
// - ClassifyError maps any non-OK Status to the MySQL error a MySQL client expects, from the
//   status's detail and code, never from its message:
//   - a kMySql detail is the errno itself (the SQL layer's own errors, built by the functions
//     below), sent with SqlStateOf(errno);
//   - a kDuckDb detail maps by DuckDB's error type and reason (engine/duckdb_status.h): a
//     parser error -> 1064/42000, a missing table or view -> 1146/42S02, an existing one ->
//     1050/42S01, a missing schema -> 1049/42000, an existing one -> 1007/HY000, a missing
//     function -> 1305/42000, an unknown setting -> 1193/HY000, a missing column ->
//     1054/42S22, a duplicate key -> 1062/23000, a NULL in a NOT NULL column -> 1048/23000, a
//     conversion error -> 1366/HY000, out of range -> 1690/22003, an interrupt -> 1317/70100,
//     not implemented -> 1235/42000;
//   - anything else by StatusCode: UNAUTHENTICATED and PERMISSION_DENIED -> 1045/28000,
//     CANCELLED -> 1317/70100, RESOURCE_EXHAUSTED -> 1041/HY000, NOT_SUPPORTED -> 1235/42000,
//     and otherwise 1105/HY000 (ER_UNKNOWN_ERROR).
//   So a message that merely reads like DuckDB's or MySQL's ("Conversion Error: ...") without
//   the detail is not classified as one.
// - The functions below word the SQL layer's errors as MySQL words them and attach
//   ErrorDetail{kMySql, errno}.
// - Messages are never changed: the client sees DuckDB's or the SQL layer's text.
// - Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace millrace::sql {

struct MySqlError {
  uint16_t code;
  std::string_view sqlstate;  // five characters
};

inline constexpr uint16_t kErDbCreateExists = 1007;
inline constexpr uint16_t kErDbDropExists = 1008;
inline constexpr uint16_t kErConCount = 1040;
inline constexpr uint16_t kErOutOfResources = 1041;
inline constexpr uint16_t kErHandshake = 1043;
inline constexpr uint16_t kErDbAccessDenied = 1044;
inline constexpr uint16_t kErAccessDenied = 1045;
inline constexpr uint16_t kErNoDb = 1046;
inline constexpr uint16_t kErUnknownCommand = 1047;
inline constexpr uint16_t kErBadNull = 1048;
inline constexpr uint16_t kErBadDb = 1049;
inline constexpr uint16_t kErTableExists = 1050;
inline constexpr uint16_t kErBadField = 1054;
inline constexpr uint16_t kErDupEntry = 1062;
inline constexpr uint16_t kErParse = 1064;
inline constexpr uint16_t kErEmptyQuery = 1065;
inline constexpr uint16_t kErPasswordNoMatch = 1133;
inline constexpr uint16_t kErUnknown = 1105;
inline constexpr uint16_t kErNoSuchThread = 1094;
inline constexpr uint16_t kErKillDenied = 1095;
inline constexpr uint16_t kErNonexistingGrant = 1141;
inline constexpr uint16_t kErTableAccessDenied = 1142;
inline constexpr uint16_t kErNoSuchTable = 1146;
inline constexpr uint16_t kErNetPacketTooLarge = 1153;
inline constexpr uint16_t kErNetPacketsOutOfOrder = 1156;
inline constexpr uint16_t kErUnknownSystemVariable = 1193;
inline constexpr uint16_t kErTooManyUserConnections = 1203;
inline constexpr uint16_t kErQueryTimeout = 3024;
inline constexpr uint16_t kErWrongUsage = 1221;
inline constexpr uint16_t kErSpecificAccessDenied = 1227;
inline constexpr uint16_t kErWrongValueForVar = 1231;
inline constexpr uint16_t kErNotSupportedYet = 1235;
inline constexpr uint16_t kErUnknownStmtHandler = 1243;
inline constexpr uint16_t kErSpDoesNotExist = 1305;
inline constexpr uint16_t kErCannotUser = 1396;
inline constexpr uint16_t kErCantCreateUserWithGrant = 1410;
inline constexpr uint16_t kErStmtHasNoOpenCursor = 1421;
inline constexpr uint16_t kErOptionPreventsStatement = 1290;
inline constexpr uint16_t kErQueryInterrupted = 1317;
inline constexpr uint16_t kErTruncatedWrongValue = 1366;
inline constexpr uint16_t kErDataOutOfRange = 1690;
inline constexpr uint16_t kErPasswordFormat = 1827;
inline constexpr uint16_t kErMalformedPacket = 1835;

MySqlError ClassifyError(const Status& status);
// The SQLSTATE MySQL sends with `code`; "HY000" for a code not listed above.
std::string_view SqlStateOf(uint16_t code);

// Errors of the SQL layer, worded as MySQL words them.
Status UnknownDatabaseError(std::string_view name);
Status NoDatabaseSelectedError();
Status DatabaseExistsError(std::string_view name);
Status DatabaseMissingError(std::string_view name);
Status DatabaseAccessDeniedError(std::string_view name);
Status NoSuchTableError(std::string_view database, std::string_view table);
Status UnknownSystemVariableError(std::string_view name);
Status WrongValueForVariableError(std::string_view name, std::string_view value);
Status EmptyQueryError();
Status SyntaxError(std::string_view detail);
// 1094 (HY000) "Unknown thread id: <id>": KILL of no session.
Status UnknownThreadError(int64_t id);
// 1095 (HY000) "You are not owner of thread <id>": KILL of another user's session.
Status NotOwnerOfThreadError(uint32_t id);
// 1105 (HY000): a table definition that parses but cannot be made, and why ("key column c9 is
// not a column of the table").
Status TableDefinitionError(std::string_view detail);
// 1235 (42000) "Millrace does not support <what>: <why>".
Status NotSupportedError(std::string_view what, std::string_view why);

// Errors of users and privileges. `user`@`host` is the account as MySQL prints it; a
// privilege is named as Doris names it ("SELECT_PRIV", "ADMIN_PRIV,LOAD_PRIV").
//
// 1045 (28000) "Access denied for user 'u'@'h' (using password: YES)": a failed login.
Status AccessDeniedError(std::string_view user, std::string_view host, bool using_password);
// 1045 (28000) "Access denied for user 'u'@'h': too many failed logins from h; try again in N
// seconds": a login refused unchecked while its address waits (access/login_throttle.h).
Status LoginThrottledError(std::string_view user, std::string_view host, int64_t wait_seconds);
// 1044 (42000) "Access denied for user 'u'@'h' to database 'db'".
Status DatabaseAccessDeniedError(std::string_view user, std::string_view host,
                                 std::string_view database);
// 1142 (42000) "SELECT_PRIV command denied to user 'u'@'h' for table 'db.t'": MySQL's
// wording, with the missing privilege named as Doris names it.
Status TableAccessDeniedError(std::string_view privilege, std::string_view user,
                              std::string_view host, std::string_view database,
                              std::string_view table);
// 1227 (42000) "Access denied; you need (at least one of) the ADMIN_PRIV privilege(s) for this
// operation".
Status SpecificAccessDeniedError(std::string_view privileges);
// 1396 (HY000) "Operation CREATE USER failed for 'u'@'h'": the user exists (CREATE) or does not
// (ALTER, DROP); a `reason`, when given, follows after ": ".
Status CannotUserError(std::string_view operation, std::string_view user, std::string_view host,
                       std::string_view reason = "");
// 1133 (42000) "Can't find any matching row in the user table": SET PASSWORD for an unknown
// user.
Status PasswordNoMatchError();
// 1141 (42000) "There is no such grant defined for user 'u' on host 'h'".
Status NonexistingGrantError(std::string_view user, std::string_view host);
// 1410 (42000) "You are not allowed to create a user with GRANT": GRANT to an unknown user.
Status CantCreateUserWithGrantError();
// 1221 (HY000) "Incorrect usage of <a> and <b>".
Status WrongUsageError(std::string_view a, std::string_view b);
// 1290 (HY000) "The Millrace sandbox refuses <what>: <why>": a statement no user may run, root
// included (MySQL's "server is running with an option that prevents this statement").
Status SandboxError(std::string_view what, std::string_view why);
// 1827 (HY000) "The password hash doesn't have the expected format.": IDENTIFIED BY PASSWORD
// with something other than '*' and 40 hex digits.
Status PasswordFormatError();
// 1203 (42000) "User u already has more than 'max_user_connections' active connections".
Status TooManyUserConnectionsError(std::string_view user);
// 3024 (HY000) "Query execution was interrupted, maximum statement execution time exceeded",
// naming the session variable that bounded it (query_timeout, insert_timeout) and its value.
Status QueryTimeoutError(std::string_view variable, int64_t seconds);

}  // namespace millrace::sql
