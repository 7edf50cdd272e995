// Appender: rows written into a table through DuckDB's appender, without SQL per row.
//
// Contract
// - Open(conn, catalog, schema, table) appends to that table on `conn` (a temporary table is
//   in catalog "temp", schema "main"). Inside a transaction begun on `conn`, the rows belong to
//   it: Flush makes them visible to that transaction's statements, and a rollback drops them.
// - Values are given column by column, a row ended by EndRow; a string value is cast to the
//   column's type by DuckDB. An error (a wrong count, a failed cast) is the engine's Status; the
//   appender is then unusable.
// - Flush writes the rows given so far; the destructor flushes nothing (rows not flushed are
//   dropped).
// - Thread-safety: one thread at a time, and not while another statement runs on `conn`.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/database.h"

namespace millrace::engine {

class Appender {
 public:
  static Result<std::unique_ptr<Appender>> Open(Connection& conn, const std::string& catalog,
                                                const std::string& schema,
                                                const std::string& table);
  ~Appender();
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  Status AppendString(std::string_view value);
  Status AppendNull();
  Status AppendInt64(int64_t value);
  Status AppendBool(bool value);
  Status EndRow();
  Status Flush();

 private:
  explicit Appender(void* appender) : appender_(appender) {}
  Status Check(int state, const char* what);
  void* appender_;  // duckdb_appender, owned
};

}  // namespace millrace::engine
