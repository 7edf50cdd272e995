// The catalog's SQL interfaces (sql_db.h) over the embedded DuckDB database.
//
// Contract (beyond sql_db.h)
// - DuckDbSqlDatabase borrows the database; each Connect opens a DuckDB connection.
// - DuckDbSqlConnection owns its connection, or borrows one whose transaction another part
//   holds (a sink's task transaction: duckdb_sink.h), to run the catalog's statements in it.
// - Thread-safety: as sql_db.h.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "catalog/sql_db.h"
#include "engine/database.h"

namespace millrace::catalog {

class DuckDbSqlConnection final : public SqlConnection {
 public:
  explicit DuckDbSqlConnection(std::unique_ptr<engine::Connection> owned)
      : owned_(std::move(owned)), conn_(owned_.get()) {}
  explicit DuckDbSqlConnection(engine::Connection* borrowed) : conn_(borrowed) {}

  SqlEngine engine() const override { return SqlEngine::kDuckDb; }
  Result<std::unique_ptr<SqlStatement>> Prepare(const std::string& sql) override;
  Status Execute(const std::string& sql) override { return conn_->Execute(sql); }
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;

 private:
  std::unique_ptr<engine::Connection> owned_;
  engine::Connection* const conn_;
  std::optional<engine::Transaction> txn_;  // between Begin and Commit or Rollback
};

class DuckDbSqlDatabase final : public SqlDatabase {
 public:
  explicit DuckDbSqlDatabase(engine::Database* db) : db_(db) {}
  Result<std::unique_ptr<SqlConnection>> Connect() override;

 private:
  engine::Database* const db_;
};

}  // namespace millrace::catalog
