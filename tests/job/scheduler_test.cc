// The scheduler's due times on a ManualClock, and the auto-resume delay as a pure function.
#include "job/scheduler.h"

#include <gtest/gtest.h>

#include <thread>

#include "testing/wait_for.h"

namespace millrace::job {
namespace {

using std::chrono::seconds;

TEST(AutoResumeDelayTest, DoublesFromTheBaseUpToTheCap) {
  EXPECT_EQ(AutoResumeDelay(0, seconds(10), seconds(300)), seconds(10));
  EXPECT_EQ(AutoResumeDelay(1, seconds(10), seconds(300)), seconds(20));
  EXPECT_EQ(AutoResumeDelay(2, seconds(10), seconds(300)), seconds(40));
  EXPECT_EQ(AutoResumeDelay(4, seconds(10), seconds(300)), seconds(160));
  EXPECT_EQ(AutoResumeDelay(5, seconds(10), seconds(300)), seconds(300));
  EXPECT_EQ(AutoResumeDelay(9, seconds(10), seconds(300)), seconds(300));
  // Far past any sensible count: still the cap, no overflow.
  EXPECT_EQ(AutoResumeDelay(1000, seconds(10), seconds(300)), seconds(300));
  EXPECT_EQ(AutoResumeDelay(-1, seconds(10), seconds(300)), seconds(10));
}

TEST(SchedulerTest, HandsOutDueJobsEarliestFirstAndEachToOneWorker) {
  ManualClock clock;
  Scheduler scheduler(&clock);
  const auto now = clock.SteadyNow();
  scheduler.Schedule(1, now + seconds(5));
  scheduler.Schedule(2, now);
  scheduler.Schedule(3, now - seconds(1));
  EXPECT_EQ(scheduler.Next(), 3);
  EXPECT_EQ(scheduler.Next(), 2);
  // Job 2 is claimed: scheduling it again takes effect after Release.
  scheduler.Schedule(2, now);
  clock.Advance(seconds(5));
  EXPECT_EQ(scheduler.Next(), 1);
  scheduler.Release(2);
  EXPECT_EQ(scheduler.Next(), 2);
  scheduler.Release(1);
  scheduler.Release(2);
  scheduler.Release(3);
  EXPECT_EQ(scheduler.DueTime(1), std::nullopt);
}

TEST(SchedulerTest, AWaitingWorkerSeesTheClockMove) {
  ManualClock clock;
  Scheduler scheduler(&clock);
  scheduler.Schedule(7, clock.SteadyNow() + seconds(60));
  std::optional<int64_t> got;
  std::thread worker([&] { got = scheduler.Next(); });
  clock.Advance(seconds(59));
  EXPECT_FALSE(testing::WaitFor([&] { return scheduler.DueTime(7) == std::nullopt; },
                                std::chrono::milliseconds(300)));  // not due yet: not claimed
  clock.Advance(seconds(1));
  worker.join();
  EXPECT_EQ(got, 7);
}

TEST(SchedulerTest, UnscheduledJobsAreNotHandedOutAndStopEndsTheWait) {
  ManualClock clock;
  Scheduler scheduler(&clock);
  scheduler.Schedule(1, clock.SteadyNow());
  scheduler.Unschedule(1);
  std::optional<int64_t> got = 0;
  std::thread worker([&] { got = scheduler.Next(); });
  scheduler.Stop();
  worker.join();
  EXPECT_EQ(got, std::nullopt);
}

// An event wakes a job due later while the clock stands still; one that arrives during the
// job's turn makes it due at the turn's end; an unscheduled job is left alone.
TEST(SchedulerTest, WakeMakesAScheduledJobDueNow) {
  ManualClock clock;
  Scheduler scheduler(&clock);
  const auto now = clock.SteadyNow();
  scheduler.Schedule(1, now + seconds(60));
  std::optional<int64_t> got;
  std::thread worker([&] { got = scheduler.Next(); });
  EXPECT_TRUE(scheduler.Wake(1));
  worker.join();
  EXPECT_EQ(got, 1);
  // During the turn: the turn schedules the job a minute on, the event makes it due now.
  EXPECT_TRUE(scheduler.Wake(1));
  scheduler.Schedule(1, now + seconds(60));
  scheduler.Release(1);
  EXPECT_EQ(scheduler.DueTime(1), now);
  EXPECT_EQ(scheduler.Next(), 1);
  // A turn that leaves its job unscheduled (paused) is not made due by an event.
  EXPECT_TRUE(scheduler.Wake(1));
  scheduler.Release(1);
  EXPECT_EQ(scheduler.DueTime(1), std::nullopt);
  EXPECT_FALSE(scheduler.Wake(1));
  // Never later than it was.
  scheduler.Schedule(2, now - seconds(5));
  EXPECT_TRUE(scheduler.Wake(2));
  EXPECT_EQ(scheduler.DueTime(2), now - seconds(5));
}

}  // namespace
}  // namespace millrace::job
