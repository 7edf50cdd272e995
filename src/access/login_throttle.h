// LoginThrottle: slows repeated failed logins from one address, on the MySQL and HTTP ports.
//
// Contract
// - Failures are counted per client address. The first `free_failures` cost nothing; each
//   further one makes the address wait before its next attempt: `first_delay`, doubling with
//   every failure, at most `max_delay`. So a password can be guessed at a few tries a minute at
//   best, and a user who mistyped a few times is not held up.
// - While an address waits (Wait() > 0), its logins are refused without looking at the
//   password, so waiting attempts learn nothing; each still counts as a failure (the caller
//   records it), so hammering only lengthens the wait.
// - A successful login from the address clears its failures; an address with no failure for
//   `forget_after` starts afresh.
// - Memory is bounded: at most `max_addresses` are tracked; past that, the address whose last
//   failure is oldest is forgotten first.
// - Time is the injected Clock's steady time; the clock must outlive the throttle.
// - Thread-safety: every method may be called concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/thread_annotations.h"

namespace millrace::access {

struct LoginThrottleOptions {
  int free_failures = 5;
  std::chrono::seconds first_delay{1};
  std::chrono::seconds max_delay{60};
  std::chrono::minutes forget_after{15};
  size_t max_addresses = 10'000;
};

class LoginThrottle {
 public:
  explicit LoginThrottle(Clock* clock, LoginThrottleOptions options = {});

  // Zero when `address` may try to log in now; otherwise how long it must still wait, rounded
  // up to whole seconds (what a Retry-After header says).
  std::chrono::seconds Wait(std::string_view address) EXCLUDES(mu_);
  void RecordFailure(std::string_view address) EXCLUDES(mu_);
  void RecordSuccess(std::string_view address) EXCLUDES(mu_);

 private:
  struct Entry {
    int failures = 0;
    Clock::SteadyTime last_failure;
    Clock::SteadyTime blocked_until;
  };
  // Drops entries older than forget_after, then the oldest while over max_addresses.
  void PruneLocked(Clock::SteadyTime now) REQUIRES(mu_);

  Clock* const clock_;
  const LoginThrottleOptions options_;
  Mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_ GUARDED_BY(mu_);
};

}  // namespace millrace::access
