// PollAhead: a change source's next poll, run on a thread of its own while the job's task
// loads and commits the batch before it, so that reading and decoding the source's log
// overlaps the apply instead of waiting for it (ChangeSource uses it; see change_source.h).
//
// Contract
// - Start(job, poll) runs `poll` on a new thread for a job at `job`'s offset and epoch: the
//   offset the job will be at once the batch before it commits. At most one runs: Start
//   requires that none was started since the last Take or Discard.
// - Take(job) waits for it and returns its result when `job` is at that offset and epoch (the
//   batch committed, nothing was paused or altered meanwhile), else drops it and returns
//   nullopt (the poll is made again from the job's offset; a source whose last batch did not
//   commit reads its changes again). nullopt too when none was started.
// - Wait() waits for it and keeps its result for Take: afterwards nothing runs.
// - running(): started and not finished. While it runs, `poll` may use what it captured; the
//   owner uses none of that (it waits first), and destroying a PollAhead waits.
// - gathering(): started, and neither Take, Wait nor Discard has been called since: the poll
//   may read on, as nobody waits for it yet. Any thread may ask (the poll asks itself).
// - Thread-safety: Start, Take, Wait and running are called by one thread (the job's task).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>

#include "common/result.h"
#include "job/job_source.h"

namespace millrace::cdc {

class PollAhead {
 public:
  using PollFn = std::function<Result<job::Polled>()>;

  PollAhead() = default;
  PollAhead(const PollAhead&) = delete;
  PollAhead& operator=(const PollAhead&) = delete;
  ~PollAhead() { Discard(); }

  void Start(const job::JobRecord& job, PollFn poll);
  std::optional<Result<job::Polled>> Take(const job::JobRecord& job);
  void Wait();
  // Waits for it and drops its result.
  void Discard();
  bool running() const;
  bool gathering() const { return !asked_; }

 private:
  // Set before Take, Wait and Discard wait, so the poll they wait for stops gathering.
  void Ask() { asked_ = true; }

  std::future<Result<job::Polled>> result_;
  job::Offset offset_;
  int64_t epoch_ = 0;
  std::atomic<bool> asked_ = true;
};

}  // namespace millrace::cdc
