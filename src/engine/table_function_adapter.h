// Internal to the engine module: registers a TableFunction with DuckDB's C API.
#pragma once

#include <duckdb.h>

#include <memory>

#include "common/status.h"
#include "engine/table_function.h"

namespace millrace::engine {

Status RegisterTableFunctionOn(void* duckdb_conn, std::shared_ptr<TableFunction> function);

}  // namespace millrace::engine
