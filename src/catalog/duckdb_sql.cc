#include "catalog/duckdb_sql.h"

#include "engine/query_result.h"

namespace millrace::catalog {
namespace {

class ChunkRow final : public SqlRow {
 public:
  ChunkRow(const engine::DataChunk& chunk, size_t row) : chunk_(chunk), row_(row) {}
  size_t columns() const override { return chunk_.column_count(); }
  bool IsNull(size_t col) const override { return chunk_.IsNull(col, row_); }
  std::string Text(size_t col) const override {
    if (IsNull(col)) return std::string();
    if (chunk_.type(col).id == engine::TypeId::kVarchar) {
      return std::string(chunk_.GetString(col, row_));
    }
    return chunk_.GetText(col, row_);
  }
  int64_t Int(size_t col) const override { return IsNull(col) ? 0 : chunk_.GetInt64(col, row_); }
  bool Bool(size_t col) const override { return !IsNull(col) && chunk_.GetBool(col, row_); }

 private:
  const engine::DataChunk& chunk_;
  const size_t row_;
};

class DuckDbSqlStatement final : public SqlStatement {
 public:
  explicit DuckDbSqlStatement(std::unique_ptr<engine::PreparedStatement> stmt)
      : stmt_(std::move(stmt)) {}
  Status BindStr(size_t index, const std::string& value) override {
    return stmt_->BindString(index, value);
  }
  Status BindInt(size_t index, int64_t value) override { return stmt_->BindInt64(index, value); }
  Status BindBool(size_t index, bool value) override { return stmt_->BindBool(index, value); }
  Status BindStrList(size_t index, const std::vector<std::string>& values) override {
    return stmt_->BindStringList(index, values);
  }
  Status BindIntList(size_t index, const std::vector<int64_t>& values) override {
    return stmt_->BindInt64List(index, values);
  }
  Status BindBoolList(size_t index, const std::vector<bool>& values) override {
    return stmt_->BindBoolList(index, values);
  }
  Result<int64_t> Execute(const RowFn& row) override {
    MR_ASSIGN_OR_RETURN(auto result, stmt_->Execute());
    while (true) {
      MR_ASSIGN_OR_RETURN(auto chunk, result->Next());
      if (!chunk) break;
      if (!row) continue;
      for (size_t r = 0; r < chunk->size(); ++r)
        MR_RETURN_IF_ERROR(row(ChunkRow(*chunk, r)));
    }
    return result->rows_changed();
  }

 private:
  std::unique_ptr<engine::PreparedStatement> stmt_;
};

}  // namespace

Result<std::unique_ptr<SqlStatement>> DuckDbSqlConnection::Prepare(const std::string& sql) {
  MR_ASSIGN_OR_RETURN(auto prepared, conn_->Prepare(sql));
  std::unique_ptr<SqlStatement> statement =
      std::make_unique<DuckDbSqlStatement>(std::move(prepared));
  return statement;
}

Status DuckDbSqlConnection::Begin() {
  MR_ASSIGN_OR_RETURN(engine::Transaction txn, conn_->Begin());
  txn_.emplace(std::move(txn));
  return Status::Ok();
}

Status DuckDbSqlConnection::Commit() {
  if (!txn_) return Status::FailedPrecondition("no transaction to commit");
  Status committed = txn_->Commit();
  txn_.reset();
  return committed;
}

Status DuckDbSqlConnection::Rollback() {
  if (!txn_) return Status::Ok();
  Status rolled_back = txn_->Rollback();
  txn_.reset();
  return rolled_back;
}

Result<std::unique_ptr<SqlConnection>> DuckDbSqlDatabase::Connect() {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  std::unique_ptr<SqlConnection> connection =
      std::make_unique<DuckDbSqlConnection>(std::move(conn));
  return connection;
}

}  // namespace millrace::catalog
