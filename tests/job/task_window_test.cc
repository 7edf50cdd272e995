// The window of a job's concurrent tasks: consecutive batches, the offset moving only past
// batches that all committed.
#include "job/task_window.h"

#include <gtest/gtest.h>

namespace millrace::job {
namespace {

Offset Key(const char* key) {
  return Offset::FileName(key);
}

TEST(TaskWindowTest, BatchesAreConsecutiveFromTheCommittedOffset) {
  TaskWindow window(Key("a"));
  EXPECT_EQ(window.dispatched(), Key("a"));
  ASSERT_TRUE(window.Dispatch(Key("a"), Key("c")).ok());
  EXPECT_EQ(window.dispatched(), Key("c"));
  ASSERT_TRUE(window.Dispatch(Key("c"), Key("f")).ok());
  EXPECT_EQ(window.in_flight(), 2);
  // Listed from the committed offset while batches are out: refused.
  auto stale = window.Dispatch(Key("a"), Key("b"));
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(window.in_flight(), 2);
  EXPECT_EQ(window.frontier(), Key("a"));
}

TEST(TaskWindowTest, TheOffsetWaitsForTheOldestBatchThenCatchesUp) {
  TaskWindow window(Key(""));
  auto first = window.Dispatch(Key(""), Key("b"));
  auto second = window.Dispatch(Key("b"), Key("d"));
  auto third = window.Dispatch(Key("d"), Key("f"));
  ASSERT_TRUE(first.ok() && second.ok() && third.ok());
  EXPECT_EQ(window.Commit(*third), std::nullopt);  // committed past the first: offset stays
  EXPECT_EQ(window.Commit(*second), std::nullopt);
  EXPECT_EQ(window.frontier(), Key(""));
  EXPECT_EQ(window.Commit(*first), Key("f"));  // all three at once
  EXPECT_EQ(window.frontier(), Key("f"));
  EXPECT_EQ(window.in_flight(), 0);
}

TEST(TaskWindowTest, InOrderCommitsMoveTheOffsetEachTime) {
  TaskWindow window(Key("a"));
  auto first = window.Dispatch(Key("a"), Key("b"));
  auto second = window.Dispatch(Key("b"), Key("c"));
  EXPECT_EQ(window.Commit(*first), Key("b"));
  EXPECT_EQ(window.Commit(*second), Key("c"));
}

TEST(TaskWindowTest, AnAbandonedBatchHoldsTheOffsetAndStopsDispatch) {
  TaskWindow window(Key("a"));
  auto first = window.Dispatch(Key("a"), Key("b"));
  auto second = window.Dispatch(Key("b"), Key("c"));
  EXPECT_FALSE(window.stopped());
  window.Abandon(*first);
  EXPECT_TRUE(window.stopped());
  EXPECT_EQ(window.Commit(*second), std::nullopt);  // its files are committed; the offset is not
  EXPECT_EQ(window.frontier(), Key("a"));
  EXPECT_EQ(window.in_flight(), 0);
}

TEST(TaskWindowTest, ABatchOfLateFilesNeverHoldsTheOffset) {
  TaskWindow window(Key("m"));
  auto late = window.Dispatch(Key("m"), Key("m"));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(window.dispatched(), Key("m"));
  auto next = window.Dispatch(Key("m"), Key("p"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(window.Commit(*next), Key("p"));
  EXPECT_EQ(window.in_flight(), 1);
  window.Abandon(*late);  // late files failing: reconciliation finds them again
  EXPECT_FALSE(window.stopped());
  EXPECT_EQ(window.in_flight(), 0);
}

}  // namespace
}  // namespace millrace::job
