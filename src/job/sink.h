// Sink: where a batch's rows, the job's offset, its ledger and the task record commit together.
// Embedded DuckDB is one implementation (catalog::DuckDbSink, wired by the server through
// JobServiceConfig::make_sink, a sink per worker); a PostgreSQL database is the other
// (pgsink::PgSink, a job's own sink through job_plan.h's ExternalRoute: the offset, ledger and
// task record live in the target database, in the rows' transaction).
//
// Contract
// - Begin() opens a transaction in which unqualified names resolve in `database`. A
//   SinkTransaction rolls back when destroyed uncommitted: nothing of it is visible.
// - WriteProgress is the exactly-once check: inside the transaction it moves the job's offset
//   from `start` to the job's new offset only if the stored job is RUNNING, at `start` and at
//   `epoch`; then it records the ledger entries and the task record. It returns false, having
//   written nothing, when the job no longer expects this task. Progress::part splits it in two
//   for concurrent tasks; a sink that cannot split it fails with NOT_SUPPORTED.
// - RecordFilteredRows records, in the transaction, the rows `select` yields when run on
//   connection() (columns line, col, val, why, in line order) as filtered rows of `file` in task
//   `task_id` of job `job_id`, at `time_us`. TaskFilteredRows reads the filtered rows a task
//   recorded as the transaction sees them: a dry run reads its own before it rolls back.
// - TargetModel: a sink that writes a table of its own (an external one) says its model, which
//   the loader then writes by (newest row per key into a UNIQUE one) instead of the embedded
//   catalog's record.
// - Interrupt() cancels the statement running in the sink's transaction and every statement
//   after it until ClearInterrupt(), from any thread; they fail with CANCELLED.
// - KeptProgressOf: a sink that keeps the job's progress in the database it writes (an external
//   table's) returns it when it may differ from the catalog's copy, which can be behind it after
//   a crash between the two commits: the sink's is the truth for the job. nullopt when the two
//   cannot differ (sinks that keep none apart from the catalog, or whose last commits landed
//   on both sides).
// - One transaction at a time per sink; Begin, WriteProgress, Commit and Rollback are called
//   by one thread (the task's).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "engine/database.h"
#include "job/job_model.h"
#include "job/offset.h"
#include "table/table_def.h"

namespace millrace::job {

struct Progress {
  // What the transaction writes. kAll: the job's row (the exactly-once check), the ledger and
  // the task record, together. Concurrent tasks (max_concurrent_tasks > 1) split it, because
  // DuckDB aborts one of two transactions that write the same row and a task's transaction is
  // open for its whole load: the task's own transaction writes kFiles (the check that the job
  // is RUNNING at `epoch`, read only, then the ledger and the task record: rows no other task
  // writes), and the job's row follows in a short transaction of its own, kJobRow (the move
  // from `start` to the job's offset with the exactly-once check, the counters, the pruning of
  // old task records and filtered rows), written one at a time under the job's lock
  // (commit_gate.h). A crash between the two leaves the offset behind files in the ledger,
  // which the file source skips (file_job_source.h).
  enum class Part { kAll, kFiles, kJobRow };
  Part part = Part::kAll;
  JobRecord job;  // the job row after the task: offset, end offset, counters, statistics
  Offset start;   // the offset the task started from
  int64_t epoch = 0;
  std::vector<LedgerEntry> ledger;
  TaskRecord task;
  int task_history = 100;          // task records kept per job
  int64_t filtered_rows_kept = 0;  // > 0: prune the job's filtered rows to about this many
};

class SinkTransaction {
 public:
  virtual ~SinkTransaction() = default;
  // The embedded engine's connection the batch's rows are written through.
  virtual engine::Connection& connection() = 0;
  virtual Result<bool> WriteProgress(const Progress& progress) = 0;
  virtual Status RecordFilteredRows(int64_t job_id, int64_t task_id, const std::string& file,
                                    int64_t time_us, const std::string& select) = 0;
  // In file and line order, at most `limit`.
  virtual Result<std::vector<FilteredRow>> TaskFilteredRows(int64_t job_id, int64_t task_id,
                                                            int64_t limit) = 0;
  // The Doris definition of the table the batch writes, when the sink defines it (an external
  // table: a primary key makes it UNIQUE); nullopt: the embedded catalog's record says
  // (table/model_catalog.h).
  virtual std::optional<table::TableDef> TargetModel() const { return std::nullopt; }
  // Empties `table` (the target as connection() names it) before the rows written after this
  // call: a change stream's TRUNCATE. The default deletes its rows on connection(); a sink that
  // copies a staging table elsewhere empties the staging table and, at its commit, the table it
  // copies into before the rows.
  virtual Status EmptyTarget(const std::string& table);
  // Sends the rows written since the last call to where the sink keeps them, inside the
  // transaction (a sink that copies a staging table elsewhere copies it now), so that the
  // target's refusal is met while the rows that caused it are known. INVALID_ARGUMENT is the
  // target refusing one of those rows (a value, a constraint); another error fails the task. The
  // default (rows written in place) has nothing to send.
  virtual Status Flush() { return Status::Ok(); }
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
};

// A job's progress as a sink keeps it.
struct KeptProgress {
  Offset offset;
  std::vector<LedgerEntry> ledger;  // every file the sink holds for the job
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual Result<std::unique_ptr<SinkTransaction>> Begin(const std::string& database) = 0;
  virtual void Interrupt() = 0;
  virtual void ClearInterrupt() = 0;
  virtual Result<std::optional<KeptProgress>> KeptProgressOf(const JobRecord& job) {
    return std::optional<KeptProgress>();
  }
  // From now on, tasks of `job` at epochs older than job.epoch commit nothing through this
  // sink's database, whichever server runs them: a sink whose exactly-once check is not the
  // catalog's own transaction records the epoch where it checks (the PostgreSQL sink:
  // pgsink::StampEpoch). Called at the start of each turn of a job with a sink of its own
  // (TaskRunner), so a server taking a job over fences its earlier holder before its first
  // task; cheap when the epoch has not moved. The default does nothing: the sink's check runs
  // in the catalog's transaction.
  virtual Status Fence(const JobRecord& job) { return Status::Ok(); }
};

// The sink of a job that writes through one of its own (a table of an external catalog),
// made for the job's record at its first task and kept while the job's plan is: a job's tasks
// run one at a time.
class JobSinkSlot {
 public:
  using Maker = std::function<Result<std::unique_ptr<Sink>>(const JobRecord&)>;
  explicit JobSinkSlot(Maker make) : make_(std::move(make)) {}

  // The job's sink, made at the first call; called by the job's task.
  Result<Sink*> Get(const JobRecord& job) EXCLUDES(mu_);
  // A sink of its own, for one dry run of `job`.
  Result<std::unique_ptr<Sink>> MakeOne(const JobRecord& job) const { return make_(job); }

 private:
  const Maker make_;
  Mutex mu_;
  std::unique_ptr<Sink> sink_ GUARDED_BY(mu_);
};

// Makes a sink for one worker (or one dry run); each sink is used by one thread at a time.
using SinkFactory = std::function<Result<std::unique_ptr<Sink>>()>;

// Makes unqualified names of `conn`'s statements resolve in `database` ("" for DuckDB's
// default schema).
Status UseDatabase(engine::Connection& conn, const std::string& database);

}  // namespace millrace::job
