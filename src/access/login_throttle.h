// LoginThrottle: slows repeated failed logins, on the MySQL and HTTP ports.
//
// Contract
// - Failures are counted twice: per client address and user (the first `free_per_user` cost
//   nothing), and per client address whatever the user (the first `free_per_address`). Past
//   its free failures a counter makes its attempts wait: `first_delay`, doubling with every
//   further failure, at most `max_delay`. An attempt waits for the longer of its two counters.
//   So one account's password is guessed a few times a minute at best, and trying many
//   accounts from one address is slowed too.
// - Begin starts an attempt. While it must wait it is refused (Begin returns the wait) without
//   its password being looked at, and counts as a failure: hammering only lengthens the wait.
//   Otherwise it counts as a failure at once (so concurrent attempts cannot all slip through
//   the same free slot) until Succeeded takes that back and clears the user's counter at the
//   address. A success does not clear the address's counter: one account's login cannot
//   reset the count of attempts on another.
// - A counter with no failure for `forget_after` starts afresh.
// - Addresses are compared as given, except IPv6 addresses, which count per /64 (one host
//   commonly holds a whole /64), and IPv4-mapped IPv6 addresses, which count as their IPv4.
// - Memory is bounded: at most `max_entries` counters; past that, the one whose last failure
//   is oldest is forgotten first.
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
  int free_per_user = 5;
  int free_per_address = 20;
  std::chrono::seconds first_delay{1};
  std::chrono::seconds max_delay{60};
  std::chrono::minutes forget_after{15};
  size_t max_entries = 10'000;
};

// What Begin decided.
struct LoginAttempt {
  // > 0: refused; how long the attempt must still wait (rounded up to whole seconds, as a
  // Retry-After header says it). Zero: go ahead and check the password.
  std::chrono::seconds wait{0};
  // The first refusal since an attempt at this address last went ahead: worth a record in the
  // audit log, where the refusals after it would only repeat it (so refusals add at most one
  // record per checked attempt, and checked attempts are throttled).
  bool first_refusal = false;
};

class LoginThrottle {
 public:
  explicit LoginThrottle(Clock* clock, LoginThrottleOptions options = {});

  LoginAttempt Begin(std::string_view address, std::string_view user) EXCLUDES(mu_);
  // The attempt begun for `user` from `address` succeeded.
  void Succeeded(std::string_view address, std::string_view user) EXCLUDES(mu_);
  // How long an attempt of `user` from `address` would wait now.
  std::chrono::seconds Wait(std::string_view address, std::string_view user) EXCLUDES(mu_);

  // The address as counted: an IPv6 address's /64, an IPv4-mapped address's IPv4.
  static std::string AddressKey(std::string_view address);

 private:
  struct Counter {
    int failures = 0;
    Clock::SteadyTime last_failure;
    Clock::SteadyTime blocked_until;
    bool refusal_recorded = false;
  };
  Counter& CounterLocked(const std::string& key, Clock::SteadyTime now) REQUIRES(mu_);
  void FailLocked(Counter& counter, int free, Clock::SteadyTime now) REQUIRES(mu_);
  std::chrono::seconds WaitLocked(const std::string& address_key, const std::string& user_key,
                                  Clock::SteadyTime now) REQUIRES(mu_);
  // Drops counters older than forget_after, then the oldest until two more fit.
  void PruneLocked(Clock::SteadyTime now) REQUIRES(mu_);

  Clock* const clock_;
  const LoginThrottleOptions options_;
  Mutex mu_;
  // By AddressKey, and by AddressKey + '\n' + user.
  std::map<std::string, Counter, std::less<>> counters_ GUARDED_BY(mu_);
};

}  // namespace millrace::access
