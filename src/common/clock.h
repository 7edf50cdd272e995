// Clock: the single source of time for Millrace code.
//
// Contract
// - Production code never calls std::chrono::*::now() or sleeps directly; it asks a Clock so
//   tests can inject time (ManualClock) and stay deterministic.
// - WallNow() is calendar time (timestamps shown to users, SigV4 dates); SteadyNow() is a
//   monotonic time for intervals and deadlines.
// - Thread-safety: all methods may be called concurrently.
// - Ownership: clocks are owned by whoever builds the component graph (main, or a test) and
//   passed down as `Clock*`; they must outlive their users.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <string>

#include "common/thread_annotations.h"

namespace millrace {

class Clock {
 public:
  using WallTime = std::chrono::system_clock::time_point;
  using SteadyTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual WallTime WallNow() = 0;
  virtual SteadyTime SteadyNow() = 0;
  // Blocks the caller for `duration` of this clock's time.
  virtual void SleepFor(std::chrono::microseconds duration) = 0;

  // The process-wide real clock. Stateless, so sharing it is not a hidden global dependency.
  static Clock* Real();
};

class SystemClock final : public Clock {
 public:
  WallTime WallNow() override { return std::chrono::system_clock::now(); }
  SteadyTime SteadyNow() override { return std::chrono::steady_clock::now(); }
  void SleepFor(std::chrono::microseconds duration) override;
};

// A clock that moves only when told to. SleepFor blocks until other threads have advanced the
// clock past the sleeper's deadline, so a test controls exactly when timers fire.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(WallTime start = WallTime(std::chrono::seconds(1'767'225'600)));

  WallTime WallNow() override;
  SteadyTime SteadyNow() override;
  void SleepFor(std::chrono::microseconds duration) override;

  // Moves both wall and steady time forward and wakes sleepers whose deadline passed.
  void Advance(std::chrono::microseconds delta);
  // Number of threads currently blocked in SleepFor (lets a test wait for a sleeper).
  int sleepers();

 private:
  Mutex mu_;
  std::condition_variable cv_;
  std::chrono::microseconds elapsed_ GUARDED_BY(mu_){0};
  WallTime wall_start_;
  int sleepers_ GUARDED_BY(mu_) = 0;
};

// Formats a wall time as ISO-8601 UTC "YYYY-MM-DD HH:MM:SS" (the form the views show).
std::string FormatUtc(Clock::WallTime t);

// Microseconds since the Unix epoch: how the catalog stores a wall time.
inline int64_t MicrosSinceEpoch(Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace millrace
