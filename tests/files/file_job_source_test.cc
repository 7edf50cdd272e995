// The file source's read ahead: started by a poll that leaves files after its batch, dropped
// when the job's turn ends, so nothing downloads for a job that is not running, and kept when
// the turn ended only for other jobs' turn (TurnEnd::kDueAgain).
#include "files/file_job_source.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "catalog/duckdb_catalog.h"
#include "catalog/duckdb_sink.h"
#include "engine/engine_test_util.h"
#include "job/job_plan.h"
#include "job/job_test_util.h"

namespace millrace::files {
namespace {

size_t Entries(const std::string& dir) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); ++it) {
    ++n;
  }
  return n;
}

// Files under `dir` (at any depth) that hold bytes.
size_t FilesWithBytes(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.file_size() > 0) ++n;
  }
  return n;
}

// A job over in/f0.csv .. in/f5.csv ("<i>,x"), polled two files at a time.
class ReadAheadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(in_);
    std::filesystem::create_directories(work_);
    for (int i = 0; i < 6; ++i)
      job::WriteFile(in_ + "/f" + std::to_string(i) + ".csv", std::to_string(i) + ",x\n");
    ASSERT_TRUE(conn_->Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
    ASSERT_TRUE(stores_.Open().ok());
    job::PlanBuilder plans(job::PlanBuilderConfig{
        .db = db_.get(),
        .clock = &clock_,
        .catalog = stores_.jobs(),
        .make_source = load::DefaultSourceFactory(&clock_, std::chrono::seconds(1)),
        .make_file_source = MakeFileJobSource,
        .work_dirs = work_dirs_,
        .download_parallelism = 2});
    auto plan =
        plans.Build("INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" = \"" +
                        in_ + "/*.csv\", \"column_separator\" = \",\")",
                    "");
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    plan_ = *std::move(plan);
    job_.id = 1;
    job_.name = "f";
    job_.properties = *job::JobProperties::Parse({});
  }

  job::JobSource& source() { return *plan_->source; }

  // Polls the next two files and checks which.
  std::unique_ptr<job::SourceBatch> Poll(int first) {
    auto polled = source().Poll(job_, job::BatchLimits{2, int64_t{1} << 30});
    EXPECT_TRUE(polled.ok()) << polled.status().ToString();
    if (!polled.ok() || polled->batch == nullptr) return nullptr;
    EXPECT_EQ(polled->batch->first_item(), in_ + "/f" + std::to_string(first) + ".csv");
    EXPECT_EQ(polled->batch->last_item(), in_ + "/f" + std::to_string(first + 1) + ".csv");
    EXPECT_TRUE(polled->more);
    return std::move(polled->batch);
  }

  // Loads and commits `batch`, and moves the job's offset past it, as a task does.
  void LoadAndCommit(job::SourceBatch& batch, int64_t task_id) {
    catalog::DuckDbSink sink(engine::ConnectOrDie(*db_));
    auto loaded = batch.Load(sink, job::TaskContext{1, task_id, "f", "", 0}, 0);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_EQ(loaded->stats.file_number, 2);
    ASSERT_TRUE(loaded->txn->Commit().ok());
    job_.current_offset = batch.end();
    source().Committed(batch.end());
  }

  std::string Ids() {
    return engine::QueryValue(*conn_, "SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM t");
  }

  testing::TempDir dir_;
  const std::string in_ = dir_.Join("in");
  const std::string work_ = dir_.Join("work");
  // Ahead of the files' mtimes: they have settled.
  ManualClock clock_{std::chrono::system_clock::now() + std::chrono::seconds(10)};
  std::unique_ptr<engine::Database> db_ = engine::OpenOrDie({.path = dir_.Join("db.duckdb")});
  std::unique_ptr<engine::Connection> conn_ = engine::ConnectOrDie(*db_);
  catalog::DuckDbCatalog stores_{db_.get(), "test"};
  const std::shared_ptr<load::WorkDirs> work_dirs_ = load::WorkDirs::Under(work_);
  std::shared_ptr<const job::JobPlan> plan_;
  job::JobRecord job_;
};

TEST_F(ReadAheadTest, TheReadAheadStopsWhenTheTurnEnds) {
  auto batch = Poll(0);
  ASSERT_NE(batch, nullptr);
  // The next batch (f2, f3) is listed and downloading into a work directory of its own.
  EXPECT_TRUE(testing::WaitFor([&] { return Entries(work_) == 1; }));

  source().TurnEnded(job::TurnEnd::kStopped);
  // Its downloads stopped and its directory went back to the pool, emptied (work_dir.h).
  EXPECT_EQ(work_dirs_->idle(), 1u);
  EXPECT_EQ(FilesWithBytes(work_), 0u);

  // The batch polled before is still whole: it fetches its own files when it loads.
  LoadAndCommit(*batch, 1);
  EXPECT_EQ(Ids(), "0,1");
}

TEST_F(ReadAheadTest, ATurnDueAgainKeepsTheReadAheadForTheNextTurn) {
  auto first = Poll(0);
  ASSERT_NE(first, nullptr);
  // The read ahead has downloaded f2 and f3.
  ASSERT_TRUE(testing::WaitFor([&] { return FilesWithBytes(work_) == 2; }));
  source().TurnEnded(job::TurnEnd::kDueAgain);
  EXPECT_EQ(work_dirs_->idle(), 0u);
  EXPECT_EQ(FilesWithBytes(work_), 2u);
  // Gone from the directory now: only the read ahead's copies can load them.
  std::filesystem::remove(in_ + "/f2.csv");
  std::filesystem::remove(in_ + "/f3.csv");

  // The next turn: the first batch (fetched when it loads), then the read ahead's.
  LoadAndCommit(*first, 1);
  auto second = Poll(2);
  ASSERT_NE(second, nullptr);
  LoadAndCommit(*second, 2);
  EXPECT_EQ(Ids(), "0,1,2,3");

  // A turn that stops drops the read ahead this poll started (f4, f5).
  first.reset();
  second.reset();
  source().TurnEnded(job::TurnEnd::kStopped);
  EXPECT_EQ(FilesWithBytes(work_), 0u);
}

}  // namespace
}  // namespace millrace::files
