// TaskRunner: a job's turn on a worker — one task after another: poll the source for a batch,
// load it, commit it through the commit gate; retries; the pause after the last retry and the
// automatic resume after it.
//
// Contract
// - RunTurn(job, sink) runs on the worker that claimed the job from the scheduler. It resumes
//   the job first when an automatic resume is due; then runs tasks while each commits and the
//   source has more (up to kTaskChain, then other jobs get their turn: the source hears
//   TurnEnd::kDueAgain and may keep its read ahead; any other end is kStopped), and schedules the
//   job's next turn: at once when more is ready, after max_interval when the source is
//   drained, sooner when items are not ready yet.
// - A turn starts only while the job's definer holds what the job needs (job_access.h);
//   otherwise the job is PAUSED with ACCESS_DENIED_ERR, which does not resume by itself.
// - A job with a sink of its own (JobPlan::own_sink: an external table) runs its tasks through
//   it. Each turn first fences the job's earlier epochs out of that sink (Sink::Fence: a server
//   that took the job over does so before its first task), then asks it for the progress it
//   keeps (Sink::KeptProgressOf, which
//   reads it only while the two may differ): when it is ahead of the job's offset (a crash between
//   the sink's commit and the catalog's), the job takes it, with the sink's ledger, before its next
//   task. A sink that cannot be reached pauses the job as a failed task would (and it resumes
//   itself).
// - A task that fails is retried task_retries times with a growing backoff (the batch is
//   loaded again from scratch), except for errors that retrying cannot fix (IsFinalTaskError).
//   After the last retry the job is PAUSED with ErrorMsg {code, msg}; it resumes itself after
//   AutoResumeDelay(n), up to auto_resume_limit times, unless AllowsAutoResume(code) is false.
// - A task superseded by PAUSE, ALTER or DROP (the epoch moved) is CANCELED, never FAILED.
// - max_concurrent_tasks > 1 (file jobs into the embedded catalog's DUPLICATE tables: the
//   properties refuse it elsewhere) runs that many tasks in the job's turn (task_runner_lanes.cc):
//   the worker's and more on threads of the turn, each with a sink of its own from a pool. They
//   take consecutive batches through Job::window (task_window.h) and commit each through
//   CommitGate::CommitConcurrent. A task that fails keeps its files for the next attempt (the
//   offset stays before them) and stops the turn's dispatch; the tasks still running commit,
//   then the job is paused as after any failure. A stale batch or a cancelled task ends the
//   turn's dispatch the same way, and the next turn starts a new window from the offset. The
//   count is read at the start of each turn, so an ALTER takes effect at the next batch.
// - The job's lock is taken for short sections and to write the job's row (its epoch is part of
//   the exactly-once check, so the row's writes must land in the order of the epochs); it is
//   not held while a batch is listed, fetched or loaded.
// - Thread-safety: RunTurn may run concurrently for different jobs; Stop from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/fail_point.h"
#include "job/commit_gate.h"
#include "job/job_access.h"
#include "job/job_registry.h"
#include "job/job_store.h"
#include "job/scheduler.h"
#include "job/task_policy.h"

namespace millrace::job {

struct TaskRunnerConfig {
  Clock* clock = nullptr;                   // not owned
  JobStore* catalog = nullptr;              // not owned
  Scheduler* scheduler = nullptr;           // not owned
  const FailPoints* fail_points = nullptr;  // may be null
  const JobAccess* access = nullptr;        // not owned; null: the definer is not checked
  TaskPolicy policy;
  // Sinks for a job's concurrent tasks beyond its worker's own (kept in a pool between turns);
  // empty: every job runs one task at a time.
  SinkFactory make_sink;
};

class TaskRunner {
 public:
  // How long a worker keeps running tasks of one job while each leaves more for the next.
  static constexpr std::chrono::seconds kTaskChain{10};
  // When the definer's rights cannot be checked yet (JobAccess::DefinerMayRun is UNAVAILABLE).
  static constexpr std::chrono::milliseconds kAccessRetry{200};

  explicit TaskRunner(TaskRunnerConfig config);

