#include "job/scheduler.h"

#include <algorithm>

namespace millrace::job {

std::chrono::seconds AutoResumeDelay(int64_t resumes_so_far, std::chrono::seconds base,
                                     std::chrono::seconds cap) {
  // 2^20 * base already exceeds any sensible cap; the clamp keeps the shift defined.
  const int64_t factor = int64_t{1} << std::clamp<int64_t>(resumes_so_far, 0, 20);
  return std::min<std::chrono::seconds>(base * factor, cap);
}

void Scheduler::Schedule(int64_t job_id, Clock::SteadyTime due) {
  MutexLock lock(&mu_);
  slots_[job_id].due = due;
  ++generation_;
  cv_.notify_all();
}

void Scheduler::Unschedule(int64_t job_id) {
  MutexLock lock(&mu_);
  auto it = slots_.find(job_id);
  if (it == slots_.end()) return;
  if (it->second.claimed) {
    it->second.due.reset();
  } else {
    slots_.erase(it);
  }
}

std::optional<Clock::SteadyTime> Scheduler::DueTime(int64_t job_id) {
  MutexLock lock(&mu_);
  auto it = slots_.find(job_id);
  if (it == slots_.end()) return std::nullopt;
  return it->second.due;
}

std::optional<int64_t> Scheduler::Next() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    const Clock::SteadyTime now = clock_->SteadyNow();
    std::optional<int64_t> best;
    Clock::SteadyTime best_due = Clock::SteadyTime::max();
    Clock::SteadyTime earliest = Clock::SteadyTime::max();
    for (const auto& [id, slot] : slots_) {
      if (slot.claimed || !slot.due) continue;
      earliest = std::min(earliest, *slot.due);
      if (*slot.due <= now && *slot.due < best_due) {
        best = id;
        best_due = *slot.due;
      }
    }
    if (best) {
      Slot& slot = slots_[*best];
      slot.claimed = true;
      slot.due.reset();
      return best;
    }
    // Wake at the next due time; the cap keeps an injected ManualClock's jumps visible.
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::min<Clock::SteadyTime::duration>(earliest - now, kClockPoll));
    const uint64_t seen = generation_;
    WaitOnFor(cv_, &mu_, wait + std::chrono::milliseconds(1),
              [&]() NO_THREAD_SAFETY_ANALYSIS { return generation_ != seen; });
  }
  return std::nullopt;
}

void Scheduler::Release(int64_t job_id) {
  MutexLock lock(&mu_);
  auto it = slots_.find(job_id);
  if (it == slots_.end()) return;
  Slot& slot = it->second;
  slot.claimed = false;
  // An event during the turn: the job looks again now, unless the turn left it unscheduled.
  if (slot.woken && slot.due) slot.due = std::min(*slot.due, clock_->SteadyNow());
  slot.woken = false;
  if (!slot.due) slots_.erase(it);
  ++generation_;
  cv_.notify_all();
}

bool Scheduler::Wake(int64_t job_id) {
  MutexLock lock(&mu_);
  auto it = slots_.find(job_id);
  if (it == slots_.end()) return false;
  Slot& slot = it->second;
  if (slot.claimed) {
    slot.woken = true;
    return true;
  }
  if (!slot.due) return false;
  slot.due = std::min(*slot.due, clock_->SteadyNow());
  ++generation_;
  cv_.notify_all();
  return true;
}

void Scheduler::Stop() {
  MutexLock lock(&mu_);
  stopping_ = true;
  ++generation_;
  cv_.notify_all();
}

}  // namespace millrace::job
