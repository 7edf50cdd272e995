#include "job/task_window.h"

namespace millrace::job {

Result<TaskWindow::Ticket> TaskWindow::Dispatch(const Offset& start, const Offset& end) {
  ++in_flight_;
  if (start == end) return Ticket{};
  if (!(start == dispatched_)) {
    --in_flight_;
    return Status::FailedPrecondition("a batch from '" + start.ToJson() +
                                      "' after the window dispatched up to '" +
                                      dispatched_.ToJson() + "'");
  }
  dispatched_ = end;
  const int64_t id = next_ticket_++;
  entries_.emplace(id, Entry{end, false});
  return Ticket{id};
}

std::optional<Offset> TaskWindow::Commit(Ticket ticket) {
  --in_flight_;
  auto it = entries_.find(ticket.id);
  if (it == entries_.end()) return std::nullopt;
  it->second.committed = true;
  bool moved = false;
  // The entries are in dispatch order, each starting where the one before it ends.
  while (!entries_.empty() && entries_.begin()->second.committed) {
    frontier_ = entries_.begin()->second.end;
    entries_.erase(entries_.begin());
    moved = true;
  }
  if (!moved) return std::nullopt;
  return frontier_;
}

void TaskWindow::Abandon(Ticket ticket) {
  --in_flight_;
  if (ticket.id != 0) stopped_ = true;
}

}  // namespace millrace::job
