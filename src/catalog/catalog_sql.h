// Internal to the catalog module (and its PostgreSQL twin, src/pgcatalog/): prepared
// statements, transactions and row reading for the stores (sql_job_store.cc, sql_user_store.cc,
// sql_audit_store.cc, sql_external_catalog_store.cc) and the DuckDB sink's bookkeeping
// (duckdb_sink.cc), over the interfaces of sql_db.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catalog/sql_db.h"
#include "common/logging.h"
#include "common/result.h"

namespace millrace::catalog {

using Connection = SqlConnection;

// Where values are written in order: a prepared statement's next parameters (Statement), or
// the next row of lists (ColumnLists).
class Values {
 public:
  virtual ~Values() = default;
  virtual Values& Str(const std::string& v) = 0;
  virtual Values& Int(int64_t v) = 0;
  virtual Values& Bool(bool v) = 0;
};

// Rows written column by column, for a statement over many rows that binds one list per column
// (`SELECT unnest(?::VARCHAR[]), unnest(?::BIGINT[])`, Statement::Lists): DuckDB parses and
// binds it at a constant cost, where a VALUES list of literals cost it about 0.1 ms a row (a
// task's ledger rows for 256 small files: ~50 ms, as long as loading them).
class ColumnLists final : public Values {
 public:
  ColumnLists& Str(const std::string& v) override {
    Next(Kind::kStr).strs.push_back(v);
    return *this;
  }
  ColumnLists& Int(int64_t v) override {
    Next(Kind::kInt).ints.push_back(v);
    return *this;
  }
  ColumnLists& Bool(bool v) override {
    Next(Kind::kBool).bools.push_back(v);
    return *this;
  }
  // Ends a row: the next value is the first column's.
  void EndRow() { column_ = 0; }

  // The SELECT list that turns the lists back into rows: "unnest(?::VARCHAR[]), ...".
  std::string Unnest() const {
    std::string out;
    for (const Column& c : columns_) {
      out += std::string(out.empty() ? "" : ", ") + "unnest(?::" +
             (c.kind == Kind::kStr   ? "VARCHAR"
              : c.kind == Kind::kInt ? "BIGINT"
                                     : "BOOLEAN") +
             "[])";
    }
    return out;
  }
  // Binds each column's list, from parameter `first` on; the next parameter's index.
  Result<size_t> Bind(SqlStatement& stmt, size_t first) const {
    for (const Column& c : columns_) {
      const size_t index = first++;
      MR_RETURN_IF_ERROR(c.kind == Kind::kStr   ? stmt.BindStrList(index, c.strs)
                         : c.kind == Kind::kInt ? stmt.BindIntList(index, c.ints)
                                                : stmt.BindBoolList(index, c.bools));
    }
    return first;
  }

 private:
  enum class Kind { kStr, kInt, kBool };
  struct Column {
    Kind kind;
    std::vector<std::string> strs;
    std::vector<int64_t> ints;
    std::vector<bool> bools;
  };
  // The column the next value goes to; a row writes the same kinds in the same order.
  Column& Next(Kind kind) {
    if (column_ == columns_.size()) columns_.push_back(Column{kind, {}, {}, {}});
    return columns_[column_++];
  }
  std::vector<Column> columns_;
  size_t column_ = 0;
};

// Runs a prepared statement with the given bindings.
class Statement final : public Values {
 public:
  static Result<Statement> Prepare(Connection& conn, const std::string& sql) {
    MR_ASSIGN_OR_RETURN(auto prepared, conn.Prepare(sql));
    return Statement(std::move(prepared));
  }
  Statement& Str(const std::string& v) override { return Check(stmt_->BindStr(++index_, v)); }
  Statement& Int(int64_t v) override { return Check(stmt_->BindInt(++index_, v)); }
  Statement& Bool(bool v) override { return Check(stmt_->BindBool(++index_, v)); }
  // Each of `lists`' columns as the next parameters (ColumnLists::Unnest in the SQL).
  Statement& Lists(const ColumnLists& lists) {
    auto next = lists.Bind(*stmt_, index_ + 1);
    if (!next.ok()) return Check(next.status());
    index_ = *next - 1;
    return *this;
  }

  // Executes and returns the number of rows changed.
  Result<int64_t> Run() { return ForEach(nullptr); }
  // Executes and hands each result row to `row`; returns the number of rows changed.
  Result<int64_t> ForEach(const RowFn& row) {
    MR_RETURN_IF_ERROR(bind_status_);
    return stmt_->Execute(row);
  }

  // Starts binding again from the first parameter.
  Statement& Reset() {
    index_ = 0;
    return *this;
  }

 private:
  explicit Statement(std::unique_ptr<SqlStatement> stmt) : stmt_(std::move(stmt)) {}
  Statement& Check(Status s) {
    if (bind_status_.ok() && !s.ok()) bind_status_ = s;
    return *this;
  }
  std::unique_ptr<SqlStatement> stmt_;
  size_t index_ = 0;
  Status bind_status_;
};

// Every row of `sql` (no parameters), each value as text ("" for NULL).
inline Result<std::vector<std::vector<std::string>>> QueryTextRows(Connection& conn,
                                                                   const std::string& sql) {
  MR_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(conn, sql));
  std::vector<std::vector<std::string>> rows;
  MR_RETURN_IF_ERROR(stmt.ForEach([&](const SqlRow& row) {
                           std::vector<std::string> values;
                           for (size_t c = 0; c < row.columns(); ++c)
                             values.push_back(row.Text(c));
                           rows.push_back(std::move(values));
                           return Status::Ok();
                         })
                         .status());
  return rows;
}

// A transaction of `conn`, rolled back unless committed.
class SqlTransaction {
 public:
  static Result<SqlTransaction> Begin(Connection& conn) {
    MR_RETURN_IF_ERROR(conn.Begin());
    return SqlTransaction(&conn);
  }
  SqlTransaction(SqlTransaction&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  SqlTransaction& operator=(SqlTransaction&&) = delete;
  ~SqlTransaction() {
    // The failure that ended the transaction early is the caller's to report; a rollback that
    // fails as well is logged (the engine ends the transaction with the connection anyway).
    if (conn_ == nullptr) return;
    if (Status rolled_back = conn_->Rollback(); !rolled_back.ok()) {
      MR_LOG(kWarning) << "rolling back a catalog transaction: " << rolled_back.ToString();
    }
  }
  Status Commit() {
    Connection* conn = std::exchange(conn_, nullptr);
    return conn->Commit();
  }

 private:
  explicit SqlTransaction(Connection* conn) : conn_(conn) {}
  Connection* conn_;
};

// Runs `fn` on a fresh connection of `db` inside one transaction, committed when it returns OK.
template <typename Fn>
Status InTransaction(SqlDatabase& db, Fn fn) {
  MR_ASSIGN_OR_RETURN(auto conn, db.Connect());
  MR_ASSIGN_OR_RETURN(auto txn, SqlTransaction::Begin(*conn));
  MR_RETURN_IF_ERROR(fn(*conn));
  return txn.Commit();
}

}  // namespace millrace::catalog
