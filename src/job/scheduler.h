// Scheduler: whose turn it is. Due times of jobs, handed to workers one job at a time.
//
// Contract
// - Schedule(id, due) sets (or replaces) when the job's next turn is due; Unschedule removes
//   it until the next Schedule. A job is handed to at most one worker at a time: Next() claims
//   the due job that is not claimed (earliest due first) and Release() ends the claim. A
//   Schedule during a claim takes effect after Release.
// - Wake(id) makes a scheduled job due now (an event says it has work): a job due later is
//   moved to now; a claimed job is due again at its Release, whatever its turn scheduled, so an
//   event that arrives while a turn lists is not lost. A job that is not scheduled (paused,
//   being dropped) is left alone, and Wake never makes a job due later.
// - Next() blocks until a job is due or Stop(); it watches the injected Clock, so a test that
//   advances a ManualClock sees the jobs that became due (within kClockPoll of real time).
// - The scheduler's lock guards only its due times; it is never held while a job's lock is.
// - AutoResumeDelay is the delay before the n-th automatic resume of a paused job (SPEC:
//   min(2^n * base, cap)), a pure function.
// - Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <optional>

#include "common/clock.h"
#include "common/thread_annotations.h"

namespace millrace::job {

std::chrono::seconds AutoResumeDelay(int64_t resumes_so_far, std::chrono::seconds base,
                                     std::chrono::seconds cap);

class Scheduler {
 public:
  // How often a waiting worker looks at the clock when nothing wakes it.
  static constexpr std::chrono::milliseconds kClockPoll{100};

  explicit Scheduler(Clock* clock) : clock_(clock) {}

  void Schedule(int64_t job_id, Clock::SteadyTime due);
  void Unschedule(int64_t job_id);
  // The id of a due job, now claimed by the caller; nullopt once stopped.
  std::optional<int64_t> Next();
  void Release(int64_t job_id);
  // See the contract; false when the job is not scheduled.
  bool Wake(int64_t job_id);
  void Stop();

  // When the job is due; nullopt when not scheduled.
  std::optional<Clock::SteadyTime> DueTime(int64_t job_id);

 private:
  struct Slot {
    std::optional<Clock::SteadyTime> due;
    bool claimed = false;
    bool woken = false;  // Wake() during a claim: due at Release
  };
  Clock* const clock_;
  Mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, Slot> slots_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumped by every change a waiter should see
};

}  // namespace millrace::job
