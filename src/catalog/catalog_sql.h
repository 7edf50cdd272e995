// Internal to the catalog module: prepared statements, transactions and row reading for the
// DuckDB stores (duckdb_job_store.cc, duckdb_user_store.cc, duckdb_audit_store.cc) and the
// DuckDB sink's bookkeeping (duckdb_sink.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "engine/query_result.h"

namespace millrace::catalog {

using engine::Connection;
using engine::DataChunk;

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
  Result<size_t> Bind(engine::PreparedStatement& stmt, size_t first) const {
    for (const Column& c : columns_) {
      const size_t index = first++;
      MR_RETURN_IF_ERROR(c.kind == Kind::kStr   ? stmt.BindStringList(index, c.strs)
                         : c.kind == Kind::kInt ? stmt.BindInt64List(index, c.ints)
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
  // Each of `lists`' columns as the next parameters (ColumnLists::Unnest in the SQL).
  Statement& Lists(const ColumnLists& lists) {
    auto next = lists.Bind(*stmt_, index_ + 1);
    if (!next.ok()) return Check(next.status());
    index_ = *next - 1;
    return *this;
  }

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
