#include "engine/duckdb_status.h"

#include <string_view>

namespace millrace::engine {

Status StatusFromDuckDB(duckdb_error_type type, const char* message) {
  std::string msg = message != nullptr ? message : "unknown DuckDB error";
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
      return Status::InvalidArgument(std::move(msg));
    case DUCKDB_ERROR_OUT_OF_RANGE:
      return Status::OutOfRange(std::move(msg));
    case DUCKDB_ERROR_CATALOG:
    case DUCKDB_ERROR_DEPENDENCY:
      if (msg.find("already exists") != std::string::npos) {
        return Status::AlreadyExists(std::move(msg));
      }
      if (msg.find("does not exist") != std::string::npos) return Status::NotFound(std::move(msg));
      return Status::InvalidArgument(std::move(msg));
    case DUCKDB_ERROR_CONSTRAINT:
      return Status::FailedPrecondition(std::move(msg));
    case DUCKDB_ERROR_TRANSACTION:
      return Status::Aborted(std::move(msg));
    case DUCKDB_ERROR_INTERRUPT:
      return Status::Cancelled(std::move(msg));
    case DUCKDB_ERROR_IO:
    case DUCKDB_ERROR_HTTP:
      return Status::IoError(std::move(msg));
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return Status::ResourceExhausted(std::move(msg));
    case DUCKDB_ERROR_PERMISSION:
      return Status::PermissionDenied(std::move(msg));
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return Status::NotSupported(std::move(msg));
    default:
      return Status::Internal(std::move(msg));
  }
}

Status StatusFromResult(duckdb_result* result) {
  return StatusFromDuckDB(duckdb_result_error_type(result), duckdb_result_error(result));
}

}  // namespace millrace::engine
