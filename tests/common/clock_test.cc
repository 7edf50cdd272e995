#include "common/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "testing/wait_for.h"

namespace millrace {
namespace {

using std::chrono::seconds;

TEST(ClockTest, ManualClockMovesOnlyWhenAdvanced) {
  ManualClock clock;
  const auto wall = clock.WallNow();
  const auto steady = clock.SteadyNow();
  EXPECT_EQ(clock.WallNow(), wall);
  clock.Advance(seconds(5));
  EXPECT_EQ(clock.WallNow() - wall, seconds(5));
  EXPECT_EQ(clock.SteadyNow() - steady, seconds(5));
}

TEST(ClockTest, SleepForWakesWhenTimePasses) {
  ManualClock clock;
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepFor(seconds(10));
    woke = true;
  });
  EXPECT_TRUE(testing::WaitFor([&] { return clock.sleepers() == 1; }));
  clock.Advance(seconds(9));
  EXPECT_FALSE(testing::WaitFor([&] { return woke.load(); }, std::chrono::milliseconds(20)));
  clock.Advance(seconds(1));
  sleeper.join();
  EXPECT_TRUE(woke);
}

TEST(ClockTest, FormatUtc) {
  const Clock::WallTime t{seconds(1'767'225'600)};  // 2026-01-01 00:00:00 UTC
  EXPECT_EQ(FormatUtc(t), "2026-01-01 00:00:00");
  EXPECT_EQ(FormatUtc(t + seconds(3661)), "2026-01-01 01:01:01");
}

TEST(ClockTest, SystemClockAdvances) {
  Clock* clock = Clock::Real();
  const auto before = clock->SteadyNow();
  clock->SleepFor(std::chrono::milliseconds(2));
  EXPECT_GE(clock->SteadyNow() - before, std::chrono::milliseconds(2));
}

}  // namespace
}  // namespace millrace
