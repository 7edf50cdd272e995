// TaskRunner's concurrent tasks (max_concurrent_tasks > 1): the lanes of a job's turn, each
// taking the window's next batch (task_window.h) and committing it on a sink of its own. The
// contract is in task_runner.h.
#include <thread>

#include "common/fault_record.h"
#include "common/logging.h"
#include "job/job_errors.h"
#include "job/task_runner.h"

namespace millrace::job {

// What the lanes of one turn share.
struct TaskRunner::LaneTurn {
  LaneTurn(int64_t epoch, std::shared_ptr<const JobPlan> plan, Clock::SteadyTime until)
      : epoch(epoch), plan(std::move(plan)), until(until) {}

  const int64_t epoch;
  const std::shared_ptr<const JobPlan> plan;
  const Clock::SteadyTime until;  // no batch is taken after this (TaskRunner::kTaskChain)
  // One listing at a time (a source's Poll is called by one thread at a time). A lane keeps it
  // through a batch of late files, to its commit: the reconciliation in a later listing would
  // find those files again while they load (they are below the offset, not in the ledger yet).
  Mutex poll_mu;
  Mutex mu;                               // taken after the job's lock, never before it
  bool stop GUARDED_BY(mu) = false;       // no more batches in this turn
  bool drained GUARDED_BY(mu) = false;    // a batch left nothing after it when it was listed
  bool scheduled GUARDED_BY(mu) = false;  // NothingToLoad scheduled the next turn
  bool stale GUARDED_BY(mu) = false;      // a batch was stale: the next turn lists at once
  // The first failure, and its task when one ran: the job pauses with it after the turn.
  Status failure GUARDED_BY(mu);
  std::optional<TaskRecord> failed_task GUARDED_BY(mu);

  void Stop() EXCLUDES(mu) {
    MutexLock lock(&mu);
    stop = true;
  }
  bool Stopped() EXCLUDES(mu) {
    MutexLock lock(&mu);
    return stop;
  }
  void Fail(Status why, std::optional<TaskRecord> task) EXCLUDES(mu) {
    MutexLock lock(&mu);
    stop = true;
    if (!failure.ok()) return;
    failure = std::move(why);
    failed_task = std::move(task);
  }
};

namespace {

// poll_mu, released at the latest when it goes.
class PollLock {
 public:
  explicit PollLock(Mutex* mu) NO_THREAD_SAFETY_ANALYSIS : mu_(mu) { mu_->Lock(); }
  ~PollLock() NO_THREAD_SAFETY_ANALYSIS {
    if (held_) mu_->Unlock();
  }
  void Release() NO_THREAD_SAFETY_ANALYSIS {
    if (held_) mu_->Unlock();
    held_ = false;
  }

