// The catalog's view of the database that holds it: the embedded DuckDB file (duckdb_sql.h) or,
// in cluster mode, PostgreSQL (src/pgcatalog/). The stores (sql_*_store.h) are written once
// against these interfaces, in SQL both engines run: `?` parameters, lists bound whole
// (`unnest(?::VARCHAR[])`), no engine's own shorthand (GROUP BY ALL, contains()). Where the
// engines must differ (a column's collation, where the engine lists its tables) the statement
// asks SqlConnection::engine(). Internal to the catalog module and its PostgreSQL twin.
//
// Contract
// - SqlDatabase::Connect opens a connection of its own; a connection is used by one thread at
//   a time and runs one transaction at a time (Begin, then Commit or Rollback; without Begin
//   every statement commits alone).
// - SqlStatement binds parameters by position from 1, in the order `?` appear; Execute runs it
//   with the bindings, hands each result row to `row` (when given) and returns the rows it
//   changed. A statement may be bound and run again.
// - SqlRow reads a result row's values by column index; a NULL reads as "", 0 or false.
// - Errors are the engine's, as Status values (engine/database.h, pg/pg_connection.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace millrace::catalog {

enum class SqlEngine { kDuckDb, kPostgres };

class SqlRow {
 public:
  virtual ~SqlRow() = default;
  virtual size_t columns() const = 0;
  virtual bool IsNull(size_t col) const = 0;
  virtual std::string Text(size_t col) const = 0;
  virtual int64_t Int(size_t col) const = 0;
  virtual bool Bool(size_t col) const = 0;
};

using RowFn = std::function<Status(const SqlRow&)>;

class SqlStatement {
 public:
  virtual ~SqlStatement() = default;
  virtual Status BindStr(size_t index, const std::string& value) = 0;
  virtual Status BindInt(size_t index, int64_t value) = 0;
  virtual Status BindBool(size_t index, bool value) = 0;
  virtual Status BindStrList(size_t index, const std::vector<std::string>& values) = 0;
  virtual Status BindIntList(size_t index, const std::vector<int64_t>& values) = 0;
  virtual Status BindBoolList(size_t index, const std::vector<bool>& values) = 0;
  virtual Result<int64_t> Execute(const RowFn& row) = 0;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  virtual SqlEngine engine() const = 0;
  virtual Result<std::unique_ptr<SqlStatement>> Prepare(const std::string& sql) = 0;
  // One or more statements without parameters; their rows are discarded.
  virtual Status Execute(const std::string& sql) = 0;
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
};

class SqlDatabase {
 public:
  virtual ~SqlDatabase() = default;
  virtual Result<std::unique_ptr<SqlConnection>> Connect() = 0;
};

}  // namespace millrace::catalog
