#include "cdc/staged_run.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/database.h"

namespace millrace::cdc {
namespace {

class StagedRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = engine::Database::Open({});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(RegisterStagedRuns(*db_).ok());
    auto a = db_->Connect();
    auto b = db_->Connect();
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(a).value();
    b_ = std::move(b).value();
  }
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> a_;
  std::unique_ptr<engine::Connection> b_;
};

TEST_F(StagedRunTest, ARunReadsBackInOrderWithItsNullsAcrossVectors) {
  // Values viewed in place and values kept by the run, NULLs, over more rows than a vector.
  std::vector<std::string> texts;
  for (int r = 0; r < 3000; ++r)
    texts.push_back("row " + std::to_string(r));
  StagedRun run(2);
  for (int r = 0; r < 3000; ++r) {
    run.Add(texts[r]);
    if (r % 7 == 0) {
      run.Add(std::nullopt);
    } else {
      run.AddOwned(std::to_string(r * 2));
    }
    run.EndRow(r, r % 2 == 1, r % 5 == 0 ? ",1," : "");
  }
  run.Publish(*a_);
  auto rows = engine::QueryTextRows(
      *a_,
      "SELECT count(*), count(c1), sum(CAST(c1 AS BIGINT)), count(*) FILTER (__del), "
      "count(__keep), min(__seq), max(__seq), max(c0) FILTER (__seq = 2999) FROM " +
          run.FromItem());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  // c1 is NULL in 429 rows (r % 7 == 0); the others sum to twice the sum of their r.
  int64_t sum = 0;
  for (int r = 0; r < 3000; ++r)
    sum += r % 7 == 0 ? 0 : 2 * r;
  EXPECT_EQ((*rows)[0], (std::vector<std::string>{"3000", "2571", std::to_string(sum), "1500",
                                                  "600", "0", "2999", "row 2999"}));
  auto ordered = engine::QueryTextRows(*a_, "SELECT __seq FROM " + run.FromItem() + " LIMIT 3");
  ASSERT_TRUE(ordered.ok());
  EXPECT_EQ(*ordered, (std::vector<std::vector<std::string>>{{"0"}, {"1"}, {"2"}}));
}

TEST_F(StagedRunTest, OnlyItsConnectionReadsARunAndOnlyWhileItLives) {
  std::string from;
  {
    StagedRun run(1);
    run.Add("secret");
    run.EndRow(0, false, "");
    run.Publish(*a_);
    from = run.FromItem();
    EXPECT_TRUE(engine::QueryTextRows(*a_, "SELECT * FROM " + from).ok());
    auto other = engine::QueryTextRows(*b_, "SELECT * FROM " + from);
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.status().message().find("no staged run"), std::string::npos)
        << other.status().ToString();
  }
  EXPECT_FALSE(engine::QueryTextRows(*a_, "SELECT * FROM " + from).ok());
  EXPECT_FALSE(engine::QueryTextRows(*a_, "SELECT * FROM __millrace_cdc_run(run := 'x')").ok());
}

TEST_F(StagedRunTest, TheFunctionIsNotListedForUsersStatements) {
  for (const std::string& name : db_->RegisteredTableFunctions())
    EXPECT_NE(name, "__millrace_cdc_run");
}

}  // namespace
}  // namespace millrace::cdc
