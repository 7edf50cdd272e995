#include "job/sink.h"

#include "job/duckdb_catalog.h"

namespace millrace::job {
namespace {

class DuckDbSinkTransaction final : public SinkTransaction {
 public:
  DuckDbSinkTransaction(engine::Connection* conn, engine::Transaction txn)
      : conn_(conn), txn_(std::move(txn)) {}

  engine::Connection& connection() override { return *conn_; }

  Result<bool> WriteProgress(const Progress& p) override {
    MR_ASSIGN_OR_RETURN(bool advanced, catalog::AdvanceOffset(*conn_, p.job, p.start, p.epoch));
    if (!advanced) return false;
    MR_RETURN_IF_ERROR(catalog::InsertLedger(*conn_, p.ledger));
    MR_RETURN_IF_ERROR(catalog::InsertTask(*conn_, p.task));
    MR_RETURN_IF_ERROR(catalog::PruneTasks(*conn_, p.job.id, p.task_history));
    if (p.filtered_rows_kept > 0) {
      MR_RETURN_IF_ERROR(catalog::PruneFilteredRows(*conn_, p.job.id, p.filtered_rows_kept));
    }
    return true;
  }

  Status Commit() override { return txn_.Commit(); }
  Status Rollback() override { return txn_.active() ? txn_.Rollback() : Status::Ok(); }

 private:
  engine::Connection* const conn_;
  engine::Transaction txn_;
};

}  // namespace

Status UseDatabase(engine::Connection& conn, const std::string& database) {
  return conn.Execute("SET schema = " + engine::QuoteLiteral(database.empty() ? "main" : database));
}

Result<std::unique_ptr<SinkTransaction>> DuckDbSink::Begin(const std::string& database) {
  MR_RETURN_IF_ERROR(UseDatabase(*conn_, database));
  MR_ASSIGN_OR_RETURN(auto txn, conn_->Begin());
  return std::unique_ptr<SinkTransaction>(
      std::make_unique<DuckDbSinkTransaction>(conn_, std::move(txn)));
}

}  // namespace millrace::job
