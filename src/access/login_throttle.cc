#include "access/login_throttle.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>

namespace millrace::access {
namespace {

std::string UserKey(const std::string& address_key, std::string_view user) {
  return address_key + '\n' + std::string(user);
}

}  // namespace

LoginThrottle::LoginThrottle(Clock* clock, LoginThrottleOptions options)
    : clock_(clock), options_(options) {}

std::string LoginThrottle::AddressKey(std::string_view address) {
  const std::string text(address);
  unsigned char bytes[16];
  if (inet_pton(AF_INET6, text.c_str(), bytes) != 1) return text;
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char out[64];
  if (std::equal(kMapped, kMapped + 12, bytes)) {
    std::snprintf(out, sizeof(out), "%u.%u.%u.%u", bytes[12], bytes[13], bytes[14], bytes[15]);
    return out;
  }
  std::snprintf(out, sizeof(out), "%02x%02x:%02x%02x:%02x%02x:%02x%02x::/64", bytes[0], bytes[1],
                bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7]);
  return out;
}

LoginThrottle::Counter& LoginThrottle::CounterLocked(const std::string& key,
                                                     Clock::SteadyTime now) {
  auto [it, inserted] = counters_.try_emplace(key);
  if (inserted) it->second.last_failure = now;
  return it->second;
}

void LoginThrottle::FailLocked(Counter& counter, int free, Clock::SteadyTime now) {
  ++counter.failures;
  counter.last_failure = now;
  const int over = counter.failures - free;
  if (over <= 0) return;
  // first_delay * 2^(over-1), capped; the shift is bounded so it cannot overflow.
  const auto delay = std::min<std::chrono::seconds>(
      options_.first_delay * (int64_t{1} << std::min(over - 1, 30)), options_.max_delay);
  counter.blocked_until = now + delay;
}

std::chrono::seconds LoginThrottle::WaitLocked(const std::string& address_key,
                                               const std::string& user_key, Clock::SteadyTime now) {
  Clock::SteadyTime until = now;
  for (const std::string* key : {&address_key, &user_key}) {
    auto it = counters_.find(*key);
    if (it != counters_.end()) until = std::max(until, it->second.blocked_until);
  }
  // Round up: a client told "0" would come back too early.
  return std::chrono::ceil<std::chrono::seconds>(until - now);
}

LoginAttempt LoginThrottle::Begin(std::string_view address, std::string_view user) {
  const Clock::SteadyTime now = clock_->SteadyNow();
  const std::string address_key = AddressKey(address);
  const std::string user_key = UserKey(address_key, user);
  MutexLock lock(&mu_);
  PruneLocked(now);  // first: the references below stay valid
  const bool refused = WaitLocked(address_key, user_key, now).count() > 0;
  Counter& per_address = CounterLocked(address_key, now);
  FailLocked(per_address, options_.free_per_address, now);
  FailLocked(CounterLocked(user_key, now), options_.free_per_user, now);
  LoginAttempt attempt;
  if (!refused) {
    per_address.refusal_recorded = false;
    return attempt;
  }
  attempt.wait = WaitLocked(address_key, user_key, now);
  attempt.first_refusal = !per_address.refusal_recorded;
  per_address.refusal_recorded = true;
  return attempt;
}

void LoginThrottle::Succeeded(std::string_view address, std::string_view user) {
  const std::string address_key = AddressKey(address);
  MutexLock lock(&mu_);
  counters_.erase(UserKey(address_key, user));
  auto it = counters_.find(address_key);
  if (it == counters_.end()) return;
  // Take back the failure Begin counted; the address's earlier failures stand.
  Counter& counter = it->second;
  counter.failures = std::max(0, counter.failures - 1);
  if (counter.failures <= options_.free_per_address) counter.blocked_until = {};
}

std::chrono::seconds LoginThrottle::Wait(std::string_view address, std::string_view user) {
  const std::string address_key = AddressKey(address);
  MutexLock lock(&mu_);
  return WaitLocked(address_key, UserKey(address_key, user), clock_->SteadyNow());
}

void LoginThrottle::PruneLocked(Clock::SteadyTime now) {
  std::erase_if(counters_, [&](const auto& item) {
    return now - item.second.last_failure >= options_.forget_after &&
           item.second.blocked_until <= now;
  });
  while (!counters_.empty() && counters_.size() + 2 > options_.max_entries) {
    auto oldest = std::min_element(
        counters_.begin(), counters_.end(),
        [](const auto& a, const auto& b) { return a.second.last_failure < b.second.last_failure; });
    counters_.erase(oldest);
  }
}

}  // namespace millrace::access
