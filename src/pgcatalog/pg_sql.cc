#include "pgcatalog/pg_sql.h"

#include <charconv>
#include <utility>

namespace millrace::pgcatalog {
namespace {

using catalog::RowFn;
using catalog::SqlEngine;
using catalog::SqlRow;

class PgRow final : public SqlRow {
 public:
  explicit PgRow(const pg::Row& row) : row_(row) {}
  size_t columns() const override { return row_.size(); }
  bool IsNull(size_t col) const override { return col >= row_.size() || !row_[col]; }
  std::string Text(size_t col) const override { return IsNull(col) ? std::string() : *row_[col]; }
  int64_t Int(size_t col) const override {
    if (IsNull(col)) return 0;
    const std::string& text = *row_[col];
    int64_t value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
  }
  bool Bool(size_t col) const override { return !IsNull(col) && *row_[col] == "t"; }

 private:
  const pg::Row& row_;
};

class PgSqlStatement final : public catalog::SqlStatement {
 public:
  PgSqlStatement(pg::PgConnection* conn, std::string sql) : conn_(conn), sql_(std::move(sql)) {}

  Status BindStr(size_t index, const std::string& value) override { return Set(index, value); }
  Status BindInt(size_t index, int64_t value) override { return Set(index, std::to_string(value)); }
  Status BindBool(size_t index, bool value) override { return Set(index, value ? "t" : "f"); }
  Status BindStrList(size_t index, const std::vector<std::string>& values) override {
    return Set(index, TextArray(values));
  }
  Status BindIntList(size_t index, const std::vector<int64_t>& values) override {
    std::string text = "{";
    for (size_t i = 0; i < values.size(); ++i)
      text += (i ? "," : "") + std::to_string(values[i]);
    return Set(index, text + "}");
  }
  Status BindBoolList(size_t index, const std::vector<bool>& values) override {
    std::string text = "{";
    for (size_t i = 0; i < values.size(); ++i)
      text += std::string(i ? "," : "") + (values[i] ? "t" : "f");
    return Set(index, text + "}");
  }

  Result<int64_t> Execute(const RowFn& row) override {
    Result<pg::Rows> ran = conn_->Query(sql_, params_);
    if (!ran.ok() && pg::SqlStateOf(ran.status()) == "23505") {
      // A key the catalog holds already (another server wrote it first): what the stores say
      // of a duplicate.
      return Status(StatusCode::kAlreadyExists, ran.status().message())
          .WithDetail(ran.status().detail());
    }
    MR_ASSIGN_OR_RETURN(pg::Rows rows, std::move(ran));
    if (row) {
      for (const pg::Row& r : rows.rows)
        MR_RETURN_IF_ERROR(row(PgRow(r)));
    }
    return rows.changed;
  }

 private:
  Status Set(size_t index, std::string value) {
    if (index == 0) return Status::InvalidArgument("catalog statement parameters count from 1");
    if (params_.size() < index) params_.resize(index);
    params_[index - 1] = std::move(value);
    return Status::Ok();
  }

  pg::PgConnection* const conn_;
  const std::string sql_;
  std::vector<pg::Field> params_;
};

}  // namespace

// A connection handed out by PgSqlDatabase, given back when it is destroyed.
class PgSqlConnection final : public catalog::SqlConnection {
 public:
  PgSqlConnection(PgSqlDatabase* owner, std::unique_ptr<pg::PgConnection> conn)
      : owner_(owner), conn_(std::move(conn)) {}
  ~PgSqlConnection() override {
    if (!in_transaction_) owner_->Release(std::move(conn_));
  }

  SqlEngine engine() const override { return SqlEngine::kPostgres; }
  Result<std::unique_ptr<catalog::SqlStatement>> Prepare(const std::string& sql) override {
    std::unique_ptr<catalog::SqlStatement> statement =
        std::make_unique<PgSqlStatement>(conn_.get(), NumberParameters(sql));
    return statement;
  }
  Status Execute(const std::string& sql) override { return conn_->Execute(sql); }
  Status Begin() override {
    MR_RETURN_IF_ERROR(conn_->Execute("BEGIN"));
    in_transaction_ = true;
    return Status::Ok();
  }
  Status Commit() override {
    MR_ASSIGN_OR_RETURN(pg::Rows done, conn_->Query("COMMIT"));
    in_transaction_ = false;
    // PostgreSQL answers COMMIT of a transaction a failed statement aborted with ROLLBACK.
    if (done.command == "ROLLBACK") {
      return Status::Aborted("the catalog transaction was rolled back by PostgreSQL");
    }
    return Status::Ok();
  }
  Status Rollback() override {
    MR_RETURN_IF_ERROR(conn_->Execute("ROLLBACK"));
    in_transaction_ = false;
    return Status::Ok();
  }

 private:
  PgSqlDatabase* const owner_;
  std::unique_ptr<pg::PgConnection> conn_;
  bool in_transaction_ = false;  // a connection left inside one is closed, not reused
};

std::string NumberParameters(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 0;
  char quote = 0;  // the quote a literal or identifier is inside, or 0
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;  // a doubled quote closes and reopens: the same text
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += "$" + std::to_string(++next);
    } else {
      out += c;
    }
  }
  return out;
}

std::string TextArray(const std::vector<std::string>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    text += i ? ",\"" : "\"";
    for (char c : values[i]) {
      if (c == '"' || c == '\\') text += '\\';
      text += c;
    }
    text += '"';
  }
  return text + "}";
}

PgSqlDatabase::~PgSqlDatabase() = default;

Result<std::unique_ptr<catalog::SqlConnection>> PgSqlDatabase::Connect() {
  std::unique_ptr<pg::PgConnection> conn;
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      conn = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (conn == nullptr || !conn->healthy()) {
    MR_ASSIGN_OR_RETURN(conn, pg::PgConnection::Connect(params_));
  }
  std::unique_ptr<catalog::SqlConnection> handed =
      std::make_unique<PgSqlConnection>(this, std::move(conn));
  return handed;
}

void PgSqlDatabase::Release(std::unique_ptr<pg::PgConnection> conn) {
  if (conn == nullptr || !conn->healthy()) return;
  MutexLock lock(&mu_);
  if (idle_.size() < kIdleConnections) idle_.push_back(std::move(conn));
}

}  // namespace millrace::pgcatalog
