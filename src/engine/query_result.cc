#include "engine/query_result.h"

#include <duckdb.h>

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "engine/duckdb_status.h"
#include "engine/result_handle.h"
#include "engine/value_format.h"

namespace millrace::engine {

// ---------------------------------------------------------------------------------------------
// QueryResult

QueryResult::QueryResult(std::unique_ptr<Handle> handle) : handle_(std::move(handle)) {
  duckdb_result* result = &handle_->result;
  const idx_t count = duckdb_column_count(result);
  names_.reserve(count);
  types_.reserve(count);
  for (idx_t i = 0; i < count; ++i) {
    names_.emplace_back(duckdb_column_name(result, i));
    duckdb_logical_type logical = duckdb_column_logical_type(result, i);
    types_.push_back(ColumnTypeOf(logical));
    duckdb_destroy_logical_type(&logical);
  }
  const duckdb_result_type kind = duckdb_result_return_type(*result);
  returns_rows_ = kind == DUCKDB_RESULT_TYPE_QUERY_RESULT;
  // Only materialized CHANGED_ROWS results may be asked for their row count.
  if (kind == DUCKDB_RESULT_TYPE_CHANGED_ROWS && !duckdb_result_is_streaming(*result)) {
    rows_changed_ = static_cast<int64_t>(duckdb_rows_changed(result));
  }
}

QueryResult::~QueryResult() = default;

Result<std::unique_ptr<DataChunk>> QueryResult::Next() {
  duckdb_data_chunk chunk = duckdb_fetch_chunk(handle_->result);
  if (chunk == nullptr) {
    // End of the result, or an error raised while producing it.
    if (duckdb_result_error(&handle_->result) != nullptr) {
      return StatusFromResult(&handle_->result);
    }
    return std::unique_ptr<DataChunk>();
  }
  if (duckdb_data_chunk_get_size(chunk) == 0) {
    duckdb_destroy_data_chunk(&chunk);
    return std::unique_ptr<DataChunk>();
  }
  return std::unique_ptr<DataChunk>(new DataChunk(chunk, types_));
}

// ---------------------------------------------------------------------------------------------
// DataChunk

DataChunk::DataChunk(void* chunk, const std::vector<ColumnType>& types) : chunk_(chunk) {
  auto* c = static_cast<duckdb_data_chunk>(chunk);
  size_ = duckdb_data_chunk_get_size(c);
  columns_.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    duckdb_vector vec = duckdb_data_chunk_get_vector(c, i);
    columns_.push_back(Column{types[i], vec, duckdb_vector_get_data(vec),
                              duckdb_vector_get_validity(vec), duckdb_vector_get_column_type(vec)});
  }
}

DataChunk::~DataChunk() {
  for (Column& col : columns_) {
    auto logical = static_cast<duckdb_logical_type>(col.logical);
    duckdb_destroy_logical_type(&logical);
  }
  auto* c = static_cast<duckdb_data_chunk>(chunk_);
  duckdb_destroy_data_chunk(&c);
}

bool DataChunk::IsNull(size_t col, size_t row) const {
  const Column& c = columns_[col];
  return c.validity != nullptr && !duckdb_validity_row_is_valid(c.validity, row);
}

bool DataChunk::GetBool(size_t col, size_t row) const {
  return static_cast<const bool*>(columns_[col].data)[row];
}

int64_t DataChunk::GetInt64(size_t col, size_t row) const {
  const Column& c = columns_[col];
  return IntegerAt(c.type.id, c.data, row);
}

double DataChunk::GetDouble(size_t col, size_t row) const {
  const Column& c = columns_[col];
  switch (c.type.id) {
    case TypeId::kFloat:
      return static_cast<const float*>(c.data)[row];
    case TypeId::kDouble:
      return static_cast<const double*>(c.data)[row];
    case TypeId::kDecimal:
      return DecimalAsDouble(c.type, c.data, row);
    default:
      return static_cast<double>(IntegerAt(c.type.id, c.data, row));
  }
}

std::string_view DataChunk::GetString(size_t col, size_t row) const {
  return StringAt(columns_[col].data, row);
}

int64_t DataChunk::GetEpochMicros(size_t col, size_t row) const {
  const Column& c = columns_[col];
  return EpochMicrosAt(c.type.id, c.data, row);
}

std::string DataChunk::GetText(size_t col, size_t row) const {
  const Column& c = columns_[col];
  std::string out;
  FormatCell(static_cast<duckdb_vector>(c.vector), static_cast<duckdb_logical_type>(c.logical), row,
             &out);
  return out;
}

}  // namespace millrace::engine