 private:
  Mutex* const mu_;
  bool held_ = true;
};

}  // namespace

Result<std::unique_ptr<Sink>> TaskRunner::TakeSink() {
  {
    MutexLock lock(&pool_mu_);
    if (!spare_sinks_.empty()) {
      std::unique_ptr<Sink> sink = std::move(spare_sinks_.back());
      spare_sinks_.pop_back();
      return sink;
    }
  }
  if (!config_.make_sink) return Status::FailedPrecondition("no sinks for concurrent tasks");
  return config_.make_sink();
}

void TaskRunner::ReturnSink(std::unique_ptr<Sink> sink) {
  MutexLock lock(&pool_mu_);
  spare_sinks_.push_back(std::move(sink));
}

void TaskRunner::RunLanes(Job& job, Sink& sink, int lanes, int64_t epoch,
                          std::shared_ptr<const JobPlan> plan) {
  LaneTurn turn(epoch, std::move(plan), config_.clock->SteadyNow() + kTaskChain);
  std::vector<std::unique_ptr<Sink>> sinks;
  for (int i = 1; i < lanes; ++i) {
    auto made = TakeSink();
    if (!made.ok()) {
      // Fewer tasks at once, not none: the worker's own sink still runs one.
      MR_LOG(kWarning) << "job " << job.name << ": " << i << " of " << lanes
                       << " tasks at once: " << made.status().message();
      break;
    }
    sinks.push_back(std::move(made).value());
  }
  {
    MutexLock lock(&job.mu);
    job.window.emplace(job.record.current_offset);
    for (const auto& s : sinks)
      job.task_sinks.push_back(s.get());
  }
  std::vector<std::thread> threads;
  for (const auto& s : sinks) {
    threads.emplace_back([this, &job, &turn, lane = s.get()] {
      ProtectThisThread();
      RunLane(job, turn, *lane);
    });
  }
  RunLane(job, turn, sink);
  for (std::thread& t : threads)
    t.join();

  {
    MutexLock lock(&job.mu);
    job.window.reset();
    // Under the job's lock, as Interrupt is (RunTurn clears the worker's own).
    for (const auto& s : sinks)
      s->ClearInterrupt();
    job.task_sinks = {&sink};
    MutexLock state(&turn.mu);
    if (Superseded(job, epoch)) {
      // The statement that moved the epoch decides what comes next.
    } else if (!turn.failure.ok()) {
      TaskRecord* task = turn.failed_task ? &*turn.failed_task : nullptr;
      PauseAfterFailure(job, task, turn.failure);
    } else if (turn.scheduled) {
      // NothingToLoad scheduled the next turn.
    } else if (turn.drained && !turn.stale) {
      const JobProperties& props = job.record.properties;
      // A ONCE job polls once more to see that it is drained.
      const auto wait = props.ingestion_mode == IngestionMode::kOnce
                            ? std::chrono::seconds(0)
                            : std::chrono::seconds(props.max_interval_seconds);
      config_.scheduler->Schedule(job.id, config_.clock->SteadyNow() + wait);
    } else {
      config_.scheduler->Schedule(job.id, config_.clock->SteadyNow());
    }
  }
  for (auto& s : sinks)
    ReturnSink(std::move(s));
}

void TaskRunner::RunLane(Job& job, LaneTurn& turn, Sink& sink) {
  JobSource& source = *turn.plan->source;
  while (!turn.Stopped()) {
    PollLock poll(&turn.poll_mu);
    JobRecord snapshot;
    BatchLimits limits;
    {
      MutexLock lock(&job.mu);
      if (Superseded(job, turn.epoch) || job.record.state != JobState::kRunning ||
          !job.window.has_value() || job.window->stopped() ||
          config_.clock->SteadyNow() >= turn.until) {
        return;
      }
      snapshot = job.record;
      limits = BatchLimits::Of(snapshot.properties);
      limits.after = job.window->dispatched();
    }
    if (turn.Stopped()) return;
    Result<Polled> polled = PollWithRetries(job, source, snapshot, limits);
    TaskRecord task;
    TaskWindow::Ticket ticket;
    {
      MutexLock lock(&job.mu);
      if (Superseded(job, turn.epoch)) return;
      if (!polled.ok()) {
        turn.Fail(polled.status(), std::nullopt);
        return;
      }
      NoteListing(job, *polled);
      if (polled->batch == nullptr) {
        turn.Stop();
        if (job.window->in_flight() > 0) {
          // The tasks still out end the turn; the next one lists again.
          MutexLock state(&turn.mu);
          turn.drained = true;
          return;
        }
        NothingToLoad(job, *polled);
        MutexLock state(&turn.mu);
        turn.scheduled = true;
        return;
      }
      auto dispatched = job.window->Dispatch(polled->batch->start(), polled->batch->end());
      if (!dispatched.ok()) {
        turn.Fail(JobError(JobErrorCode::kLoad, dispatched.status()), std::nullopt);
        return;
      }
      ticket = *dispatched;
      task = StartTask(job, *polled->batch);
    }
    SourceBatch& batch = *polled->batch;
    if (batch.advances()) poll.Release();  // the next lane lists after this batch
    const TaskContext context{job.id, task.task_id, job.name, snapshot.database,
                              MicrosSinceEpoch(config_.clock->WallNow())};
    Status row_failure;
    const Status failure =
        LoadAndCommit(job, batch, sink, context, turn.epoch, task, [&](LoadedBatch loaded) {
          return gate_.CommitConcurrent(job, snapshot, std::move(loaded), ticket, sink, source,
                                        &task, &row_failure);
        });
    poll.Release();
    MutexLock lock(&job.mu);
    if (failure.ok()) {
      job.stale_batches = 0;
      if (!row_failure.ok()) {
        turn.Fail(row_failure, std::nullopt);
        return;
      }
      if (!polled->more) {
        MutexLock state(&turn.mu);
        turn.drained = true;
        turn.stop = true;
        return;
      }
      continue;
    }
    job.window->Abandon(ticket);
    switch (EndingOf(job, failure, turn.epoch)) {
      case TaskEnding::kRowDiffers:
        task.first_error_msg.clear();
        turn.Fail(RowDiffersError(), task);
        return;
      case TaskEnding::kCanceled:
        EndCanceled(job, &task, failure);
        turn.Stop();
        return;
      case TaskEnding::kStale:
        if (EndStale(job, &task, failure)) {
          // The next turn lists its files again.
          MutexLock state(&turn.mu);
          turn.stale = true;
          turn.stop = true;
          return;
        }
        break;
      case TaskEnding::kFailed:
        break;
    }
    task.first_error_msg = batch.first_error();
    turn.Fail(failure, task);
    return;
  }
}

}  // namespace millrace::job
