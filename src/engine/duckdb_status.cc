#include "engine/duckdb_status.h"

#include <string>

namespace millrace::engine {
namespace {

// DuckDB's names of its error types, as its messages begin: "<name> Error: ..." (ErrorData's
// final message; the names are Exception::ExceptionTypeToString's in DuckDB's
// src/common/exception.cpp). Prefixes are matched whole, so "Invalid" and "Invalid Input" do
// not shadow each other.
struct TypeName {
  std::string_view name;
  duckdb_error_type type;
};
constexpr TypeName kTypeNames[] = {
    {"Invalid", DUCKDB_ERROR_INVALID},
    {"Out of Range", DUCKDB_ERROR_OUT_OF_RANGE},
    {"Conversion", DUCKDB_ERROR_CONVERSION},
    {"Unknown Type", DUCKDB_ERROR_UNKNOWN_TYPE},
    {"Decimal", DUCKDB_ERROR_DECIMAL},
    {"Mismatch Type", DUCKDB_ERROR_MISMATCH_TYPE},
    {"Divide by Zero", DUCKDB_ERROR_DIVIDE_BY_ZERO},
    {"Object Size", DUCKDB_ERROR_OBJECT_SIZE},
    {"Invalid type", DUCKDB_ERROR_INVALID_TYPE},
    {"Serialization", DUCKDB_ERROR_SERIALIZATION},
    {"TransactionContext", DUCKDB_ERROR_TRANSACTION},
    {"Not implemented", DUCKDB_ERROR_NOT_IMPLEMENTED},
    {"Expression", DUCKDB_ERROR_EXPRESSION},
    {"Catalog", DUCKDB_ERROR_CATALOG},
    {"Parser", DUCKDB_ERROR_PARSER},
    {"Planner", DUCKDB_ERROR_PLANNER},
    {"Scheduler", DUCKDB_ERROR_SCHEDULER},
    {"Executor", DUCKDB_ERROR_EXECUTOR},
    {"Constraint", DUCKDB_ERROR_CONSTRAINT},
    {"Index", DUCKDB_ERROR_INDEX},
    {"Stat", DUCKDB_ERROR_STAT},
    {"Connection", DUCKDB_ERROR_CONNECTION},
    {"Syntax", DUCKDB_ERROR_SYNTAX},
    {"Settings", DUCKDB_ERROR_SETTINGS},
    {"Binder", DUCKDB_ERROR_BINDER},
    {"Optimizer", DUCKDB_ERROR_OPTIMIZER},
    {"NullPointer", DUCKDB_ERROR_NULL_POINTER},
    {"IO", DUCKDB_ERROR_IO},
    {"INTERRUPT", DUCKDB_ERROR_INTERRUPT},
    {"FATAL", DUCKDB_ERROR_FATAL},
    {"INTERNAL", DUCKDB_ERROR_INTERNAL},
    {"Invalid Input", DUCKDB_ERROR_INVALID_INPUT},
    {"Out of Memory", DUCKDB_ERROR_OUT_OF_MEMORY},
    {"Permission", DUCKDB_ERROR_PERMISSION},
    {"Parameter Not Resolved", DUCKDB_ERROR_PARAMETER_NOT_RESOLVED},
    {"Parameter Not Allowed", DUCKDB_ERROR_PARAMETER_NOT_ALLOWED},
    {"Dependency", DUCKDB_ERROR_DEPENDENCY},
    {"Missing Extension", DUCKDB_ERROR_MISSING_EXTENSION},
    {"HTTP", DUCKDB_ERROR_HTTP},
    {"Extension Autoloading", DUCKDB_ERROR_AUTOLOAD},
    {"Sequence", DUCKDB_ERROR_SEQUENCE},
    {"Invalid Configuration", DUCKDB_INVALID_CONFIGURATION},
};

constexpr std::string_view kErrorWord = " Error: ";

// The type named by the message's prefix, and the message without it.
std::optional<duckdb_error_type> TakeTypePrefix(std::string_view* message) {
  for (const TypeName& t : kTypeNames) {
    if (message->starts_with(t.name) && message->substr(t.name.size()).starts_with(kErrorWord)) {
      message->remove_prefix(t.name.size() + kErrorWord.size());
      return t.type;
    }
  }
  return std::nullopt;
}

// A catalog error about an entry: "<Kind> with name <name> does not exist!" (DuckDB's
// CatalogException::MissingEntry, with " at version ..." or a "Did you mean" line after),
// "<Kind> with name "<name>" is not in the catalog, ..." (an extension would have it) and
// "<Kind> with name "<name>" already exists!" (EntryAlreadyExists). `line` is the first line.
DuckDbReason CatalogEntryReason(std::string_view line) {
  const size_t with = line.find(" with name ");
  if (with == std::string_view::npos) return DuckDbReason::kNone;
  const std::string_view kind = line.substr(0, with);
  const bool table = kind == "Table" || kind == "View";
  const bool schema = kind == "Schema";
  // "already exists!" ends the line, so a missing table whose name contains the words is
  // still missing; it is checked first for an existing one whose name says "does not exist".
  if (line.ends_with(" already exists!")) {
    if (table) return DuckDbReason::kTableExists;
    if (schema) return DuckDbReason::kSchemaExists;
    return DuckDbReason::kEntryExists;
  }
  if (line.find(" does not exist", with) != std::string_view::npos ||
      line.find(" is not in the catalog", with) != std::string_view::npos) {
    if (table) return DuckDbReason::kTableMissing;
    if (schema) return DuckDbReason::kSchemaMissing;
    if (kind.ends_with("Function")) return DuckDbReason::kFunctionMissing;
    return DuckDbReason::kEntryMissing;
  }
  return DuckDbReason::kNone;
}

// What the error is about, from its type and its message (the prefix removed).
DuckDbReason ReadReason(duckdb_error_type type, std::string_view body) {
  const std::string_view line = body.substr(0, body.find('\n'));
  switch (type) {
    case DUCKDB_ERROR_CATALOG:
      if (line.starts_with("unrecognized configuration parameter ")) {
        return DuckDbReason::kUnknownSetting;
      }
      return CatalogEntryReason(line);
    case DUCKDB_ERROR_BINDER:
      if (line.starts_with("Referenced column ") && line.find(" not found") != line.npos) {
        return DuckDbReason::kColumnMissing;
      }
      return DuckDbReason::kNone;
    case DUCKDB_ERROR_CONSTRAINT:
      if (line.starts_with("NOT NULL constraint failed")) return DuckDbReason::kNotNullViolated;
      // Against stored rows ("Duplicate key "id: 1" violates primary key constraint.") and
      // within one statement ("PRIMARY KEY or UNIQUE constraint violation: duplicate key").
      if (line.starts_with("Duplicate key ") ||
          line.starts_with("PRIMARY KEY or UNIQUE constraint violation: duplicate key")) {
        return DuckDbReason::kDuplicateKey;
      }
      return DuckDbReason::kNone;
    case DUCKDB_ERROR_TRANSACTION:
      if (line == "cannot commit - no transaction is active" ||
          line == "cannot rollback - no transaction is active") {
        return DuckDbReason::kNoActiveTransaction;
      }
      return DuckDbReason::kNone;
    case DUCKDB_ERROR_INVALID_INPUT:
      if (line.starts_with("JSON transform error in file ")) {
        return DuckDbReason::kJsonTransformFailed;
      }
      return DuckDbReason::kNone;
    default:
      return DuckDbReason::kNone;
  }
}

// The StatusCode of a DuckDB error: from its detail, never its text.
StatusCode CodeFor(duckdb_error_type type, DuckDbReason reason) {
  switch (type) {
    case DUCKDB_ERROR_PARSER:
    case DUCKDB_ERROR_SYNTAX:
    case DUCKDB_ERROR_BINDER:
    case DUCKDB_ERROR_CONVERSION:
    case DUCKDB_ERROR_INVALID_INPUT:
    case DUCKDB_ERROR_MISMATCH_TYPE:
    case DUCKDB_ERROR_INVALID_TYPE:
    case DUCKDB_ERROR_DIVIDE_BY_ZERO:
    case DUCKDB_ERROR_PARAMETER_NOT_RESOLVED:
    case DUCKDB_ERROR_PARAMETER_NOT_ALLOWED:
    case DUCKDB_ERROR_SETTINGS:
      return StatusCode::kInvalidArgument;
    case DUCKDB_ERROR_OUT_OF_RANGE:
      return StatusCode::kOutOfRange;
    case DUCKDB_ERROR_CATALOG:
    case DUCKDB_ERROR_DEPENDENCY:
      switch (reason) {
        case DuckDbReason::kTableMissing:
        case DuckDbReason::kSchemaMissing:
        case DuckDbReason::kFunctionMissing:
        case DuckDbReason::kEntryMissing:
          return StatusCode::kNotFound;
        case DuckDbReason::kTableExists:
        case DuckDbReason::kSchemaExists:
        case DuckDbReason::kEntryExists:
          return StatusCode::kAlreadyExists;
        default:
          return StatusCode::kInvalidArgument;
      }
    case DUCKDB_ERROR_CONSTRAINT:
      return StatusCode::kFailedPrecondition;
    case DUCKDB_ERROR_TRANSACTION:
      return StatusCode::kAborted;
    case DUCKDB_ERROR_INTERRUPT:
      return StatusCode::kCancelled;
    case DUCKDB_ERROR_IO:
    case DUCKDB_ERROR_HTTP:
      return StatusCode::kIoError;
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return StatusCode::kResourceExhausted;
    case DUCKDB_ERROR_PERMISSION:
      return StatusCode::kPermissionDenied;
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return StatusCode::kNotSupported;
    default:
      return StatusCode::kInternal;
  }
}

Status StatusFromDetail(std::optional<duckdb_error_type> type, const char* message) {
  std::string msg = message != nullptr ? message : "unknown DuckDB error";
  const ErrorDetail detail = ReadDuckDbError(type, msg);
  return Status(CodeFor(static_cast<duckdb_error_type>(detail.code),
                        static_cast<DuckDbReason>(detail.reason)),
                std::move(msg))
      .WithDetail(detail);
}

}  // namespace

ErrorDetail ReadDuckDbError(std::optional<duckdb_error_type> type, std::string_view message) {
  std::string_view body = message;
  const std::optional<duckdb_error_type> named = TakeTypePrefix(&body);
  const duckdb_error_type t = type.value_or(named.value_or(DUCKDB_ERROR_INVALID));
  return ErrorDetail{ErrorDomain::kDuckDb, static_cast<int32_t>(t),
                     static_cast<int32_t>(ReadReason(t, body))};
}

Status StatusFromDuckDB(duckdb_error_type type, const char* message) {
  return StatusFromDetail(type, message);
}

Status StatusFromDuckDBMessage(const char* message) {
  return StatusFromDetail(std::nullopt, message);
}

Status StatusFromResult(duckdb_result* result) {
  return StatusFromDuckDB(duckdb_result_error_type(result), duckdb_result_error(result));
}

DuckDbReason DuckDbReasonOf(const Status& status) {
  if (status.detail().domain != ErrorDomain::kDuckDb) return DuckDbReason::kNone;
  return static_cast<DuckDbReason>(status.detail().reason);
}

}  // namespace millrace::engine
