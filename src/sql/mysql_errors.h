// MySQL error numbers and SQLSTATEs for the outcomes of the SQL layer.
//
// Contract
// - ClassifyError maps any non-OK Status to the MySQL error a MySQL client expects: DuckDB's
//   messages are recognized by their prefixes ("Parser Error" -> 1064/42000, "Catalog Error:
//   Table with name t does not exist" -> 1146/42S02, ...), and the SQL layer's own errors are
//   built by the functions below with MySQL's own message texts, which ClassifyError
//   recognizes the same way. Anything else is 1105/HY000 (ER_UNKNOWN_ERROR).
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
inline constexpr uint16_t kErUnknown = 1105;
inline constexpr uint16_t kErNoSuchTable = 1146;
inline constexpr uint16_t kErNetPacketTooLarge = 1153;
inline constexpr uint16_t kErNetPacketsOutOfOrder = 1156;
inline constexpr uint16_t kErUnknownSystemVariable = 1193;
inline constexpr uint16_t kErWrongValueForVar = 1231;
inline constexpr uint16_t kErNotSupportedYet = 1235;
inline constexpr uint16_t kErSpDoesNotExist = 1305;
inline constexpr uint16_t kErQueryInterrupted = 1317;
inline constexpr uint16_t kErTruncatedWrongValue = 1366;
inline constexpr uint16_t kErDataOutOfRange = 1690;

MySqlError ClassifyError(const Status& status);

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

}  // namespace millrace::sql
