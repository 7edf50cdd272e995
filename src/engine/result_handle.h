// Internal to the engine module: the DuckDB result owned by a QueryResult.
#pragma once

#include <duckdb.h>

#include "engine/query_result.h"

namespace millrace::engine {

struct QueryResult::Handle {
  duckdb_result result{};
  ~Handle() { duckdb_destroy_result(&result); }
};

}  // namespace millrace::engine
