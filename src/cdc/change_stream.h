// ChangeStream: the half of a change source that does not depend on the upstream database —
// which tables a job follows, their descriptions over time ("shapes"), snapshot cursors, the
// queue of whole source transactions, and the batches made of them. PgChangeSource and
// MysqlChangeSource each own one and feed it what their replication protocol delivers.
//
// Contract
// - Positions: a StreamPosition is where a source's log stands. `order` compares two positions
//   of one source (PostgreSQL: the LSN; MySQL: binlog file number << 32 | byte offset);
//   `offset` is how the job's offset spells it ({"lsn"} or {"file","pos","gtids"}); `label`
//   names it in task records.
// - Tables: every binding is followed until FollowOffsetTables reads the list a database-form
//   offset carries (BatchOffset adds it: the tables followed, fixed at the job's first poll; a
//   table that appears later is not followed, and one listed without a binding is an error).
// - Shapes: per table, every description seen; [0] is the catalog's at CREATE JOB. AddShape
//   appends one. For cdc_stream (one table, its own SELECT) it must still bind against the job's
//   SELECT and fill the same target columns, else FAILED_PRECONDITION saying so and what to do.
// - Snapshot cursors: a snapshot offset part is {"table", "key", "after"} (see
//   pg_change_source.h); SnapshotAt reads one, SnapshotBatch makes the batch of the rows read
//   after it and the offset that follows them (the next table at its first row when done).
// - Transactions: Received queues a whole source transaction when it ends after the last
//   position handed out (a restart replays older ones); TakeBatch hands out whole transactions
//   (at least one, more while within Bounds) or, when none is ready and the source reports a
//   later quiet position, an offset-only batch at most every kQuietCommitInterval.
// - Bounds: a batch takes what has arrived by the end of a poll (each source's poll budget),
//   up to kDefaultBatchBytes of change data, or the job's s3.max_batch_bytes and
//   s3.max_batch_files when it gave them: a small count would make a busy source's changes
//   wait a commit per few hundred. Full() tells a source's read loop to stop reading. A failure
//   met after some transactions were received is deferred: they go first, the failure comes
//   back from TakeDeferred at the next poll, so the job stops exactly before it.
// - Thread-safety: none; owned by its source and used by the job's task thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cdc/change_batch.h"
#include "common/clock.h"
#include "job/job_source.h"

namespace millrace::cdc {

// The offset part of a snapshot cursor ({"table", "key", "after"}: see the contract).
inline constexpr char kSnapshotPart[] = "snapshot";

struct StreamPosition {
  uint64_t order = 0;
  job::Offset offset;
  std::string label;
};

struct SourceTransaction {
  StreamPosition end;
  std::vector<Change> changes;
};

struct ChangeStreamConfig {
  std::vector<TableBinding> tables;  // at least one; the snapshot copies them in this order
  bool whole_database = false;       // FROM ... TO DATABASE
  std::string form;                  // "FROM POSTGRES", "FROM MYSQL": named in errors
  Clock* clock = nullptr;            // not owned
  engine::Database* db = nullptr;    // not owned; checks the SELECT after a schema change
  std::string database;              // the job's session database (the SELECT's names)
};

// Where a snapshot stands: the table being copied and the key of the last row copied.
struct SnapshotCursor {
  size_t table = 0;
  std::vector<std::string> after;  // empty: from the first row
};

class ChangeStream {
 public:
  explicit ChangeStream(ChangeStreamConfig config);

  const ChangeStreamConfig& config() const { return config_; }
  const std::vector<TableBinding>& tables() const { return config_.tables; }
  // "schema.a, schema.b"
  std::string TableList() const;
  // VERIFY JOB (JobSource::CountRows): each table's count(*) at the source, which `count`
  // reads as text (on a connection of the source's own), with its target. It reads only the
  // bindings, which never change after construction: it may run while the task polls.
  Result<std::vector<job::UpstreamTableRows>> CountRows(
      const std::function<Result<std::string>(const SourceTable&)>& count) const;

  // --- Tables followed
  // A new job: every table followed, and its first batch makes the missing targets.
  void StartOver();
  Status FollowOffsetTables(const job::Offset& offset);
  bool active(size_t b) const { return active_[b]; }
  // `position` plus, for the database form, the tables followed.
  job::Offset BatchOffset(const job::Offset& position) const;

