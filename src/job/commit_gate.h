// CommitGate: where a task's work becomes visible exactly once.
//
// Contract
// - Commit(job, snapshot, batch, loaded, task) writes, in the loaded batch's open transaction,
//   the job's new offset (batch.end()), statistics and counters — only if the stored job is
//   still RUNNING at batch.start() and at the snapshot's epoch (Sink::WriteProgress) — the
//   ledger entries and the task record; then, under the job's lock, checks that the job's
//   epoch is still the snapshot's and commits. PAUSE, ALTER and DROP bump the epoch under the
//   same lock, so a task commits only if no such statement came first. The job's lock is held
//   across that one commit (and only for this job): other jobs and the views go on.
// - On success the job's in-memory state shows the commit (offset, counters, history) and the
//   source is told (JobSource::Committed) after the lock is released. Otherwise nothing was
//   committed and the error is returned: SUPERSEDED (job_errors.h) when the job no longer
//   expects the task, the sink's error otherwise (code LOAD_ERR).
// - Crash windows, each a fail point scoped by the job's name: "task.before_commit" (rows,
//   offset, ledger and task record written in the open transaction; checked under the job's
//   lock, just before the commit) and "task.after_commit".
#pragma once

#include "common/clock.h"
#include "common/fail_point.h"
#include "job/job_registry.h"
#include "job/job_source.h"

namespace millrace::job {

struct CommitGateConfig {
  Clock* clock = nullptr;                   // not owned
  const FailPoints* fail_points = nullptr;  // may be null
  int task_history = 100;
  int64_t filtered_rows_kept = 10'000;  // filtered rows kept per job
};

class CommitGate {
 public:
  explicit CommitGate(CommitGateConfig config) : config_(config) {}

  // `task` is the running task's record; on success it is the committed one.
  Status Commit(Job& job, const JobRecord& snapshot, const SourceBatch& batch, LoadedBatch loaded,
                JobSource& source, TaskRecord* task);

 private:
  const CommitGateConfig config_;
};

}  // namespace millrace::job
