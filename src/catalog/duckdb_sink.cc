#include "catalog/duckdb_sink.h"

#include "catalog/bookkeeping.h"
#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"
#include "catalog/duckdb_sql.h"

namespace millrace::catalog {
namespace {

using job::FilteredRow;
using job::Progress;

class DuckDbSinkTransaction final : public job::SinkTransaction {
 public:
  DuckDbSinkTransaction(engine::Connection* conn, engine::Transaction txn)
      : conn_(conn), sql_(conn), txn_(std::move(txn)) {}

  engine::Connection& connection() override { return *conn_; }

  Result<bool> WriteProgress(const Progress& p) override { return WriteBookkeeping(sql_, p); }

  Status RecordFilteredRows(int64_t job_id, int64_t task_id, const std::string& file,
                            int64_t time_us, const std::string& select) override {
    return conn_->Execute("INSERT INTO " + FilteredRowsTable().qualified() + " SELECT " +
                          std::to_string(job_id) + ", " + std::to_string(task_id) + ", " +
                          engine::QuoteLiteral(file) + ", line, col, val, why, " +
                          std::to_string(time_us) + " FROM (" + select + ")");
  }

  Result<std::vector<FilteredRow>> TaskFilteredRows(int64_t job_id, int64_t task_id,
                                                    int64_t limit) override {
    return catalog::TaskFilteredRows(sql_, job_id, task_id, limit);
  }

  Status Commit() override { return txn_.Commit(); }
  Status Rollback() override { return txn_.active() ? txn_.Rollback() : Status::Ok(); }

 private:
  engine::Connection* const conn_;
  DuckDbSqlConnection sql_;  // the catalog's statements, in the task's transaction
  engine::Transaction txn_;
};

}  // namespace

Result<std::unique_ptr<job::Sink>> DuckDbSink::Open(engine::Database* db) {
  MR_ASSIGN_OR_RETURN(auto conn, db->Connect());
  return std::unique_ptr<job::Sink>(std::make_unique<DuckDbSink>(std::move(conn)));
}

job::SinkFactory DuckDbSink::Factory(engine::Database* db) {
  return [db] { return Open(db); };
}

Result<std::unique_ptr<job::SinkTransaction>> DuckDbSink::Begin(const std::string& database) {
  MR_RETURN_IF_ERROR(job::UseDatabase(*conn_, database));
  MR_ASSIGN_OR_RETURN(auto txn, conn_->Begin());
  return std::unique_ptr<job::SinkTransaction>(
      std::make_unique<DuckDbSinkTransaction>(conn_.get(), std::move(txn)));
}

}  // namespace millrace::catalog
