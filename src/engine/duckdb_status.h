// DuckDB errors as Status: the edge where the library's error reports become ours.
//
// Contract
// - Every DuckDB failure becomes a Status whose message is DuckDB's own, verbatim (clients see
//   it), and whose detail is ErrorDetail{ErrorDomain::kDuckDb, duckdb_error_type,
//   DuckDbReason}. The StatusCode follows from the type and the reason alone (see database.h).
// - ReadDuckDbError is the only place in Millrace that reads DuckDB's error text. DuckDB's C
//   API gives an error's type for a failed result (duckdb_result_error_type) but only text for
//   a failed prepare or statement extraction (duckdb_prepare_error,
//   duckdb_extract_statements_error), and never says what an error is about (which kind of
//   catalog entry is missing, which constraint failed). Both are read from the message there,
//   once, so everything downstream branches on Status::detail(); when DuckDB rewords a
//   message, that function is the one to change (tests/engine/duckdb_status_test.cc pins the
//   wordings of the DuckDB version we build with).
// - Other layers include this header (from .cc files: it pulls in duckdb.h) to name DuckDB's
//   error types and the reasons below when they branch on a detail.
// - Thread-safety: pure functions.
#pragma once

#include <duckdb.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"

namespace millrace::engine {

// What a DuckDB error is about beyond its duckdb_error_type; the reason of a kDuckDb
// ErrorDetail. Values live only in memory (never stored), so they may be renumbered.
enum class DuckDbReason : int32_t {
  kNone = 0,             // nothing more than the type says
  kTableMissing,         // catalog: no table or view of that name
  kTableExists,          // catalog: a table or view of that name exists
  kSchemaMissing,        // catalog: no schema (a MySQL database) of that name
  kSchemaExists,         // catalog: a schema of that name exists
  kFunctionMissing,      // catalog: no function (scalar, aggregate, table, macro, ...) of that name
  kEntryMissing,         // catalog: no entry of another kind (type, sequence, index, ...)
  kEntryExists,          // catalog: an entry of another kind (or a function) exists
  kUnknownSetting,       // catalog: SET or current_setting of a setting DuckDB does not have
  kColumnMissing,        // binder: a referenced column is not in the FROM clause
  kNotNullViolated,      // constraint: NULL for a NOT NULL column
  kDuplicateKey,         // constraint: a PRIMARY KEY or UNIQUE key given twice
  kNoActiveTransaction,  // transaction: COMMIT or ROLLBACK outside a transaction
  kJsonTransformFailed,  // invalid input: a JSON value does not fit its column's type
};

// The detail of an error DuckDB reported as `message`: `type` when DuckDB gave one, otherwise
// the type named by the "<Type> Error: " prefix DuckDB writes on every message
// (DUCKDB_ERROR_INVALID when there is none); the reason read from the message. The only
// function in Millrace that reads DuckDB's error text.
ErrorDetail ReadDuckDbError(std::optional<duckdb_error_type> type, std::string_view message);

// An error DuckDB reported with its type (a failed duckdb_result).
Status StatusFromDuckDB(duckdb_error_type type, const char* message);
// An error DuckDB reported as text only (a failed prepare or statement extraction).
Status StatusFromDuckDBMessage(const char* message);
// The error held by a failed duckdb_result (the result is not destroyed).
Status StatusFromResult(duckdb_result* result);

// True when `status` is a DuckDB error of `type`.
inline bool IsDuckDbError(const Status& status, duckdb_error_type type) {
  return status.Is(ErrorDomain::kDuckDb, type);
}
// The reason of a DuckDB error; kNone for any other status.
DuckDbReason DuckDbReasonOf(const Status& status);

}  // namespace millrace::engine
