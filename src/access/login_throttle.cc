#include "access/login_throttle.h"

#include <algorithm>

namespace millrace::access {

LoginThrottle::LoginThrottle(Clock* clock, LoginThrottleOptions options)
    : clock_(clock), options_(options) {}

std::chrono::seconds LoginThrottle::Wait(std::string_view address) {
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  auto it = entries_.find(address);
  if (it == entries_.end() || it->second.blocked_until <= now) return std::chrono::seconds(0);
  // Round up: a client told "0" would come back too early.
  return std::chrono::ceil<std::chrono::seconds>(it->second.blocked_until - now);
}

void LoginThrottle::RecordFailure(std::string_view address) {
  const Clock::SteadyTime now = clock_->SteadyNow();
  MutexLock lock(&mu_);
  PruneLocked(now);
  auto it = entries_.find(address);
  if (it == entries_.end()) it = entries_.emplace(std::string(address), Entry{}).first;
  Entry& entry = it->second;
  ++entry.failures;
  entry.last_failure = now;
  const int over = entry.failures - options_.free_failures;
  if (over <= 0) return;
  // first_delay * 2^(over-1), capped; the shift is bounded so it cannot overflow.
  const auto delay = std::min<std::chrono::seconds>(
      options_.first_delay * (int64_t{1} << std::min(over - 1, 30)), options_.max_delay);
  entry.blocked_until = now + delay;
}

void LoginThrottle::RecordSuccess(std::string_view address) {
  MutexLock lock(&mu_);
  auto it = entries_.find(address);
  if (it != entries_.end()) entries_.erase(it);
}

void LoginThrottle::PruneLocked(Clock::SteadyTime now) {
  std::erase_if(entries_, [&](const auto& item) {
    return now - item.second.last_failure >= options_.forget_after &&
           item.second.blocked_until <= now;
  });
  while (entries_.size() >= options_.max_addresses) {
    auto oldest = std::min_element(
        entries_.begin(), entries_.end(),
        [](const auto& a, const auto& b) { return a.second.last_failure < b.second.last_failure; });
    entries_.erase(oldest);
  }
}

}  // namespace millrace::access
