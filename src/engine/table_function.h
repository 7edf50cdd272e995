// TableFunction: a C++ table function callable from SQL, e.g. jobs(type := 'insert').
//
// Contract
// - Parameters are named and VARCHAR-typed (the SQL router turns Doris `fn("k" = "v")` into
//   `fn(k := 'v')`). Bind receives the parameters given, validates them and declares the
//   result columns; an error from Bind or Scan becomes the statement's error, message intact.
// - Scan is called once per execution and returns a TableScan that fills output chunks until
//   it returns 0 rows. DuckDB applies WHERE, ORDER BY, LIMIT on top, like on any table.
// - A TableFunction may be called from many connections at once: Bind and Scan must be
//   thread-safe; each TableScan is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/types.h"

namespace millrace::engine {

struct ColumnDef {
  std::string name;
  TypeId type;  // one of: kBoolean, kBigInt, kDouble, kVarchar, kTimestamp
};

class TableFunctionArgs {
 public:
  explicit TableFunctionArgs(std::map<std::string, std::string, std::less<>> values,
                             uint64_t connection_id = 0)
      : values_(std::move(values)), connection_id_(connection_id) {}
  std::optional<std::string> Get(std::string_view name) const;
  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }
  // The DuckDB connection the call runs on (Connection::id()), so a function can tell whose
  // statement it serves.
  uint64_t connection_id() const { return connection_id_; }

 private:
  std::map<std::string, std::string, std::less<>> values_;
  uint64_t connection_id_ = 0;
};

// Write access to one output chunk of a table function.
class OutputChunk {
 public:
  explicit OutputChunk(void* chunk) : chunk_(chunk) {}
  size_t capacity() const;
  void SetNull(size_t col, size_t row);
  void SetBool(size_t col, size_t row, bool value);
  void SetInt64(size_t col, size_t row, int64_t value);
  void SetDouble(size_t col, size_t row, double value);
  void SetString(size_t col, size_t row, std::string_view value);
  // Microseconds since the Unix epoch.
  void SetTimestamp(size_t col, size_t row, int64_t epoch_micros);

 private:
  void* chunk_;  // duckdb_data_chunk, not owned
};

class TableScan {
 public:
  virtual ~TableScan() = default;
  // Writes up to out.capacity() rows starting at row 0; returns how many (0: finished).
  virtual Result<size_t> Fill(OutputChunk& out) = 0;
};

class TableFunction {
 public:
  virtual ~TableFunction() = default;
  virtual std::string name() const = 0;
  virtual std::vector<std::string> parameter_names() const = 0;
  virtual Result<std::vector<ColumnDef>> Bind(const TableFunctionArgs& args) = 0;
  virtual Result<std::unique_ptr<TableScan>> Scan(const TableFunctionArgs& args) = 0;
};

// A scan over rows already in memory: `write(out, row_index_in_chunk, row)` fills one row.
template <typename Row, typename Write>
class VectorScan final : public TableScan {
 public:
  VectorScan(std::vector<Row> rows, Write write) : rows_(std::move(rows)), write_(write) {}
  Result<size_t> Fill(OutputChunk& out) override {
    size_t n = 0;
    for (; n < out.capacity() && next_ < rows_.size(); ++n, ++next_)
      write_(out, n, rows_[next_]);
    return n;
  }

 private:
  std::vector<Row> rows_;
  Write write_;
  size_t next_ = 0;
};

}  // namespace millrace::engine
