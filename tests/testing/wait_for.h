// Test support: waiting for a condition that another thread or process makes true.
//
// Contract
// - WaitFor calls `condition` until it returns true or the deadline passes, and returns whether
//   it held. `condition` is called at least once, and once more at the deadline, so a condition
//   that became true while the caller slept is never reported false.
// - Between calls it sleeps briefly, starting at 1 ms and doubling up to 50 ms: quick
//   conditions are seen at once, slow ones (a query, a child process) are not hammered.
// - This is the one place in tests/ that sleeps to wait for something. Tests assert on the
//   outcome, never on how long it took; a negative check ("nothing happens within 2 s") is
//   EXPECT_FALSE(WaitFor(..., 2s)). Code on a ManualClock advances the clock instead.
// - Real (steady) time, whatever Clock the code under test uses: the deadline bounds how long
//   a failing test hangs.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

namespace millrace::testing {

inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::steady_clock::time_point deadline) {
  std::chrono::steady_clock::duration pause = std::chrono::milliseconds(1);
  while (true) {
    if (condition()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min(pause, deadline - now));
    pause = std::min<std::chrono::steady_clock::duration>(pause * 2, std::chrono::milliseconds(50));
  }
}

// Generous by default: a loaded machine (several builds and test binaries at once) is slow,
// and a passing test returns as soon as the condition holds.
inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::steady_clock::duration timeout = std::chrono::seconds(60)) {
  return WaitFor(condition, std::chrono::steady_clock::now() + timeout);
}

}  // namespace millrace::testing
