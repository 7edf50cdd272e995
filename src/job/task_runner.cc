#include "job/task_runner.h"

#include "common/logging.h"
#include "job/job_errors.h"

namespace millrace::job {

TaskRunner::TaskRunner(TaskRunnerConfig config)
    : config_(config),
      gate_(CommitGateConfig{config.clock, config.fail_points, config.policy.task_history}) {}

void TaskRunner::RunTurn(Job& job, Sink& sink) {
  int64_t epoch = 0;
  std::shared_ptr<const JobPlan> plan;
  {
    MutexLock lock(&job.mu);
    if (job.record.state == JobState::kPaused && job.auto_resume_pending && !AutoResume(job)) {
      return;
    }
    if (job.record.state == JobState::kPaused && !job.auto_resume_pending && job.plan != nullptr) {
      epoch = job.record.epoch;
      plan = job.plan;
    }
  }
  if (plan != nullptr) {
    // What a turn that ended kDueAgain left prepared goes now that the job is paused.
    plan->source->TurnEnded(TurnEnd::kStopped);
    return WatchPaused(job, *plan, epoch);
  }
  // The definer's rights, checked without the job's lock (the check reads the catalog through
  // DuckDB), then the turn starts only if nothing changed the job meanwhile.
  JobRecord record;
  {
    MutexLock lock(&job.mu);
    if (job.record.state != JobState::kRunning || job.plan == nullptr) return;
    record = job.record;
    epoch = job.record.epoch;
    plan = job.plan;
  }
  const Status allowed = config_.access == nullptr
                             ? Status::Ok()
                             : config_.access->DefinerMayRun(record.definer, *plan,
                                                             record.insert_sql, record.database);
  {
    MutexLock lock(&job.mu);
    if (job.record.state != JobState::kRunning || job.plan != plan || Superseded(job, epoch)) {
      return;
    }
    if (allowed.code() == StatusCode::kUnavailable) {
      // Restored jobs turn before the server's gate is up: the turn comes back shortly.
      config_.scheduler->Schedule(job.id, config_.clock->SteadyNow() + kAccessRetry);
      return;
    }
    if (!allowed.ok()) {
      PauseAfterFailure(job, nullptr, JobError(JobErrorCode::kAccessDenied, allowed));
      return;
    }
  }
  // Outside the job's lock: the source may read what it needs to answer.
  const bool one_at_a_time = plan->source->OneTaskAtATime(record);
  Sink* use = &sink;
  int lanes = 1;
  if (plan->own_sink != nullptr) {
    use = OwnSink(job, *plan->own_sink);
    if (use == nullptr) return;
  }
  {
    MutexLock lock(&job.mu);
    if (job.record.state != JobState::kRunning || job.plan != plan || Superseded(job, epoch)) {
      return;
    }
    job.task_running = true;
    job.task_sinks = {use};
    // The properties refuse concurrent tasks for a job with a sink of its own.
    if (plan->own_sink == nullptr && !one_at_a_time) {
      lanes = static_cast<int>(job.record.properties.max_concurrent_tasks);
    }
  }
  TurnEnd end = TurnEnd::kStopped;
  if (lanes > 1) {
    RunLanes(job, *use, lanes, epoch, plan);
  } else {
    const Clock::SteadyTime until = config_.clock->SteadyNow() + kTaskChain;
    while (RunTask(job, *use)) {
      // A PAUSE, ALTER or DROP bumps the epoch before it waits for this task to end: the chain
      // must end with it, not start a task under the new epoch.
      MutexLock lock(&job.mu);
      if (Superseded(job, epoch) || job.record.state != JobState::kRunning) break;
      if (config_.clock->SteadyNow() >= until) {
        end = TurnEnd::kDueAgain;
        break;
      }
    }
  }
  {
    MutexLock lock(&job.mu);
    job.task_running = false;
    job.task_sinks.clear();
    // Under the job's lock, as Interrupt is: no interrupt of this chain reaches the sink's next.
    use->ClearInterrupt();
    job.task_done.notify_all();
  }
  // Outside the job's lock: a read ahead waits for its downloads in progress.
  plan->source->TurnEnded(end);
}

Sink* TaskRunner::OwnSink(Job& job, JobSinkSlot& slot) {
  JobRecord record;
  {
    MutexLock lock(&job.mu);
    record = job.record;
  }
  Result<Sink*> sink = slot.Get(record);
  // Fenced first: what the sink keeps is then no task of an earlier holder's can move.
  const Status fenced = sink.ok() ? (*sink)->Fence(record) : sink.status();
  Result<std::optional<KeptProgress>> kept = fenced.ok() ? (*sink)->KeptProgressOf(record) : fenced;
  Status adopted = kept.status();
  const bool behind = kept.ok() && kept->has_value() && !((*kept)->offset == record.current_offset);
  if (behind) {
    // The sink committed a task the catalog did not record: its files go into the ledger
    // first (a file below the offset and missing from the ledger would load again as late).
    adopted = config_.catalog->RecordFiles((*kept)->ledger);
  }
  MutexLock lock(&job.mu);
  if (job.record.epoch != record.epoch) return nullptr;  // changed meanwhile: the next turn
  if (!adopted.ok()) {
    PauseAfterFailure(job, nullptr, adopted);
    return nullptr;
  }
  if (behind) {
    JobRecord after = job.record;
    after.current_offset = (*kept)->offset;
    if (Status s = config_.catalog->SaveJob(after); !s.ok()) {
      PauseAfterFailure(job, nullptr, s);
      return nullptr;
    }
    MR_LOG(kWarning) << "job " << job.name << " takes the offset its sink committed, '"
                     << after.current_offset.ToJson() << "', over the catalog's '"
                     << record.current_offset.ToJson() << "'";
    job.record = after;
    job.Publish();
  }
  return *sink;
}

void TaskRunner::WatchPaused(Job& job, const JobPlan& plan, int64_t epoch) {
  JobRecord record;
  {
    MutexLock lock(&job.mu);
    record = job.record;
  }
  // Outside the job's lock: the source may ask its upstream.
  const std::string note = plan.source->WhilePaused(record);
  MutexLock lock(&job.mu);
  if (job.record.state != JobState::kPaused) return;
  config_.scheduler->Schedule(job.id, config_.clock->SteadyNow() + config_.policy.paused_check);
  // A job altered meanwhile is looked at again with its new source.
  if (job.record.epoch != epoch || job.record.runtime_msg == note) return;
  if (!note.empty()) MR_LOG(kWarning) << "job " << job.name << ": " << note;
  // Shown by jobs() at once; stored with the job's next write.
  job.record.runtime_msg = note;
  job.Publish();
}

bool TaskRunner::AutoResume(Job& job) {
  job.auto_resume_pending = false;
  JobRecord after = job.record;
  ++after.epoch;
  ++after.auto_resume_count;
  after.state = JobState::kRunning;
  after.runtime_msg = "resumed automatically after: " + after.error_msg;
  after.error_code.clear();
  after.error_msg.clear();
  if (Status s = config_.catalog->SaveJob(after); !s.ok()) {
    MR_LOG(kError) << "job " << job.name << " cannot resume: " << s.ToString();
    job.auto_resume_pending = true;  // try again later
    config_.scheduler->Schedule(job.id,
                                config_.clock->SteadyNow() + config_.policy.auto_resume_base);
    return false;
  }
  job.record = after;
  job.Publish();
  if (job.plan != nullptr) job.plan->source->LookAgain();
  MR_LOG(kInfo) << "job " << job.name << " resumed automatically (attempt "
                << after.auto_resume_count << ")";
  return true;
}

Result<Polled> TaskRunner::PollWithRetries(Job& job, JobSource& source, const JobRecord& snapshot,
                                           const BatchLimits& limits) {
  Result<Polled> polled = source.Poll(snapshot, limits);
  for (int attempt = 1; !polled.ok() && !IsFinalTaskError(polled.status()) &&
                        attempt <= config_.policy.task_retries && !stopping_;
       ++attempt) {
    MR_LOG(kWarning) << "job " << job.name << ": listing failed (attempt " << attempt
                     << "): " << polled.status().message();
    config_.clock->SleepFor(config_.policy.retry_backoff * attempt);
    polled = source.Poll(snapshot, limits);
  }
  return polled;
}

void TaskRunner::NoteListing(Job& job, const Polled& polled) {
  JobRecord& r = job.record;
  if (polled.note) r.runtime_msg = *polled.note;
  if (!polled.end_offset.empty()) r.end_offset = polled.end_offset;
  job.lag_items = polled.lag_items;
  job.lag_bytes = polled.lag_bytes;
  job.oldest_unloaded_us =
      polled.oldest_unloaded == Clock::WallTime{} ? 0 : MicrosSinceEpoch(polled.oldest_unloaded);
}

void TaskRunner::NothingToLoad(Job& job, const Polled& polled) {
  const Clock::SteadyTime now = config_.clock->SteadyNow();
  const JobProperties& props = job.record.properties;
  const auto max_interval = std::chrono::seconds(props.max_interval_seconds);
  if (polled.look_again) {
    // Items are not ready yet: look again soon, and a ONCE job is not finished.
    config_.scheduler->Schedule(job.id, now + *polled.look_again);
  } else if (props.ingestion_mode == IngestionMode::kOnce) {
    JobRecord finished = job.record;
    finished.state = JobState::kFinished;
    ++finished.epoch;
    if (Status s = config_.catalog->SaveJob(finished); !s.ok()) {
      MR_LOG(kError) << "job " << job.name << ": " << s.ToString();
      config_.scheduler->Schedule(job.id, now + max_interval);
    } else {
      job.record = finished;
      MR_LOG(kInfo) << "job " << job.name << " FINISHED (ingestion_mode ONCE)";
    }
  } else {
    config_.scheduler->Schedule(job.id, now + max_interval);
  }
  job.Publish();
}

TaskRecord TaskRunner::StartTask(Job& job, const SourceBatch& batch) {
  TaskRecord task;
  task.task_id = job.record.next_task_id++;
  task.job_id = job.id;
  task.job_name = job.name;
  task.state = TaskState::kRunning;
  task.create_time_us = MicrosSinceEpoch(config_.clock->WallNow());
  task.start_time_us = task.create_time_us;
  task.start_file = batch.first_item();
  task.end_file = batch.last_item();
  job.UpdateHistory(task, config_.policy.task_history);
  job.Publish();
  return task;
}

Status TaskRunner::LoadAndCommit(Job& job, SourceBatch& batch, Sink& sink,
                                 const TaskContext& context, int64_t epoch, const TaskRecord& task,
                                 const std::function<Status(LoadedBatch)>& commit) {
  Status failure;
  for (int attempt = 0; attempt <= config_.policy.task_retries; ++attempt) {
    if (attempt > 0) {
      MR_LOG(kWarning) << "job " << job.name << " task " << task.Label() << " failed (attempt "
                       << attempt << "), retrying: " << failure.message();
      config_.clock->SleepFor(config_.policy.retry_backoff * attempt);
    }
    {
      MutexLock lock(&job.mu);
      if (Superseded(job, epoch)) return SupersededError();
    }
    auto loaded = batch.Load(sink, context, attempt);
    failure = loaded.ok() ? commit(std::move(loaded).value()) : loaded.status();
    if (failure.ok()) {
      MR_LOG(kInfo) << "job " << job.name << " task " << task.Label() << " loaded "
                    << task.stats.file_number << " files, " << task.stats.scanned_rows
                    << " rows, offset now '" << task.end_file << "'";
      return failure;
    }
    if (IsFinalTaskError(failure) || IsStaleBatch(failure)) break;
  }
  return failure;
}

TaskRunner::TaskEnding TaskRunner::EndingOf(Job& job, const Status& failure, int64_t epoch) {
  const bool superseded = JobErrorOf(failure) == JobErrorCode::kSuperseded;
  if (superseded && !Superseded(job, epoch)) return TaskEnding::kRowDiffers;
  if (superseded || failure.code() == StatusCode::kCancelled || job.record.epoch != epoch) {
    return TaskEnding::kCanceled;
  }
  if (IsStaleBatch(failure)) return TaskEnding::kStale;
  return TaskEnding::kFailed;
}

Status TaskRunner::RowDiffersError() {
  // The stored job did not expect the task although no statement changed it here: its row
  // differs from the one in memory (a write of it failed). Pausing says so; cancelling the
  // task would leave a RUNNING job that never commits again.
  return JobError(JobErrorCode::kLoad,
                  Status::Aborted("the job's row in the catalog does not expect this task (its "
                                  "offset or epoch differ from the job's); the row is written "
                                  "again when the job resumes"));
}

bool TaskRunner::RunTask(Job& job, Sink& sink) {
  JobRecord snapshot;
  std::shared_ptr<const JobPlan> plan;
  {
    MutexLock lock(&job.mu);
    snapshot = job.record;
    plan = job.plan;
  }
  if (plan == nullptr) return false;  // RunTurn checked; a definition is replaced only when idle
  const JobProperties& props = snapshot.properties;
  JobSource& source = *plan->source;
  Result<Polled> polled = PollWithRetries(job, source, snapshot, BatchLimits::Of(props));
  TaskRecord task;
  {
    MutexLock lock(&job.mu);
    if (Superseded(job, snapshot.epoch)) return false;
    if (!polled.ok()) {
      PauseAfterFailure(job, nullptr, polled.status());
      return false;
    }
    NoteListing(job, *polled);
    if (polled->batch == nullptr) {
      NothingToLoad(job, *polled);
      return false;
    }
    task = StartTask(job, *polled->batch);
    snapshot.next_task_id = job.record.next_task_id;
    snapshot.end_offset = job.record.end_offset;
    snapshot.runtime_msg = job.record.runtime_msg;
  }

  SourceBatch& batch = *polled->batch;
  const TaskContext context{job.id, task.task_id, job.name, snapshot.database,
                            MicrosSinceEpoch(config_.clock->WallNow())};
  const Status failure =
      LoadAndCommit(job, batch, sink, context, snapshot.epoch, task, [&](LoadedBatch loaded) {
        return gate_.Commit(job, snapshot, batch, std::move(loaded), source, &task);
      });
  MutexLock lock(&job.mu);
  if (failure.ok()) {
    job.stale_batches = 0;
    if (!Superseded(job, snapshot.epoch)) {
      // A ONCE job polls once more to see that it is drained.
      const bool now_again = polled->more || props.ingestion_mode == IngestionMode::kOnce;
      const auto max_interval = std::chrono::seconds(props.max_interval_seconds);
      config_.scheduler->Schedule(job.id, now_again ? config_.clock->SteadyNow()
                                                    : config_.clock->SteadyNow() + max_interval);
    }
    return polled->more;
  }
  switch (EndingOf(job, failure, snapshot.epoch)) {
    case TaskEnding::kRowDiffers:
      task.first_error_msg.clear();
      PauseAfterFailure(job, &task, RowDiffersError());
      return false;
    case TaskEnding::kCanceled:
      EndCanceled(job, &task, failure);
      return false;
    case TaskEnding::kStale:
      if (EndStale(job, &task, failure)) {
        config_.scheduler->Schedule(job.id, config_.clock->SteadyNow());
        return false;
      }
      break;
    case TaskEnding::kFailed:
      break;
  }
  job.stale_batches = 0;
  task.first_error_msg = batch.first_error();
  PauseAfterFailure(job, &task, failure);
  return false;
}

bool TaskRunner::EndStale(Job& job, TaskRecord* task, const Status& failure) {
  // A file changed since it was listed or while it was read: the task ends, nothing of it
  // committed, and the job lists again at once, which takes the version to load (a file still
  // changing waits for the settle rule). A source that keeps answering so pauses the job as
  // other failures do.
  if (job.stale_batches >= config_.policy.task_retries) return false;
  ++job.stale_batches;
  MR_LOG(kInfo) << "job " << job.name << " task " << task->Label()
                << " ends, its batch is stale: " << failure.message();
  EndCanceled(job, task, failure);
  return true;
}

void TaskRunner::EndCanceled(Job& job, TaskRecord* task, const Status& why) {
  task->state = TaskState::kCanceled;
  task->error_msg = why.message();
  task->finish_time_us = MicrosSinceEpoch(config_.clock->WallNow());
  ++job.record.canceled_tasks;
  job.UpdateHistory(*task, config_.policy.task_history);
  job.Publish();
}

void TaskRunner::PauseAfterFailure(Job& job, TaskRecord* task, const Status& failure) {
  const JobErrorCode code = JobErrorOf(failure).value_or(JobErrorCode::kLoad);
  if (task != nullptr) {
    task->state = TaskState::kFailed;
    task->error_msg = failure.message();
    task->finish_time_us = MicrosSinceEpoch(config_.clock->WallNow());
    job.UpdateHistory(*task, config_.policy.task_history);
  }
  JobRecord after = job.record;
  ++after.failed_tasks;
  after.state = JobState::kPaused;
  after.manual_pause = false;
  after.error_code = std::string(JobErrorName(code));
  after.error_msg = failure.message();
  after.runtime_msg.clear();
  ++after.epoch;
  const bool auto_resume =
      after.auto_resume_count < config_.policy.auto_resume_limit && AllowsAutoResume(code);
  if (auto_resume) {
    const auto delay = AutoResumeDelay(after.auto_resume_count, config_.policy.auto_resume_base,
                                       config_.policy.auto_resume_cap);
    config_.scheduler->Schedule(job.id, config_.clock->SteadyNow() + delay);
    after.runtime_msg = "resumes automatically in " + std::to_string(delay.count()) + " s";
  } else {
    config_.scheduler->Schedule(job.id, config_.clock->SteadyNow() + config_.policy.paused_check);
  }
  MR_LOG(kError) << "job " << after.name << " PAUSED: " << after.error_code << ": "
                 << failure.message();
  if (Status s = config_.catalog->SaveJob(after); !s.ok()) {
    MR_LOG(kError) << "job " << after.name << ": cannot record the pause: " << s.ToString();
  }
  job.record = after;
  job.auto_resume_pending = auto_resume;
  job.Publish();
}

}  // namespace millrace::job
