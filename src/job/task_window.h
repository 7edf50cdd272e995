// TaskWindow: the batches of a job's concurrent tasks (max_concurrent_tasks > 1), and how far
// the job's offset may move as they commit out of order.
//
// Tasks take consecutive, disjoint batches: each lists after the end of the batch dispatched
// before it (dispatched()), not after the committed offset. Each commits its own files; the
// job's offset (frontier()) moves only to the end of the longest run of committed batches that
// starts at it, so it never passes a file whose task has not committed: after a crash the
// source lists from it again, and files committed above it are in the ledger (the source
// skips them: file_job_source.h).
//
// Contract
// - Dispatch(start, end) takes the next batch; `start` must be dispatched() (else
//   FAILED_PRECONDITION: the caller listed from a stale place). A batch that does not advance
//   (start == end: late files below the offset) is not a window entry: it never holds the
//   frontier back. Returns the batch's ticket.
// - Commit(ticket) marks the batch committed and returns the new frontier when it moved.
//   Abandon(ticket) says the batch will not commit in this window (its task failed or was
//   cancelled): dispatch stops there (stopped()), since the batches after it would leave a
//   gap the frontier cannot pass until the files are loaded again by a new window.
// - in_flight() counts dispatched batches not yet committed or abandoned.
// - A value type; thread-compatible (the task runner guards it with the job's lock).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "job/offset.h"

namespace millrace::job {

class TaskWindow {
 public:
  explicit TaskWindow(Offset committed) : frontier_(committed), dispatched_(std::move(committed)) {}

  const Offset& frontier() const { return frontier_; }
  const Offset& dispatched() const { return dispatched_; }
  bool stopped() const { return stopped_; }
  int in_flight() const { return in_flight_; }

  struct Ticket {
    int64_t id = 0;  // 0: a batch that does not advance (no entry)
  };
  Result<Ticket> Dispatch(const Offset& start, const Offset& end);
  std::optional<Offset> Commit(Ticket ticket);
  void Abandon(Ticket ticket);

 private:
  struct Entry {
    Offset end;
    bool committed = false;
  };
  Offset frontier_;
  Offset dispatched_;
  std::map<int64_t, Entry> entries_;  // by ticket, which is dispatch order
  int64_t next_ticket_ = 1;
  int in_flight_ = 0;
  bool stopped_ = false;
};

}  // namespace millrace::job
