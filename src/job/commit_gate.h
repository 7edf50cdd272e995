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
// - CommitConcurrent is Commit for one of a job's concurrent tasks (task_window.h): the task's
//   transaction writes its rows, ledger and task record only (Progress::Part::kFiles, checking
//   that the job is RUNNING at the snapshot's epoch); under the job's lock it commits, marks the
//   batch committed in Job::window, and writes the job's row (the offset moved to the window's
//   frontier, the counters) in a second transaction on `sink` (Part::kJobRow), so the row's
//   writes are one at a time. Its Status is the task's: OK once its files committed. When the
//   job's row could not be written after that, `row_failure` says why (the row in the catalog
//   is behind the one in memory: the caller pauses the job, which writes it whole).
// - Crash windows, each a fail point scoped by the job's name: "task.before_commit" (rows,
//   offset, ledger and task record written in the open transaction; checked under the job's
//   lock, just before the commit) and "task.after_commit" (for a concurrent task: its files
//   committed, the job's row not written yet).
#pragma once

#include "common/clock.h"
#include "common/fail_point.h"
#include "job/job_registry.h"
#include "job/job_source.h"
#include "job/task_window.h"

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
  Status CommitConcurrent(Job& job, const JobRecord& snapshot, LoadedBatch loaded,
                          TaskWindow::Ticket ticket, Sink& sink, JobSource& source,
                          TaskRecord* task, Status* row_failure);

 private:
  // The progress of a task that loaded `loaded` (its ledger moved into it) from `snapshot`,
  // its task record SUCCESS.
  Progress ProgressOf(const JobRecord& snapshot, LoadedBatch& loaded, const TaskRecord& task,
                      int64_t now_us) const;
  // What a task that loaded `stats` and committed at `now_us` adds to its job's row.
  static void CountSuccess(const LoadStatistic& stats, int64_t now_us, JobRecord* job);
  // Under the job's lock: the epoch check, the fail point before the commit, the commit, its
  // timing in the job's metrics and the fail point after it.
  Status CommitChecked(Job& job, int64_t epoch, SinkTransaction& txn) REQUIRES(job.mu);
  // The committed task into `task` and the job's history, the lag it loaded cleared, published.
  void ShowCommitted(Job& job, const TaskRecord& committed, TaskRecord* task) REQUIRES(job.mu);

  const CommitGateConfig config_;
};

}  // namespace millrace::job
