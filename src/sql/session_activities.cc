#include "sql/session_activities.h"

#include <algorithm>

#include "sql/mysql_errors.h"

namespace millrace::sql {

void SessionActivities::Add(uint64_t connection, engine::Connection* conn,
                            const SessionInfo* info) {
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  Activity& activity = activities_[connection];
  activity.conn = conn;
  activity.info = info;
  activity.since = now;
}

void SessionActivities::Remove(uint64_t connection) {
  MutexLock lock(&mu_);
  activities_.erase(connection);
}

void SessionActivities::SetKillHook(uint64_t connection, std::function<void()> hook) {
  MutexLock lock(&mu_);
  activities_[connection].on_kill = std::move(hook);
}

bool SessionActivities::Killed(uint64_t connection) const {
  MutexLock lock(&mu_);
  auto it = activities_.find(connection);
  return it != activities_.end() && it->second.killed;
}

void SessionActivities::Begin(uint64_t connection, std::string statement,
                              std::optional<std::string> database, StatementBound bound) {
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  Activity& activity = activities_[connection];
  // A new statement's bound; an ended one keeps whether it timed out, for its error.
  activity.timed_out = false;
  activity.deadline =
      bound.seconds > 0 ? now + std::chrono::seconds(bound.seconds) : Clock::SteadyTime::max();
  activity.bound = std::move(bound);
  activity.statement = std::move(statement);
  activity.database = std::move(database);
  activity.since = now;
}

void SessionActivities::End(uint64_t connection, std::optional<std::string> database) {
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  Activity& activity = activities_[connection];
  // A KILL QUERY of the statement that ends here must not reach the next one.
  if (activity.conn != nullptr) activity.conn->ClearInterrupt();
  activity.deadline = Clock::SteadyTime::max();
  activity.statement.clear();
  activity.database = std::move(database);
  activity.since = now;
}

std::optional<StatementBound> SessionActivities::TimedOut(uint64_t connection) const {
  MutexLock lock(&mu_);
  auto it = activities_.find(connection);
  if (it == activities_.end() || !it->second.timed_out) return std::nullopt;
  return it->second.bound;
}

std::vector<ProcessInfo> SessionActivities::Processes() const {
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  std::vector<ProcessInfo> out;
  for (const auto& [connection, activity] : activities_) {
    if (activity.info == nullptr) continue;
    const SessionInfo& info = *activity.info;
    out.push_back(ProcessInfo{
        info.connection_id, info.user, info.host, activity.database, !activity.statement.empty(),
        std::chrono::duration_cast<std::chrono::seconds>(now - activity.since).count(),
        activity.statement});
  }
  std::sort(out.begin(), out.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.id < b.id; });
  return out;
}

Status SessionActivities::Kill(uint32_t id, bool end_session) {
  MutexLock lock(&mu_);
  for (auto& [connection, activity] : activities_) {
    if (activity.info == nullptr || activity.info->connection_id != id) continue;
    if (end_session) {
      activity.killed = true;
      if (activity.on_kill) activity.on_kill();
    }
    // Under mu_: the session cannot end meanwhile (Remove takes mu_), nor its statement (End
    // takes mu_ and clears the interrupt with the statement). Interrupting does not wait for
    // the statement. An idle session is not interrupted: the interrupt would cancel its next
    // statement.
    if (!activity.statement.empty()) activity.conn->Interrupt();
    return Status::Ok();
  }
  return UnknownThreadError(id);
}

std::optional<std::string> SessionActivities::User(uint64_t connection) const {
  MutexLock lock(&mu_);
  auto it = activities_.find(connection);
  if (it == activities_.end() || it->second.info == nullptr) return std::nullopt;
  return it->second.info->user;
}

int SessionActivities::InterruptOverdue() {
  const Clock::SteadyTime now = clock_->SteadyNow();
  int interrupted = 0;
  MutexLock lock(&mu_);
  for (auto& [connection, activity] : activities_) {
    if (activity.statement.empty() || activity.timed_out || now < activity.deadline) continue;
    // Under mu_, as Kill: the statement cannot end and the next begin meanwhile.
    activity.timed_out = true;
    activity.conn->Interrupt();
    ++interrupted;
  }
  return interrupted;
}

}  // namespace millrace::sql
