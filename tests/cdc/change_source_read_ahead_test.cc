// A change source reads its next batch while the task applies one (ChangeSource's read ahead):
// the batch is handed out only to a job at the offset and epoch it was read for, the
// confirmation upstream waits for the read ahead (they share the connection), and turn ends
// and drops wait for it. A fake source's stream records what ran and can hold a stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cdc/change_source.h"
#include "common/clock.h"
#include "common/strings.h"
#include "common/thread_annotations.h"

namespace millrace::cdc {
namespace {

job::Offset At(int64_t position) {
  return job::Offset().With("lsn", std::to_string(position));
}

// Each stream from position p hands out one change and ends at p + 10; a stream from a
// position in `failing` fails. A read ahead's stream reads on (as a real one gathers what
// arrives) until the task asks for its batch.
class FakeSource final : public ChangeSource<int64_t> {
 public:
  explicit FakeSource(Clock* clock)
      : stream_(ChangeStreamConfig{.tables = {TableBinding{}}, .clock = clock}) {}
  ~FakeSource() override { EndReadAhead(); }

  std::string Describe() const override { return "fake"; }

  // Streams from `at` wait until Release(at).
  void Hold(int64_t at) {
    MutexLock lock(&mu_);
    held_.insert(at);
  }
  void Release(int64_t at) {
    MutexLock lock(&mu_);
    held_.erase(at);
    cv_.notify_all();
  }
  void Fail(int64_t at) {
    MutexLock lock(&mu_);
    failing_.insert(at);
  }
  // The next stream from `at` finds nothing.
  void Quiet(int64_t at) {
    MutexLock lock(&mu_);
    quiet_.insert(at);
  }
  // Waits until a stream from `at` has started; false if none did (a bound, not a timing).
  bool AwaitStream(int64_t at) {
    MutexLock lock(&mu_);
    return WaitOnFor(cv_, &mu_, std::chrono::seconds(30),
                     [&]() NO_THREAD_SAFETY_ANALYSIS { return started_.contains(at); });
  }
  // What ran, in order: "stream <p>" when a stream from p ended ("stream <p> ahead" when it
  // ran on a thread other than the task's), "confirm <p>", "drop".
  std::vector<std::string> events() {
    MutexLock lock(&mu_);
    return events_;
  }

 private:
  ChangeStream& changes() override { return stream_; }
  void Confirm(const job::Offset& offset) override { Record("confirm " + offset.Text("lsn")); }
  Status DropUpstream(const job::JobRecord& job) override {
    Record("drop");
    return Status::Ok();
  }
  Result<job::Polled> Start(const job::JobRecord& job, const job::BatchLimits& limits) override {
    return Status::Internal("not used");
  }
  Result<int64_t> PositionIn(const job::Offset& offset) const override {
    return *ParseInt64(offset.Text("lsn"));
  }
  Result<job::Polled> SnapshotSplit(const job::JobRecord& job, const int64_t& at,
                                    const nlohmann::json& split) override {
    return Status::Internal("not used");
  }
  Result<job::Polled> Stream(const job::JobRecord& job, const int64_t& at,
                             const job::BatchLimits& limits) override {
    const bool ahead = std::this_thread::get_id() != task_thread_;
    bool fail = false;
    bool quiet = false;
    {
      MutexLock lock(&mu_);
      started_.insert(at);
      cv_.notify_all();
      WaitOn(cv_, &mu_, [&]() NO_THREAD_SAFETY_ANALYSIS { return !held_.contains(at); });
      // Nothing tells this fake when the task asks: it looks every millisecond.
      while (Gathering())
        WaitOnFor(cv_, &mu_, std::chrono::milliseconds(1), [] { return false; });
      fail = failing_.contains(at);
      quiet = quiet_.erase(at) > 0;
      events_.push_back("stream " + std::to_string(at) + (ahead ? " ahead" : ""));
    }
    if (fail) return Status::FailedPrecondition("stream from " + std::to_string(at) + " failed");
    if (quiet) return job::Polled{};
    Change change;
    change.row.push_back(change::TupleValue{change::TupleValue::Kind::kText, "x"});
    job::Polled polled;
    polled.batch = stream_.MakeBatch(job.current_offset, At(at + 10), "", "", {change}, 1);
    polled.more = true;
    return polled;
  }
  void CloseStream() override {}

  void Record(std::string event) {
    MutexLock lock(&mu_);
    events_.push_back(std::move(event));
  }

  ChangeStream stream_;
  const std::thread::id task_thread_ = std::this_thread::get_id();  // the test's
  Mutex mu_;
  std::condition_variable cv_;
  std::set<int64_t> held_ GUARDED_BY(mu_);
  std::set<int64_t> failing_ GUARDED_BY(mu_);
  std::set<int64_t> quiet_ GUARDED_BY(mu_);
  std::set<int64_t> started_ GUARDED_BY(mu_);
  std::vector<std::string> events_ GUARDED_BY(mu_);
};

class ChangeSourceReadAheadTest : public ::testing::Test {
 protected:
  job::JobRecord JobAt(int64_t position, int64_t epoch = 1) {
    job::JobRecord job;
    job.current_offset = At(position);
    job.epoch = epoch;
    return job;
  }
  // The batch a poll of a job at `position` hands out: "start-end".
  std::string PollAt(int64_t position, int64_t epoch = 1) {
    Result<job::Polled> polled = source_.Poll(JobAt(position, epoch), limits_);
    if (!polled.ok()) return polled.status().message();
    return polled->batch->start().Text("lsn") + "-" + polled->batch->end().Text("lsn");
  }

