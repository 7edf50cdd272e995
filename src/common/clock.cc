#include "common/clock.h"

#include <ctime>
#include <thread>

namespace millrace {

Clock* Clock::Real() {
  static SystemClock clock;
  return &clock;
}

void SystemClock::SleepFor(std::chrono::microseconds duration) {
  std::this_thread::sleep_for(duration);
}

ManualClock::ManualClock(WallTime start) : wall_start_(start) {}

Clock::WallTime ManualClock::WallNow() {
  MutexLock lock(&mu_);
  return wall_start_ + elapsed_;
}

Clock::SteadyTime ManualClock::SteadyNow() {
  MutexLock lock(&mu_);
  return SteadyTime(elapsed_);
}

void ManualClock::SleepFor(std::chrono::microseconds duration) {
  MutexLock lock(&mu_);
  const auto deadline = elapsed_ + duration;
  ++sleepers_;
  cv_.notify_all();  // a test may be waiting for this sleeper to appear
  WaitOn(cv_, &mu_, [&]() NO_THREAD_SAFETY_ANALYSIS { return elapsed_ >= deadline; });
  --sleepers_;
}

void ManualClock::Advance(std::chrono::microseconds delta) {
  MutexLock lock(&mu_);
  elapsed_ += delta;
  cv_.notify_all();
}

int ManualClock::sleepers() {
  MutexLock lock(&mu_);
  return sleepers_;
}

std::string FormatUtc(Clock::WallTime t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace millrace
