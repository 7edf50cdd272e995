// Internal to the engine module: reading and rendering values held in DuckDB vectors.
#pragma once

#include <duckdb.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/types.h"

namespace millrace::engine {

ColumnType ColumnTypeOf(duckdb_logical_type logical);
// Any integer type up to 64 bits (unsigned 64-bit values above INT64_MAX wrap), and BOOLEAN.
int64_t IntegerAt(TypeId type, const void* data, size_t row);
double DecimalAsDouble(const ColumnType& type, const void* data, size_t row);
std::string_view StringAt(const void* data, size_t row);
int64_t EpochMicrosAt(TypeId type, const void* data, size_t row);
// Appends the value at `row` as DuckDB renders it; NULL renders as "NULL".
void FormatCell(duckdb_vector vector, duckdb_logical_type logical, size_t row, std::string* out);

}  // namespace millrace::engine
