// Internal to the engine module: turning DuckDB's error reports into Status.
#pragma once

#include <duckdb.h>

#include <string>

#include "common/status.h"

namespace millrace::engine {

Status StatusFromDuckDB(duckdb_error_type type, const char* message);
// The error held by a failed duckdb_result (the result is not destroyed).
Status StatusFromResult(duckdb_result* result);

}  // namespace millrace::engine
