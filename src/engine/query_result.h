// QueryResult and DataChunk: streamed, typed access to the rows of a query.
//
// Contract
// - A QueryResult is produced by Connection::Query or PreparedStatement::Execute and streams:
//   rows are produced by DuckDB chunk by chunk as Next() is called, so memory stays flat however
//   large the result. It must be consumed (or destroyed) before its Connection runs another
//   statement; destroying it early abandons the rest of the result.
// - Next() returns the next chunk, nullptr at the end, or the DuckDB error raised while
//   producing it.
// - A DataChunk is valid until the next call to Next() or the result's destruction.
// - Typed getters require a non-null cell of a compatible type: GetInt64 for any signed or
//   unsigned integer up to 64 bits, GetDouble for FLOAT/DOUBLE/DECIMAL, GetString for
//   VARCHAR/BLOB. GetText renders any type as DuckDB prints it (NULL renders as "NULL").
// - Not thread-safe: one thread at a time per result.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/types.h"

namespace millrace::engine {

class DataChunk {
 public:
  ~DataChunk();
  DataChunk(const DataChunk&) = delete;
  DataChunk& operator=(const DataChunk&) = delete;

  size_t size() const { return size_; }
  size_t column_count() const { return columns_.size(); }
  const ColumnType& type(size_t col) const { return columns_[col].type; }

  bool IsNull(size_t col, size_t row) const;
  bool GetBool(size_t col, size_t row) const;
  int64_t GetInt64(size_t col, size_t row) const;
  double GetDouble(size_t col, size_t row) const;
  std::string_view GetString(size_t col, size_t row) const;
  // Microseconds since the Unix epoch, for DATE (midnight) and every TIMESTAMP variant.
  int64_t GetEpochMicros(size_t col, size_t row) const;
  std::string GetText(size_t col, size_t row) const;

 private:
  friend class QueryResult;
  // One column of the chunk; the pointers are DuckDB handles (vector, data, validity mask,
  // logical type) kept opaque so this header needs no duckdb.h.
  struct Column {
    ColumnType type;
    void* vector;
    void* data;
    uint64_t* validity;  // nullptr: no NULLs in this chunk
    void* logical;       // duckdb_logical_type, owned
  };
  DataChunk(void* chunk, const std::vector<ColumnType>& types);

  void* chunk_;  // duckdb_data_chunk, owned
  size_t size_;
  std::vector<Column> columns_;
};

class QueryResult {
 public:
  ~QueryResult();
  QueryResult(const QueryResult&) = delete;
  QueryResult& operator=(const QueryResult&) = delete;

  size_t column_count() const { return names_.size(); }
  const std::string& column_name(size_t col) const { return names_[col]; }
  const ColumnType& column_type(size_t col) const { return types_[col]; }
  const std::vector<ColumnType>& column_types() const { return types_; }
  // Rows inserted, updated or deleted by a DML statement; 0 otherwise.
  int64_t rows_changed() const { return rows_changed_; }
  // True when the statement returns rows (SELECT, SHOW, RETURNING ...), false for DDL/DML.
  bool returns_rows() const { return returns_rows_; }

  Result<std::unique_ptr<DataChunk>> Next();

 private:
  friend class Connection;
  friend class PreparedStatement;
  struct Handle;
  explicit QueryResult(std::unique_ptr<Handle> handle);

  std::unique_ptr<Handle> handle_;
  std::vector<std::string> names_;
  std::vector<ColumnType> types_;
  int64_t rows_changed_ = 0;
  bool returns_rows_ = true;
};

}  // namespace millrace::engine
