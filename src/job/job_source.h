// JobSource: where a job's data comes from, behind one offset interface (in the spirit of
// Doris's SourceOffsetProvider). Files from S3 or a local directory are the first
// implementation (files/file_job_source.h), change streams the other (cdc/change_source.h).
//
// Contract
// - Poll(job, limits) returns the next batch after the committed offset, or no batch
//   (with when to look again). It may return batches below the offset that do not advance it
//   (a file source's late files): their start and end offsets are the committed one.
// - A batch covers (start, end]: the task that loads it commits `end` as the job's offset in
//   the same transaction as its rows, and only if the job is still at `start` (the commit
//   gate). The job layer never looks inside an offset.
// - Committed(end) is called after a batch's transaction committed, never before and never for
//   a batch that did not commit: a change stream confirms its position upstream only then.
//   A crash between the commit and the call is harmless: on restart the source starts from the
//   committed offset, and confirms it with its first batch.
// - SourceBatch::Load writes the batch's rows into a transaction it begins on the sink, and
//   returns that transaction open (with what it wrote: statistics, ledger entries) for the
//   commit gate; it never commits. It may roll back and begin again (a load in rounds); an
//   error is returned with its JobErrorCode detail (job_errors.h).
// - Thread-safety: Poll and Committed are called by the one task of the job at a time;
//   Describe from any thread. Interrupt may be called from any thread while Load runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "job/job_model.h"
#include "job/offset.h"
#include "job/sink.h"

namespace millrace::job {

// What one task takes at most: s3.max_batch_files and s3.max_batch_bytes. A file source holds
// to both; a change stream takes what has arrived by the end of its poll, and holds to a bound
// only when the job gave it (cdc/change_stream.h).
struct BatchLimits {
  int64_t max_items = 256;
  int64_t max_bytes = 10LL << 30;
  bool items_given = false;  // the job's properties set max_items
  bool bytes_given = false;  // the job's properties set max_bytes
  // Concurrent tasks (max_concurrent_tasks > 1, file jobs only: task_window.h): the batch
  // starts after this offset, the end of the batch dispatched last, rather than after the
  // job's committed offset (which still bounds what is reconciled below it). nullopt: one
  // task at a time.
  std::optional<Offset> after;

  static BatchLimits Of(const JobProperties& properties) {
    return {properties.max_batch_files, properties.max_batch_bytes,
            properties.given.contains("s3.max_batch_files"),
            properties.given.contains("s3.max_batch_bytes"), std::nullopt};
  }
};

// What a load wrote into its open transaction.
struct LoadedBatch {
  std::unique_ptr<SinkTransaction> txn;  // open; the commit gate commits or drops it
  LoadStatistic stats;
  std::vector<LedgerEntry> ledger;  // the batch's files (file sources); empty for others
  std::string first_error;          // the first filtered row, "" when none
};

// What a task needs to know while it loads.
struct TaskContext {
  int64_t job_id = 0;
  int64_t task_id = 0;
  std::string job_name;
  std::string database;  // the job's database (DuckDB schema); "" for the default
  int64_t now_us = 0;
};

class SourceBatch {
 public:
  virtual ~SourceBatch() = default;

  const Offset& start() const { return start_; }
  const Offset& end() const { return end_; }
  bool advances() const { return !(start_ == end_); }
  // The first and last item, for the task's RunningOffset.
  const std::string& first_item() const { return first_item_; }
  const std::string& last_item() const { return last_item_; }
  int64_t items() const { return items_; }
  int64_t bytes() const { return bytes_; }
  // The first filtered row of the last Load, also when it failed (too many filtered rows).
  const std::string& first_error() const { return first_error_; }

  // See the contract above. `attempt` counts from 0; a retry loads the batch again from
  // scratch.
  virtual Result<LoadedBatch> Load(Sink& sink, const TaskContext& task, int attempt) = 0;

 protected:
  std::string first_error_;

  SourceBatch(Offset start, Offset end, std::string first_item, std::string last_item,
              int64_t items, int64_t bytes)
      : start_(std::move(start)),
        end_(std::move(end)),
        first_item_(std::move(first_item)),
        last_item_(std::move(last_item)),
        items_(items),
        bytes_(bytes) {}

 private:
  Offset start_;
  Offset end_;
  std::string first_item_;
  std::string last_item_;
  int64_t items_ = 0;
  int64_t bytes_ = 0;
};

struct Polled {
  std::unique_ptr<SourceBatch> batch;  // nullptr: nothing to load now
  // More is ready after this batch (or the source could not tell): run the next task at once.
  bool more = false;
  // Items exist that are not ready yet (files still being written): look again after this
  // rather than after max_interval; a ONCE job is not finished while it is set.
  std::optional<std::chrono::milliseconds> look_again;
  Offset end_offset;      // the newest position seen upstream; empty if unknown
  int64_t lag_items = 0;  // items seen but not loaded (including this batch)
  int64_t lag_bytes = 0;
  // Last-modified time of the oldest of those items; {} when none or unknown.
  Clock::WallTime oldest_unloaded{};
  std::optional<std::string> note;  // news for JobRuntimeMsg (late files skipped, ...)
};

// A source table's rows upstream, and the table of the embedded database it loads into
// (VERIFY JOB).
struct UpstreamTableRows {
  std::string table;          // as the source names it, e.g. public.orders
  int64_t rows = 0;           // count(*) at the source
  std::string target_schema;  // DuckDB schema and table of its target
  std::string target_table;
};

// A line of EXPLAIN CREATE JOB's answer (job_dry_run.h lists the sections).
struct DryRunLine {
  std::string section;  // Task, File, Column, Row, Filtered
  std::string item;
  std::string detail;