  ManualClock clock_{std::chrono::system_clock::now()};
  FakeSource source_{&clock_};
  job::BatchLimits limits_;
};

TEST_F(ChangeSourceReadAheadTest, TheNextBatchIsReadWhileOneIsApplied) {
  source_.Hold(10);
  EXPECT_EQ(PollAt(0), "0-10");
  ASSERT_TRUE(source_.AwaitStream(10));  // started by the poll itself, before the task commits
  source_.Committed(At(10));
  // The read ahead holds the connection: the confirmation waits for it.
  EXPECT_EQ(source_.events(), std::vector<std::string>{"stream 0"});
  source_.Release(10);
  // It reads on until the task asks for its batch.
  EXPECT_EQ(source_.events(), std::vector<std::string>{"stream 0"});
  source_.Hold(20);  // the next read ahead
  EXPECT_EQ(PollAt(10), "10-20");
  EXPECT_EQ(source_.events(),
            (std::vector<std::string>{"stream 0", "stream 10 ahead", "confirm 10"}));
  source_.Release(20);
}

TEST_F(ChangeSourceReadAheadTest, ABatchThatDidNotCommitDropsTheReadAhead) {
  EXPECT_EQ(PollAt(0), "0-10");
  ASSERT_TRUE(source_.AwaitStream(10));
  // The task failed: the job is still at 0, and polls from there again.
  EXPECT_EQ(PollAt(0), "0-10");
  source_.Committed(At(10));
  // A PAUSE and RESUME between (a new epoch): read again from the job's offset.
  EXPECT_EQ(PollAt(10, /*epoch=*/2), "10-20");
  source_.TurnEnded(job::TurnEnd::kStopped);
  const std::vector<std::string> events = source_.events();
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(events.begin(), events.begin() + 2),
            (std::vector<std::string>{"stream 0", "stream 10 ahead"}));
  // The stream from 0 again, then 10 again (the first read of 10 belonged to epoch 1).
  EXPECT_EQ(std::count(events.begin(), events.end(), "stream 0"), 2);
  EXPECT_EQ(std::count(events.begin(), events.end(), "stream 10 ahead"), 2);
  EXPECT_EQ(std::count(events.begin(), events.end(), "stream 10"), 1);
}

TEST_F(ChangeSourceReadAheadTest, ATurnEndWaitsForTheReadAheadAndKeepsIt) {
  EXPECT_EQ(PollAt(0), "0-10");
  source_.Committed(At(10));
  source_.TurnEnded(job::TurnEnd::kStopped);
  // Nothing runs any more, and what was held is confirmed.
  std::vector<std::string> events = source_.events();
  EXPECT_EQ(events, (std::vector<std::string>{"stream 0", "stream 10 ahead", "confirm 10"}));
  // The next turn's first poll hands out what was read, without streaming from 10 again.
  EXPECT_EQ(PollAt(10), "10-20");
  source_.TurnEnded(job::TurnEnd::kStopped);
  events = source_.events();
  EXPECT_EQ(std::count(events.begin(), events.end(), "stream 10 ahead"), 1);
}

TEST_F(ChangeSourceReadAheadTest, AReadAheadThatFoundNothingLetsThePollWaitItself) {
  // Handing out "nothing" would make the job wait max_interval for a change that may come a
  // moment later: the task's poll streams (and waits) itself.
  source_.Quiet(10);
  EXPECT_EQ(PollAt(0), "0-10");
  source_.Committed(At(10));
  EXPECT_EQ(PollAt(10), "10-20");
  source_.TurnEnded(job::TurnEnd::kStopped);
  const std::vector<std::string> events = source_.events();
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(events.begin(), events.begin() + 4),
            (std::vector<std::string>{"stream 0", "stream 10 ahead", "confirm 10", "stream 10"}));
}

TEST_F(ChangeSourceReadAheadTest, AReadAheadThatFailsFailsTheNextPoll) {
  source_.Fail(10);
  EXPECT_EQ(PollAt(0), "0-10");
  source_.Committed(At(10));
  EXPECT_EQ(PollAt(10), "stream from 10 failed");
  // No read ahead after a failure: the task's retry polls anew.
  EXPECT_EQ(source_.events(),
            (std::vector<std::string>{"stream 0", "stream 10 ahead", "confirm 10"}));
}

TEST_F(ChangeSourceReadAheadTest, DropWaitsForTheReadAheadAndConfirmsNothingMore) {
  source_.Hold(10);
  EXPECT_EQ(PollAt(0), "0-10");
  ASSERT_TRUE(source_.AwaitStream(10));
  source_.Committed(At(10));
  std::thread release([&] { source_.Release(10); });
  ASSERT_TRUE(source_.Drop(JobAt(10)).ok());
  release.join();
  EXPECT_EQ(source_.events(), (std::vector<std::string>{"stream 0", "stream 10 ahead", "drop"}));
}

}  // namespace
}  // namespace millrace::cdc
