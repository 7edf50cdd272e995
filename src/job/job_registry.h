// The registry of live jobs: each job's state behind a lock of its own, and snapshots of them
// for the views.
//
// Contract
// - JobRegistry's lock guards only the map (and the names being created); it is never held
//   while a job's lock is taken, nor across I/O.
// - Job::mu guards the job's state. It is held across DuckDB statements for this job only, where
//   exactly-once needs it: the commit gate holds it from the epoch check to the end of the
//   commit, so that a PAUSE, ALTER or DROP (which bump the epoch under it) either comes before
//   the commit and stops it, or after it and sees it (commit_gate.h); and the job's row is
//   written under it (statements, a pause after a failure, an automatic resume), because the
//   row's epoch is part of that check and its writes must land in the order of the epochs.
//   Other jobs, the scheduler and the views never wait for it.
// - Every change of a job's state ends with Publish(), under mu: the views read the published
//   snapshot (View()) and never wait for mu.
// - Thread-safety: all methods may be called concurrently; Job fields as annotated.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "engine/statement_plan.h"
#include "job/job_model.h"
#include "job/job_source.h"
#include "job/job_statement.h"
#include "job/sink.h"
#include "job/task_window.h"
#include "s3/s3_client.h"

namespace millrace::job {

// A job's definition checked and ready to run.
struct JobPlan {
  InsertAnalysis analysis;      // target table and source call (ALTER compares them)
  engine::RelationName target;  // the target table as DuckDB resolves it (privileges)
  std::shared_ptr<JobSource> source;
  // A job writing a table of an external catalog: its own sink (job_plan.h's ExternalRoute);
  // null for the others, which write through their worker's.
  std::shared_ptr<JobSinkSlot> own_sink;
};

// A job as the views show it.
struct JobRow {
  JobRecord record;
  engine::RelationName target;  // empty when the job's definition cannot run
  int64_t lag_items = 0;
  int64_t lag_bytes = 0;
  // What lag_items counts ("files", or "changes" for a change stream, whose lag_bytes are
  // bytes of WAL behind the source's position).
  std::string_view lag_unit = "files";
  // Last-modified time (microseconds since the epoch) of the oldest file counted in lag_items;
  // 0 when none (or the source does not tell, as a change stream).
  int64_t oldest_unloaded_us = 0;
  // The job's definition reads an object store (S3): Job::object_store counts its requests.
  bool reads_object_store = false;
};

class Job {
 public:
  Job(int64_t id, std::string name) : id(id), name(std::move(name)) {}

  const int64_t id;
  const std::string name;

  Mutex mu;
  JobRecord record GUARDED_BY(mu);
  // nullptr when the stored definition cannot run (the job is PAUSED with the reason).
  std::shared_ptr<const JobPlan> plan GUARDED_BY(mu);
  std::deque<TaskRecord> history GUARDED_BY(mu);  // oldest first; includes the running task
  bool task_running GUARDED_BY(mu) = false;       // a turn runs the job's tasks
  // The running tasks' sinks, for Interrupt (several with max_concurrent_tasks > 1).
  std::vector<Sink*> task_sinks GUARDED_BY(mu);
  // The batches of the running concurrent tasks (task_window.h); nullopt when the job's tasks
  // run one at a time or none runs.
  std::optional<TaskWindow> window GUARDED_BY(mu);
  // Interrupts every running task's statement (their sinks').
  void InterruptTasks() REQUIRES(mu) {
    for (Sink* sink : task_sinks)
      sink->Interrupt();
  }
  std::condition_variable task_done;  // signalled (with mu) when a task ends
  bool auto_resume_pending GUARDED_BY(mu) = false;
  // Tasks in a row that ended on a stale batch (IsStaleBatch) and had the job list again.
  int stale_batches GUARDED_BY(mu) = 0;
  int64_t lag_items GUARDED_BY(mu) = 0;
  int64_t lag_bytes GUARDED_BY(mu) = 0;
  int64_t oldest_unloaded_us GUARDED_BY(mu) = 0;  // JobRow::oldest_unloaded_us
  // The object-store requests of every source built for this job (PlanBuilder::Build), so the
  // counts survive an ALTER or a restart of the source; read lock-free by the metrics.
  const std::shared_ptr<s3::RequestStats> object_store = std::make_shared<s3::RequestStats>();
  // Durations since the server started, for the metrics (job_metrics.h): each task from its
  // start to its end (any outcome; observed by UpdateHistory), and each task's commit.
  Histogram task_seconds{
      std::vector<double>(std::begin(kDurationBuckets), std::end(kDurationBuckets))};
  Histogram commit_seconds{
      std::vector<double>(std::begin(kDurationBuckets), std::end(kDurationBuckets))};
  // From an event that woke the job (JobService::Wake) to its next commit: the first event
  // since the last commit counts (steady time in microseconds; kNotWoken: none pending).
  static constexpr int64_t kNotWoken = std::numeric_limits<int64_t>::min();
  std::atomic<int64_t> woken_at_us{kNotWoken};
  Histogram wake_to_commit_seconds{
      std::vector<double>(std::begin(kDurationBuckets), std::end(kDurationBuckets))};
  // Records an event's wake-up at `now` unless one is pending.
  void NoteWoken(Clock::SteadyTime now) {
    int64_t none = kNotWoken;
    woken_at_us.compare_exchange_strong(
        none,
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count());
  }

  // Adds or replaces the task in the history, keeping the newest `keep`; a task that ended
  // is observed in task_seconds.
  void UpdateHistory(const TaskRecord& task, int keep) REQUIRES(mu);
  // Publishes the state for the views.
  void Publish() REQUIRES(mu);

  struct View {
    JobRow row;
    std::vector<TaskRecord> tasks;
    // The job's tasks RUNNING now (several with max_concurrent_tasks).
    int64_t RunningTasks() const;
  };
  // The last published state; never waits for mu.
  std::shared_ptr<const View> view() const;

 private:
  mutable Mutex view_mu_;  // taken after mu, never before it
  std::shared_ptr<const View> view_ GUARDED_BY(view_mu_);
};

class JobRegistry {
 public:
  std::shared_ptr<Job> Find(std::string_view name) const;
  std::shared_ptr<Job> Get(int64_t id) const;
  std::vector<std::shared_ptr<Job>> All() const;

  // Claims `name` for a job being created and returns a new job id: ALREADY_EXISTS when a job
  // has the name or is being created with it. Add or Unreserve ends the claim.
  Result<int64_t> Reserve(const std::string& name);
  void Unreserve(const std::string& name);
  void Add(std::shared_ptr<Job> job);
  void Remove(int64_t id);

  std::vector<JobRow> SnapshotJobs() const;
  std::vector<TaskRecord> SnapshotTasks() const;

 private:
  mutable Mutex mu_;
  std::map<int64_t, std::shared_ptr<Job>> jobs_ GUARDED_BY(mu_);
  std::set<std::string, std::less<>> reserved_ GUARDED_BY(mu_);
  int64_t max_id_ GUARDED_BY(mu_) = 0;  // the greatest id given out or added
};

}  // namespace millrace::job