  void RunTurn(Job& job, Sink& sink);
  // Running and later tasks end as soon as they can (their statements are interrupted by the
  // caller through the job's sink).
  void Stop() { stopping_ = true; }

  // Pauses `job` after `failure` (the task's, when `task` is set). Also used by statements.
  void PauseAfterFailure(Job& job, TaskRecord* task, const Status& failure) REQUIRES(job.mu);

 private:
  // Ends `task` CANCELED with `why` (nothing of it committed) and publishes the job.
  void EndCanceled(Job& job, TaskRecord* task, const Status& why) REQUIRES(job.mu);
  // One task; true when it committed a batch and the source has more ready.
  bool RunTask(Job& job, Sink& sink);
  Result<Polled> PollWithRetries(Job& job, JobSource& source, const JobRecord& snapshot,
                                 const BatchLimits& limits);
  // The poll's news into the job: runtime message, end offset, lag.
  void NoteListing(Job& job, const Polled& polled) REQUIRES(job.mu);
  // The source had no batch: the next turn is scheduled (or a ONCE job finishes).
  void NothingToLoad(Job& job, const Polled& polled) REQUIRES(job.mu);
  // A RUNNING task for `batch`, in the job's history.
  TaskRecord StartTask(Job& job, const SourceBatch& batch) REQUIRES(job.mu);
  // Loads `batch` and commits it with `commit`, retrying as the policy says; the last failure.
  Status LoadAndCommit(Job& job, SourceBatch& batch, Sink& sink, const TaskContext& context,
                       int64_t epoch, const TaskRecord& task,
                       const std::function<Status(LoadedBatch)>& commit) EXCLUDES(job.mu);
  enum class TaskEnding {
    kRowDiffers,  // SUPERSEDED although the epoch did not move: RowDiffersError pauses
    kCanceled,    // PAUSE, ALTER, DROP or a stop
    kStale,       // a file changed since it was listed (IsStaleBatch)
    kFailed,
  };
  TaskEnding EndingOf(Job& job, const Status& failure, int64_t epoch) REQUIRES(job.mu);
  // A stale batch (kStale): the task ends CANCELED and true, unless the job's stale batches in a
  // row reached task_retries (false: the caller pauses the job as for other failures).
  bool EndStale(Job& job, TaskRecord* task, const Status& failure) REQUIRES(job.mu);
  static Status RowDiffersError();

  // Concurrent tasks (task_runner_lanes.cc).
  struct LaneTurn;
  void RunLanes(Job& job, Sink& sink, int lanes, int64_t epoch, std::shared_ptr<const JobPlan> plan)
      EXCLUDES(job.mu);
  void RunLane(Job& job, LaneTurn& turn, Sink& sink) EXCLUDES(job.mu);
  Result<std::unique_ptr<Sink>> TakeSink() EXCLUDES(pool_mu_);
  void ReturnSink(std::unique_ptr<Sink> sink) EXCLUDES(pool_mu_);
  // The job's own sink, with the job brought to the progress that sink keeps; null (the job
  // paused) when it cannot be made or reached.
  Sink* OwnSink(Job& job, JobSinkSlot& slot) EXCLUDES(job.mu);
  // Resumes a job whose automatic resume is due; false when it stays paused.
  bool AutoResume(Job& job) REQUIRES(job.mu);
  // A turn of a PAUSED job: its source's note on what it holds upstream into JobRuntimeMsg
  // (unless the job changed meanwhile), and the next look in TaskPolicy::paused_check.
  void WatchPaused(Job& job, const JobPlan& plan, int64_t epoch) EXCLUDES(job.mu);
  bool Superseded(Job& job, int64_t epoch) REQUIRES(job.mu) {
    return stopping_ || job.record.epoch != epoch;
  }

  const TaskRunnerConfig config_;
  CommitGate gate_;
  std::atomic<bool> stopping_{false};
  Mutex pool_mu_;
  std::vector<std::unique_ptr<Sink>> spare_sinks_ GUARDED_BY(pool_mu_);
};

}  // namespace millrace::job
