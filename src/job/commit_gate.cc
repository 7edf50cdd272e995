#include "job/commit_gate.h"

#include "job/job_errors.h"

namespace millrace::job {

Progress CommitGate::ProgressOf(const JobRecord& snapshot, LoadedBatch& loaded,
                                const TaskRecord& task, int64_t now_us) const {
  Progress progress;
  progress.job = snapshot;
  CountSuccess(loaded.stats, now_us, &progress.job);
  progress.start = snapshot.current_offset;
  progress.epoch = snapshot.epoch;
  progress.ledger = std::move(loaded.ledger);
  progress.task = task;
  progress.task.state = TaskState::kSuccess;
  progress.task.stats = loaded.stats;
  progress.task.first_error_msg = loaded.first_error;
  progress.task.finish_time_us = now_us;
  progress.task_history = config_.task_history;
  progress.filtered_rows_kept = loaded.stats.filtered_rows > 0 ? config_.filtered_rows_kept : 0;
  return progress;
}

void CommitGate::CountSuccess(const LoadStatistic& stats, int64_t now_us, JobRecord* job) {
  job->succeed_tasks += 1;
  job->stats += stats;
  job->last_success_time_us = now_us;
}

Status CommitGate::CommitChecked(Job& job, int64_t epoch, SinkTransaction& txn) {
  if (job.record.epoch != epoch) return SupersededError();  // txn rolls back
  if (config_.fail_points != nullptr) {
    Status s = config_.fail_points->Check("task.before_commit", job.name);
    if (!s.ok()) return JobError(JobErrorCode::kLoad, s);
  }
  const Clock::SteadyTime commit_start = config_.clock->SteadyNow();
  if (Status s = txn.Commit(); !s.ok()) return JobError(JobErrorCode::kLoad, s);
  const Clock::SteadyTime committed = config_.clock->SteadyNow();
  job.commit_seconds.Observe(std::chrono::duration<double>(committed - commit_start).count());
  if (const int64_t woken = job.woken_at_us.exchange(Job::kNotWoken); woken != Job::kNotWoken) {
    const int64_t now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(committed.time_since_epoch()).count();
    job.wake_to_commit_seconds.Observe(static_cast<double>(now_us - woken) / 1e6);
  }
  if (config_.fail_points != nullptr) {
    // crash or nothing: the commit is done
    config_.fail_points->Check("task.after_commit", job.name).IgnoreError();
  }
  return Status::Ok();
}

void CommitGate::ShowCommitted(Job& job, const TaskRecord& committed, TaskRecord* task) {
  *task = committed;
  job.UpdateHistory(*task, config_.task_history);
  job.lag_items = 0;
  job.lag_bytes = 0;
  job.oldest_unloaded_us = 0;
  job.Publish();
}

Status CommitGate::Commit(Job& job, const JobRecord& snapshot, const SourceBatch& batch,
                          LoadedBatch loaded, JobSource& source, TaskRecord* task) {
  Progress progress =
      ProgressOf(snapshot, loaded, *task, MicrosSinceEpoch(config_.clock->WallNow()));
  const JobRecord& updated = progress.job;
  progress.job.current_offset = batch.end();
  SinkTransaction& txn = *loaded.txn;
  auto written = txn.WriteProgress(progress);
  if (!written.ok()) return JobError(JobErrorCode::kLoad, written.status());
  if (!*written) return SupersededError();
  {
    MutexLock lock(&job.mu);
    MR_RETURN_IF_ERROR(CommitChecked(job, snapshot.epoch, txn));
    JobRecord& r = job.record;
    r.current_offset = updated.current_offset;
    r.succeed_tasks = updated.succeed_tasks;
    r.stats = updated.stats;
    r.last_success_time_us = updated.last_success_time_us;
    ShowCommitted(job, progress.task, task);
  }
  source.Committed(batch.end());
  return Status::Ok();
}

Status CommitGate::CommitConcurrent(Job& job, const JobRecord& snapshot, LoadedBatch loaded,
                                    TaskWindow::Ticket ticket, Sink& sink, JobSource& source,
                                    TaskRecord* task, Status* row_failure) {
  const int64_t now_us = MicrosSinceEpoch(config_.clock->WallNow());
  Progress files = ProgressOf(snapshot, loaded, *task, now_us);
  files.part = Progress::Part::kFiles;
  SinkTransaction& txn = *loaded.txn;
  auto written = txn.WriteProgress(files);
  if (!written.ok()) return JobError(JobErrorCode::kLoad, written.status());
  if (!*written) return SupersededError();
  std::optional<Offset> moved;
  {
    MutexLock lock(&job.mu);
    if (!job.window.has_value()) return SupersededError();  // its turn ended
    MR_RETURN_IF_ERROR(CommitChecked(job, snapshot.epoch, txn));
    // The task's files are committed: from here on it succeeded, whatever the row's write does.
    moved = job.window->Commit(ticket);
    Progress row;
    row.part = Progress::Part::kJobRow;
    row.job = job.record;
    CountSuccess(files.task.stats, now_us, &row.job);
    if (moved) row.job.current_offset = *moved;
    row.start = job.record.current_offset;
    row.epoch = snapshot.epoch;
    row.task_history = config_.task_history;
    row.filtered_rows_kept = files.filtered_rows_kept;
    Status saved = [&]() -> Status {
      MR_ASSIGN_OR_RETURN(auto second, sink.Begin(snapshot.database));
      MR_ASSIGN_OR_RETURN(const bool expected, second->WriteProgress(row));
      if (!expected) {
        return Status::Aborted(
            "the job's row in the catalog is not at the offset or epoch the "
            "job has in memory");
      }
      return second->Commit();
    }();
    if (!saved.ok()) {
      *row_failure = JobError(JobErrorCode::kLoad,
                              saved.WithContext("task " + task->Label() +
                                                " committed its files; writing the job's row"));
    }
    job.record = row.job;
    ShowCommitted(job, files.task, task);
  }
  if (moved) source.Committed(*moved);
  return Status::Ok();
}

}  // namespace millrace::job
