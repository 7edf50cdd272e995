// ChangeBatch: one task's work of a change stream: a snapshot split, whole source
// transactions, or only a new position (an offset-only batch), for the tables of one source.
//
// Contract
// - Load applies the changes in one transaction of the sink: each table's changes in their
//   order (tables are independent, so one table after the other), in runs written with one
//   description of the table ("shape": 0 is the catalog's at CREATE JOB, under which the
//   binding was made; later ones come from the stream's Relation messages).
// - FROM ... TO DATABASE (sync_targets): before its first write to a target, the batch alters
//   it to fit every shape of its changes (target_schema.h AlterTarget), backfills added
//   columns before the first change of the shape that has them, and binds each run by name.
//   cdc_stream keeps its target and binding (the source checked the SELECT still binds).
// - make_targets (the job's first batch): the targets of bindings marked `create` are made
//   first, in the same transaction, unless they exist by then.
// - A snapshot split (SnapshotSync) makes the target hold exactly the source's rows at the end of
//   the table's snapshot, also when it held rows before (a job made again after its binlog or
//   slot was lost): the target keys of the rows each split writes are recorded in a table of the
//   job's (SeenTable, in the job's transaction, so a crash keeps it consistent); the table's
//   first split starts it afresh, its last deletes every target row whose key was not recorded
//   and drops it. Keys written or deleted by the stream meanwhile are none: the stream starts
//   after the snapshot, and replays every change after its position. A sink that copies its
//   rows elsewhere (SinkTransaction::TargetModel: an external table) has no target to compare
//   keys with: the table's first split empties the target (EmptyTarget) in its transaction.
// - Load may run more than once (a retried task): it does not consume its changes.
// - Thread-safety: one Load at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cdc/change_apply.h"
#include "cdc/source_table.h"
#include "job/job_source.h"

namespace millrace::cdc {

// A source table, as described when the job was defined, and where its changes go.
struct TableBinding {
  SourceTable table;
  ApplyTarget target;  // the SELECT over it and its UNIQUE target
  // FROM ... TO DATABASE: the target did not exist when the job was built; the job's first
  // batch makes it (target.def), in its transaction.
  bool create = false;
};

// Where a snapshot split stands in its table.
struct SnapshotSync {
  size_t table = 0;
  bool first = false;  // the table's first split
  bool last = false;   // the table's last split
};

class ChangeBatch final : public job::SourceBatch {
 public:
  // Per table, the descriptions its changes refer to by Change::shape.
  using Shapes = std::vector<std::vector<std::shared_ptr<const SourceTable>>>;
  // `tables`: the source's bindings, which outlive its batches (the plan holds both).
  ChangeBatch(job::Offset start, job::Offset end, std::string first, std::string last,
              std::vector<Change> changes, int64_t bytes, const std::vector<TableBinding>* tables,
              Shapes shapes, bool sync_targets, bool make_targets,
              std::optional<SnapshotSync> snapshot = std::nullopt);

  // The table recording the target keys a snapshot of table `table` wrote, for job `job_id`.
  static std::string SeenTable(int64_t job_id, size_t table);

  Result<job::LoadedBatch> Load(job::Sink& sink, const job::TaskContext& task,
                                int attempt) override;

 private:
  // `indices`: the positions in changes_ of table t's changes, in order.
  Result<int64_t> ApplyTable(job::SinkTransaction& txn, size_t t,
                             const std::vector<size_t>& indices, const std::string& seen) const;
  // Deletes the target rows of table t whose keys `seen` lacks, then drops it.
  Status EndSnapshot(engine::Connection& conn, size_t t, const std::string& seen) const;

  const std::vector<Change> changes_;
  const std::vector<TableBinding>* tables_;
  const Shapes shapes_;
  const bool sync_targets_;
  const bool make_targets_;
  const std::optional<SnapshotSync> snapshot_;
};

}  // namespace millrace::cdc
