#include "job/job_registry.h"

#include <algorithm>

namespace millrace::job {

void Job::UpdateHistory(const TaskRecord& task, int keep) {
  const bool ended = task.state == TaskState::kSuccess || task.state == TaskState::kFailed ||
                     task.state == TaskState::kCanceled;
  if (ended && task.finish_time_us > 0) {
    task_seconds.Observe(static_cast<double>(task.finish_time_us - task.start_time_us) / 1e6);
  }
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->task_id == task.task_id) {
      *it = task;
      return;
    }
  }
  history.push_back(task);
  while (static_cast<int>(history.size()) > keep)
    history.pop_front();
}

void Job::Publish() {
  auto view = std::make_shared<View>();
  const bool change_stream =
      plan != nullptr && plan->analysis.source == load::SourceKind::kCdcStream;
  view->row = JobRow{record,
                     plan != nullptr ? plan->target : engine::RelationName{},
                     lag_items,
                     lag_bytes,
                     change_stream ? "changes" : "files",
                     oldest_unloaded_us,
                     plan != nullptr && plan->analysis.source == load::SourceKind::kS3};
  view->tasks.assign(history.begin(), history.end());
  MutexLock lock(&view_mu_);
  view_ = std::move(view);
}

int64_t Job::View::RunningTasks() const {
  return std::count_if(tasks.begin(), tasks.end(),
                       [](const TaskRecord& t) { return t.state == TaskState::kRunning; });
}

std::shared_ptr<const Job::View> Job::view() const {
  MutexLock lock(&view_mu_);
  return view_;
}

std::shared_ptr<Job> JobRegistry::Find(std::string_view name) const {
  MutexLock lock(&mu_);
  for (const auto& [id, job] : jobs_) {
    if (job->name == name) return job;
  }
  return nullptr;
}

std::shared_ptr<Job> JobRegistry::Get(int64_t id) const {
  MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Job>> JobRegistry::All() const {
  MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Job>> all;
  for (const auto& [id, job] : jobs_)
    all.push_back(job);
  return all;
}

Result<int64_t> JobRegistry::Reserve(const std::string& name) {
  MutexLock lock(&mu_);
  bool taken = reserved_.count(name) > 0;
  for (const auto& [id, job] : jobs_)
    taken = taken || job->name == name;
  if (taken) return Status::AlreadyExists("job " + name + " already exists");
  reserved_.insert(name);
  return ++max_id_;
}

void JobRegistry::Unreserve(const std::string& name) {
  MutexLock lock(&mu_);
  reserved_.erase(name);
}

void JobRegistry::Add(std::shared_ptr<Job> job) {
  MutexLock lock(&mu_);
  reserved_.erase(job->name);
  max_id_ = std::max(max_id_, job->id);
  jobs_[job->id] = std::move(job);
}

void JobRegistry::Remove(int64_t id) {
  MutexLock lock(&mu_);
  jobs_.erase(id);
}

std::vector<JobRow> JobRegistry::SnapshotJobs() const {
  std::vector<JobRow> rows;
  for (const auto& job : All()) {
    if (auto view = job->view()) rows.push_back(view->row);
  }
  return rows;
}

std::vector<TaskRecord> JobRegistry::SnapshotTasks() const {
  std::vector<TaskRecord> rows;
  for (const auto& job : All()) {
    if (auto view = job->view()) rows.insert(rows.end(), view->tasks.begin(), view->tasks.end());
  }
  return rows;
}

}  // namespace millrace::job
