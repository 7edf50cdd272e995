// Internal to the catalog module: prepared statements, transactions and row reading for the
// DuckDB stores (duckdb_job_store.cc, duckdb_user_store.cc, duckdb_audit_store.cc) and the
// DuckDB sink's bookkeeping (duckdb_sink.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "engine/database.h"
#include "engine/query_result.h"

namespace millrace::catalog {

using engine::Connection;
using engine::DataChunk;

// Where values are written in order: a prepared statement's next parameters (Statement), or a
// row of literals (table_decl.h's LiteralRow).
class Values {
 public:
  virtual ~Values() = default;
  virtual Values& Str(const std::string& v) = 0;
  virtual Values& Int(int64_t v) = 0;
  virtual Values& Bool(bool v) = 0;
};

// Runs a prepared statement with the given bindings and drains its result.
class Statement final : public Values {
 public:
  static Result<Statement> Prepare(Connection& conn, const std::string& sql) {
    MR_ASSIGN_OR_RETURN(auto prepared, conn.Prepare(sql));
    return Statement(std::move(prepared));
  }
  Statement& Str(const std::string& v) override { return Check(stmt_->BindString(++index_, v)); }
  Statement& Int(int64_t v) override { return Check(stmt_->BindInt64(++index_, v)); }
  Statement& Bool(bool v) override { return Check(stmt_->BindBool(++index_, v)); }
  Statement& Dbl(double v) { return Check(stmt_->BindDouble(++index_, v)); }

  // Executes and returns the number of rows changed.
  Result<int64_t> Run() {
    MR_RETURN_IF_ERROR(bind_status_);
    MR_ASSIGN_OR_RETURN(auto result, stmt_->Execute());
    while (true) {
      MR_ASSIGN_OR_RETURN(auto chunk, result->Next());
      if (!chunk) break;
    }
    return result->rows_changed();
  }

  // Starts binding again from the first parameter.
  Statement& Reset() {
    index_ = 0;
    return *this;
  }

  Result<std::unique_ptr<engine::QueryResult>> Query() {
    MR_RETURN_IF_ERROR(bind_status_);
    return stmt_->Execute();
  }

 private:
  explicit Statement(std::unique_ptr<engine::PreparedStatement> stmt) : stmt_(std::move(stmt)) {}
  Statement& Check(Status s) {
    if (bind_status_.ok() && !s.ok()) bind_status_ = s;
    return *this;
  }
  std::unique_ptr<engine::PreparedStatement> stmt_;
  size_t index_ = 0;
  Status bind_status_;
};

// Visits every row of a query.
template <typename Fn>
Status ForEachRow(engine::QueryResult& result, Fn fn) {
  while (true) {
    MR_ASSIGN_OR_RETURN(auto chunk, result.Next());
    if (!chunk) return Status::Ok();
    for (size_t r = 0; r < chunk->size(); ++r)
      MR_RETURN_IF_ERROR(fn(*chunk, r));
  }
}

inline std::string Text(const DataChunk& c, size_t col, size_t row) {
  return c.IsNull(col, row) ? std::string() : std::string(c.GetString(col, row));
}
inline int64_t Int(const DataChunk& c, size_t col, size_t row) {
  return c.IsNull(col, row) ? 0 : c.GetInt64(col, row);
}

// Runs `fn` on a fresh connection of `db` inside one transaction, committed when it returns OK.
template <typename Fn>
Status InTransaction(engine::Database& db, Fn fn) {
  MR_ASSIGN_OR_RETURN(auto conn, db.Connect());
  MR_ASSIGN_OR_RETURN(auto txn, conn->Begin());
  MR_RETURN_IF_ERROR(fn(*conn));
  return txn.Commit();
}

}  // namespace millrace::catalog