  // --- Shapes
  uint32_t Shape(size_t b) const { return static_cast<uint32_t>(shapes_[b].size() - 1); }
  const SourceTable& Latest(size_t b) const { return *shapes_[b].back(); }
  bool OnlyCatalogShape(size_t b) const { return shapes_[b].size() == 1; }
  Status AddShape(size_t b, SourceTable shape);

  // --- Snapshot
  Result<SnapshotCursor> SnapshotAt(const nlohmann::json& position) const;
  // The batch of `rows` (table `cursor.table`'s, in key order, after cursor.after) read in a
  // snapshot at `at`; `done`: the table has no more rows. `newest`: the source's latest known
  // position (the job's end offset).
  job::Polled SnapshotBatch(const job::JobRecord& job, const SnapshotCursor& cursor,
                            std::vector<change::Tuple> rows, int64_t bytes, bool done,
                            const StreamPosition& at, const job::Offset& newest);

  // --- Stream
  // Forgets what was received (the stream restarts at the job's offset).
  void Reset();
  // The end of the last batch handed out; unset after Reset.
  const std::optional<uint64_t>& handed() const { return handed_; }
  void SetHanded(uint64_t order) { handed_ = order; }
  // A stream (re)starts at `order`: quiet batches wait kQuietCommitInterval from now.
  void Restarted(uint64_t order);
  void Received(SourceTransaction transaction);
  bool has_ready() const { return !ready_.empty(); }
  // What a batch holds at most under the job's `limits` (see Bounds above).
  static job::BatchLimits Bounds(const job::BatchLimits& limits);
  // The ready transactions fill a batch under `limits`.
  bool Full(const job::BatchLimits& limits) const;
  void Defer(Status failure) { deferred_ = std::move(failure); }
  std::optional<Status> TakeDeferred();
  // The batch of a poll that read the stream from `at` (the job's offset): ready transactions,
  // else an offset-only batch to `quiet` when it is later, else none. `newest` is the job's end
  // offset, `lag_bytes` how far behind it the job is.
  job::Polled TakeBatch(const job::JobRecord& job, const StreamPosition& at,
                        const job::BatchLimits& limits, const std::optional<StreamPosition>& quiet,
                        const job::Offset& newest, int64_t lag_bytes);

  // Drops what a snapshot of job `job_id` left in the embedded database (ChangeBatch's seen
  // tables of a snapshot that did not finish): for a job that is dropped.
  Status DropSnapshotState(int64_t job_id) const;

  // Any batch of this source (the first after StartOver makes the missing targets).
  std::unique_ptr<job::SourceBatch> MakeBatch(job::Offset start, job::Offset end, std::string first,
                                              std::string last, std::vector<Change> changes,
                                              int64_t bytes,
                                              std::optional<SnapshotSync> snapshot = std::nullopt);

  static constexpr std::chrono::seconds kQuietCommitInterval{5};
  static constexpr int64_t kDefaultBatchBytes = int64_t{64} << 20;

 private:
  // The first followed table at or after `from` (tables.size() when none).
  size_t NextActive(size_t from) const;
  // A received transaction and the bytes of its rows (TupleBytes), counted once.
  struct Ready {
    SourceTransaction transaction;
    int64_t bytes = 0;
  };
  // Whole ready transactions for one batch: at least one, more while within `bounds`; adds
  // their rows' bytes to `bytes`.
  std::vector<SourceTransaction> TakeReady(const job::BatchLimits& bounds, int64_t* bytes);

  const ChangeStreamConfig config_;
  std::vector<bool> active_;    // per table: followed (see BatchOffset)
  bool make_targets_ = false;   // the next batch makes missing targets (after StartOver)
  ChangeBatch::Shapes shapes_;  // per table, every description seen; [0] is the catalog's
  std::optional<uint64_t> handed_;
  std::deque<Ready> ready_;  // received whole, not handed out
  int64_t ready_count_ = 0;  // changes in ready_
  int64_t ready_bytes_ = 0;  // their rows' bytes
  std::optional<Status> deferred_;
  Clock::SteadyTime last_batch_{};
};

}  // namespace millrace::cdc
