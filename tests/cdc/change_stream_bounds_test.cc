// What one change-stream task takes: what has arrived, whole transactions, up to the default
// bytes; the job's s3.max_batch_files and s3.max_batch_bytes only when it gave them.
#include <gtest/gtest.h>

#include "cdc/change_stream.h"
#include "common/clock.h"

namespace millrace::cdc {
namespace {

// A transaction ending at `order` of `changes` one-column rows of `bytes` bytes each.
SourceTransaction Transaction(uint64_t order, int changes, size_t bytes) {
  SourceTransaction t;
  t.end.order = order;
  t.end.offset = job::Offset().With("lsn", std::to_string(order));
  for (int i = 0; i < changes; ++i) {
    Change c;
    c.row.push_back(change::TupleValue{change::TupleValue::Kind::kText, std::string(bytes, 'x')});
    t.changes.push_back(std::move(c));
  }
  return t;
}

class ChangeStreamBoundsTest : public ::testing::Test {
 protected:
  ManualClock clock_{std::chrono::system_clock::now()};
  ChangeStream stream_{ChangeStreamConfig{.tables = {TableBinding{}}, .clock = &clock_}};
  job::JobRecord job_;
  StreamPosition at_;

  int64_t TakeItems(const job::BatchLimits& limits) {
    job::Polled polled = stream_.TakeBatch(job_, at_, limits, std::nullopt, job::Offset(), 0);
    return polled.batch == nullptr ? 0 : polled.batch->items();
  }
};

TEST_F(ChangeStreamBoundsTest, ADefaultJobTakesWhatHasArrived) {
  job::JobProperties defaults;
  const job::BatchLimits limits = job::BatchLimits::Of(defaults);
  ASSERT_FALSE(limits.items_given);
  // 3,000 changes in 30 transactions: far past the default s3.max_batch_files of 256.
  for (uint64_t t = 1; t <= 30; ++t)
    stream_.Received(Transaction(t, 100, 10));
  EXPECT_FALSE(stream_.Full(limits));
  EXPECT_EQ(TakeItems(limits), 3000);
}

TEST_F(ChangeStreamBoundsTest, TheDefaultBytesBoundWholeTransactions) {
  const job::BatchLimits limits = job::BatchLimits::Of(job::JobProperties());
  // Transactions of 16 MiB each: four fill the default bound, the fifth waits.
  for (uint64_t t = 1; t <= 5; ++t)
    stream_.Received(Transaction(t, 16, size_t{1} << 20));
  EXPECT_TRUE(stream_.Full(limits));
  EXPECT_EQ(TakeItems(limits), 64);
  EXPECT_EQ(TakeItems(limits), 16);
  // One transaction larger than the bound is taken whole.
  stream_.Received(Transaction(6, 100, size_t{1} << 20));
  EXPECT_EQ(TakeItems(limits), 100);
}

TEST_F(ChangeStreamBoundsTest, TheJobsOwnBoundsHoldWhenGiven) {
  auto properties = job::JobProperties::Parse({{"s3.max_batch_files", "150"}});
  ASSERT_TRUE(properties.ok()) << properties.status().ToString();
  const job::BatchLimits limits = job::BatchLimits::Of(*properties);
  for (uint64_t t = 1; t <= 3; ++t)
    stream_.Received(Transaction(t, 100, 10));
  EXPECT_TRUE(stream_.Full(limits));
  EXPECT_EQ(TakeItems(limits), 100);  // a second transaction would pass 150
  EXPECT_EQ(TakeItems(limits), 100);
}

}  // namespace
}  // namespace millrace::cdc