  friend bool operator==(const DryRunLine&, const DryRunLine&) = default;
};

// What a dry run is given besides the new job's record and the sink.
struct DryRunContext {
  engine::Database* db = nullptr;  // for the Column and Row lines, read outside the load
  TaskContext task;                // the trial task: ids no real job or task has
  int64_t rows_shown = 10;
  int64_t filtered_shown = 100;
};

// How a job's turn on a worker ended (JobSource::TurnEnded).
enum class TurnEnd {
  // Paused, superseded, drained, failed, or a turn of concurrent tasks: the job may idle.
  kStopped,
  // Only because it ran its time (TaskRunner::kTaskChain) with more to load, one task at a
  // time: the job's next turn is due at once.
  kDueAgain,
};

class JobSource {
 public:
  virtual ~JobSource() = default;
  // `job`: a snapshot of the job (its committed offset, properties, epoch).
  virtual Result<Polled> Poll(const JobRecord& job, const BatchLimits& limits) = 0;
  virtual void Committed(const Offset& offset) = 0;
  // The job was resumed, or told to load items again (ALTER JOB ... RETRY): the next Poll
  // looks again at what is not loaded yet (a file source reconciles at once).
  virtual void LookAgain() {}
  // The job's turn on a worker ended (paused, superseded, or other jobs' turn): stop what was
  // prepared for a next task, so nothing runs for an idle job (a file source's read ahead drops
  // its downloads, unless `end` is kDueAgain; a change source's waits for its read to end and
  // keeps it for its next poll, which hands it out only if the job is still where it was read
  // for). What a source keeps after kDueAgain goes at its next TurnEnded(kStopped), at the
  // latest the first turn of the job paused (TaskRunner).
  virtual void TurnEnded(TurnEnd end) {}
  // Whether the job's next turn must run one task at a time whatever max_concurrent_tasks says
  // (a file source with crash suspects reads them alone: files/crash_suspects.h). May do I/O;
  // called outside the job's lock at the start of a turn.
  virtual bool OneTaskAtATime(const JobRecord& job) { return false; }
  // The job was dropped (no task of it runs any more): release what the source holds upstream
  // (a replication slot). An error is reported to the user; the job is gone regardless.
  virtual Status Drop(const JobRecord& job) { return Status::Ok(); }
  // Called every TaskPolicy::paused_check while the job is PAUSED, outside the job's lock and
  // possibly while a RESUME starts a task (so it must not touch what Poll uses): a note for
  // JobRuntimeMsg about what the source holds upstream meanwhile (a replication slot retaining
  // WAL), or "" for none. May do I/O; a failure to look is a note too.
  virtual std::string WhilePaused(const JobRecord& job) { return ""; }
  // Where the source reads, for logs (no secrets).
  virtual std::string Describe() const = 0;
  // Whether news of `path` (a file landed, or a directory appeared: `directory`) concerns this
  // source, so that its job is woken now rather than at its next poll (JobService::Wake). It
  // only wakes: what a task loads is still what the source lists (a file source told of a
  // file at or below `offset`, the job's committed one, reconciles in the turn it wakes: the
  // listing after the offset cannot see that late file). Any thread.
  virtual bool WantsEvent(const std::string& path, bool directory, const Offset& offset) {
    return false;
  }
  // What ALTER JOB may not change beyond the location (a change stream's tables and slot: its
  // offset means nothing for others), in words for the message; "" when nothing.
  virtual std::string FixedUpstream() const { return ""; }
  // VERIFY JOB: count(*) of each source table, on a connection of its own with the job's
  // parameters (never the task's: it may run meanwhile). NOT_SUPPORTED for sources without
  // tables (files: VERIFY JOB compares their listing with the ledger instead).
  virtual Result<std::vector<UpstreamTableRows>> CountRows() const {
    return Status::NotSupported("this job's source has no tables to count");
  }
  // EXPLAIN CREATE JOB: the first task of `job`, a job that has not run (its properties and
  // offset as CREATE JOB records them), up to its commit in a transaction of `sink` that is
  // rolled back, as the lines job_dry_run.h describes. NOT_SUPPORTED for sources without dry
  // runs (change streams: building one opens it upstream).
  virtual Result<std::vector<DryRunLine>> DryRun(const JobRecord& job, Sink& sink,
                                                 const DryRunContext& context) const {
    return Status::NotSupported("this job's source has no dry run");
  }
};

}  // namespace millrace::job
