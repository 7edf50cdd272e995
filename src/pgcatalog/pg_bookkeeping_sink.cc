#include "pgcatalog/pg_bookkeeping_sink.h"

#include <utility>

#include "catalog/bookkeeping.h"
#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"
#include "engine/query_result.h"

namespace millrace::pgcatalog {
namespace {

using catalog::ColumnLists;
using catalog::FilteredRowsTable;
using catalog::Statement;

class PgBookkeepingTransaction final : public job::SinkTransaction {
 public:
  PgBookkeepingTransaction(engine::Connection* conn, engine::Transaction txn,
                           std::unique_ptr<catalog::SqlConnection> catalog)
      : conn_(conn), txn_(std::move(txn)), catalog_(std::move(catalog)) {}
  ~PgBookkeepingTransaction() override {
    if (catalog_open_) {
      if (Status s = catalog_->Rollback(); !s.ok()) {
        MR_LOG(kWarning) << "rolling back a catalog transaction: " << s.ToString();
      }
    }
  }

  engine::Connection& connection() override { return *conn_; }

  Result<bool> WriteProgress(const job::Progress& p) override {
    return catalog::WriteBookkeeping(*catalog_, p);
  }

  Status RecordFilteredRows(int64_t job_id, int64_t task_id, const std::string& file,
                            int64_t time_us, const std::string& select) override {
    MR_ASSIGN_OR_RETURN(
        auto rows, conn_->Query("SELECT line, col, val, why FROM (" + select + ") ORDER BY line"));
    // The table's columns in order: job_id, task_id, file, line, column_name, value, reason,
    // time_us.
    ColumnLists lists;
    size_t count = 0;
    while (true) {
      MR_ASSIGN_OR_RETURN(auto chunk, rows->Next());
      if (!chunk) break;
      for (size_t r = 0; r < chunk->size(); ++r, ++count) {
        lists.Int(job_id).Int(task_id).Str(file);
        lists.Int(chunk->IsNull(0, r) ? 0 : chunk->GetInt64(0, r));
        for (size_t c = 1; c <= 3; ++c)
          lists.Str(chunk->IsNull(c, r) ? std::string() : chunk->GetText(c, r));
        lists.Int(time_us);
        lists.EndRow();
      }
    }
    if (count == 0) return Status::Ok();
    MR_ASSIGN_OR_RETURN(
        Statement insert,
        Statement::Prepare(*catalog_, "INSERT INTO " + FilteredRowsTable().qualified() + " (" +
                                          FilteredRowsTable().Names() + ") SELECT " +
                                          lists.Unnest()));
    return insert.Lists(lists).Run().status();
  }

  Result<std::vector<job::FilteredRow>> TaskFilteredRows(int64_t job_id, int64_t task_id,
                                                         int64_t limit) override {
    return catalog::TaskFilteredRows(*catalog_, job_id, task_id, limit);
  }

  Status Commit() override {
    catalog_open_ = false;
    if (Status committed = catalog_->Commit(); !committed.ok()) {
      if (txn_.active()) {
        if (Status s = txn_.Rollback(); !s.ok()) {
          MR_LOG(kWarning) << "rolling back the staging transaction: " << s.ToString();
        }
      }
      return committed;
    }
    return txn_.Commit();
  }

  Status Rollback() override {
    Status catalog = Status::Ok();
    if (catalog_open_) {
      catalog_open_ = false;
      catalog = catalog_->Rollback();
    }
    Status staging = txn_.active() ? txn_.Rollback() : Status::Ok();
    MR_RETURN_IF_ERROR(catalog);
    return staging;
  }

 private:
  engine::Connection* const conn_;
  engine::Transaction txn_;
  std::unique_ptr<catalog::SqlConnection> catalog_;
  bool catalog_open_ = true;  // its transaction has not ended
};

}  // namespace

Result<std::unique_ptr<job::Sink>> PgBookkeepingSink::Open(engine::Database* db,
                                                           catalog::SqlDatabase* catalog) {
  MR_ASSIGN_OR_RETURN(auto conn, db->Connect());
  std::unique_ptr<job::Sink> sink = std::make_unique<PgBookkeepingSink>(std::move(conn), catalog);
  return sink;
}

Result<std::unique_ptr<job::SinkTransaction>> PgBookkeepingSink::Begin(
    const std::string& database) {
  MR_RETURN_IF_ERROR(job::UseDatabase(*conn_, database));
  MR_ASSIGN_OR_RETURN(auto catalog, catalog_->Connect());
  MR_RETURN_IF_ERROR(catalog->Begin());
  // Begun last: an error above leaves no DuckDB transaction open on the sink's connection.
  auto txn = conn_->Begin();
  if (!txn.ok()) {
    if (Status s = catalog->Rollback(); !s.ok()) {
      MR_LOG(kWarning) << "rolling back a catalog transaction: " << s.ToString();
    }
    return txn.status();
  }
  std::unique_ptr<job::SinkTransaction> opened = std::make_unique<PgBookkeepingTransaction>(
      conn_.get(), std::move(txn).value(), std::move(catalog));
  return opened;
}

}  // namespace millrace::pgcatalog
