// PgSink: the job::Sink of a job whose INSERT names a table of an external catalog
// (external/catalog_def.h). DuckDB reads and transforms the files as for any job, into a
// staging table (external_target.h); the commit copies the staged rows into the PostgreSQL
// table with COPY and writes the job's offset, ledger and task record in the `millrace` schema
// of that database (sink_schema.h), all in one PostgreSQL transaction.
//
// Contract (beyond job/sink.h)
// - Begin describes the target as PostgreSQL has it now (DescribeTarget: a column added or
//   dropped between tasks is followed), opens a transaction of the catalog's sink
//   (`bookkeeping`: the job's record, ledger and task history there, which the views read) and
//   makes the staging table, empty, on its connection. The PostgreSQL connection is opened at
//   the first Begin (the schema made or checked then), and again when it broke.
// - WriteProgress, in a PostgreSQL transaction, copies the staged rows and writes the ledger
//   and the task record; then, last, moves the job in the catalog (its check) and in the sink's
//   schema (AdvanceJob: at the start offset, with an epoch no newer than the task's): false
//   when either says the job no longer expects this task, having written nothing that can
//   commit. The checks come last because each locks the job's row until its commit: a server
//   frozen while it copied (past its lease) cannot hold up its successor, and wakes to a
//   newer epoch. "pgsink.before_checks" (scoped by the job's name) is a fail point just before
//   the checks.
// - Flush copies the rows staged so far into PostgreSQL (begun then) and empties the staging
//   table; the commit copies the rest. A refusal of a value or a constraint (SQLSTATE classes 22
//   and 23) is INVALID_ARGUMENT, another statement error FAILED_PRECONDITION or its own code.
// - EmptyTarget (a change stream's TRUNCATE) empties the staging table and, in the PostgreSQL
//   transaction, the table before the staged rows are copied.
// - Commit commits PostgreSQL first, then the catalog. A crash between the two leaves
//   the sink's schema ahead of the catalog: the sink's offset is the truth for the job (the
//   next task's check fails until the catalog is brought to it); nothing is loaded twice, as
//   the sink's check runs in the transaction that writes the rows. "pgsink.before_commit"
//   (scoped by the job's name) is a fail point just before PostgreSQL's commit,
//   "pgsink.between_commits" one after it.
// - KeptProgressOf reads the job's row in the sink's schema, on the sink's connection, only
//   while the sink and the catalog may differ: at its first call, after a commit that
//   PostgreSQL took and the catalog did not, and after the sink's schema refused a task (the
//   one round trip a turn would otherwise cost).
// - Interrupt cancels the statement running on either connection, from any thread.
// - Thread-safety: as job/sink.h (one task at a time), Interrupt from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "common/fail_point.h"
#include "common/thread_annotations.h"
#include "job/sink.h"
#include "pg/pg_connection.h"
#include "pgsink/external_target.h"

namespace millrace::pgsink {

// Where the sink's catalog connects now, read at each connection (an ALTER CATALOG reaches a
// running job at its next one); an error when the catalog is gone.
using CatalogParams = std::function<Result<pg::ConnectParams>()>;

struct PgSinkConfig {
  std::unique_ptr<job::Sink> bookkeeping;  // the catalog's sink (its staging in DuckDB), owned
  CatalogParams params;
  std::string catalog;  // the target: catalog.schema.table
  std::string schema;
  std::string table;
  std::string staging_name = kStagingName;
  bool delete_sign = false;  // the job gives Doris's delete sign (ExternalTarget::delete_sign)
  std::string job_key;       // sink_schema.h's JobKey
  std::string job_name;      // scopes the fail points
  std::string server;        // this server's identity, in the commits' stamps (CommitStamp)
  const FailPoints* fail_points = nullptr;  // may be null
};

class PgSink final : public job::Sink {
 public:
  explicit PgSink(PgSinkConfig config) : config_(std::move(config)) {}

  Result<std::unique_ptr<job::SinkTransaction>> Begin(const std::string& database) override;
  void Interrupt() override EXCLUDES(mu_);
  void ClearInterrupt() override;
  // The offset and ledger in the sink's schema (nullopt before the job's first commit here, or
  // when both sides are known to agree); the ledger only when the offset differs from the job's.
  Result<std::optional<job::KeptProgress>> KeptProgressOf(const job::JobRecord& job) override;
  // Stamps the job's epoch into the sink's schema (StampEpoch) when it is newer than the last
  // this sink stamped.
  Status Fence(const job::JobRecord& job) override;

  // The table the job's INSERT writes in this sink's transactions.
  std::string staging_table() const { return StagingTable(config_.staging_name); }

 private:
  // The open PostgreSQL connection, made (and the sink's schema checked) when missing or broken.
  Result<pg::PgConnection*> Connection() EXCLUDES(mu_);

  PgSinkConfig config_;
  ExternalTarget target_;  // as the last Begin described it (the task's thread)
  std::atomic<bool> interrupted_{false};
  // The sink's schema may hold another offset than the catalog (see KeptProgressOf).
  std::atomic<bool> may_differ_{true};
  std::atomic<int64_t> fenced_epoch_{-1};  // the last epoch Fence stamped
  mutable Mutex mu_;
  // Replaced only by the task's thread, under mu_; read under mu_ by Interrupt.
  std::unique_ptr<pg::PgConnection> pg_ GUARDED_BY(mu_);
};

}  // namespace millrace::pgsink
