// The file source's read ahead: started by a poll that leaves files after its batch, and
// dropped when the job's turn ends, so nothing downloads for a job that is not running.
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

TEST(FileJobSourceTest, TheReadAheadStopsWhenTheTurnEnds) {
  testing::TempDir dir;
  const std::string in = dir.Join("in");
  const std::string work = dir.Join("work");
  std::filesystem::create_directories(in);
  std::filesystem::create_directories(work);
  for (int i = 0; i < 6; ++i)
    job::WriteFile(in + "/f" + std::to_string(i) + ".csv", std::to_string(i) + ",x\n");
  // Ahead of the files' mtimes: they have settled.
  ManualClock clock(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto db = engine::OpenOrDie({.path = dir.Join("db.duckdb")});
  auto conn = engine::ConnectOrDie(*db);
  ASSERT_TRUE(conn->Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  catalog::DuckDbCatalog stores(db.get(), "test");
  ASSERT_TRUE(stores.Open().ok());
  const std::shared_ptr<load::WorkDirs> work_dirs = load::WorkDirs::Under(work);
  job::PlanBuilder plans(job::PlanBuilderConfig{
      .db = db.get(),
      .clock = &clock,
      .catalog = stores.jobs(),
      .make_source = load::DefaultSourceFactory(&clock, std::chrono::seconds(1)),
      .make_file_source = MakeFileJobSource,
      .work_dirs = work_dirs,
      .download_parallelism = 2});
  auto plan = plans.Build(
      "INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" "
      "= \"" +
          in + "/*.csv\", \"column_separator\" = \",\")",
      "");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  job::JobRecord job;
  job.id = 1;
  job.name = "f";
  job.properties = *job::JobProperties::Parse({});
  job::JobSource& source = *(*plan)->source;

  auto polled = source.Poll(job, job::BatchLimits{2, int64_t{1} << 30});
  ASSERT_TRUE(polled.ok()) << polled.status().ToString();
  ASSERT_NE(polled->batch, nullptr);
  EXPECT_EQ(polled->batch->first_item(), in + "/f0.csv");
  EXPECT_EQ(polled->batch->last_item(), in + "/f1.csv");
  EXPECT_TRUE(polled->more);
  // The next batch (f2, f3) is listed and downloading into a work directory of its own.
  EXPECT_TRUE(testing::WaitFor([&] { return Entries(work) == 1; }));

  source.TurnEnded();
  // Its downloads stopped and its directory went back to the pool, emptied (work_dir.h).
  EXPECT_EQ(work_dirs->idle(), 1u);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(work)) {
    EXPECT_TRUE(entry.is_directory() || entry.file_size() == 0) << entry.path();
  }

  // The batch polled before is still whole: it fetches its own files when it loads.
  catalog::DuckDbSink sink(engine::ConnectOrDie(*db));
  auto loaded = polled->batch->Load(sink, job::TaskContext{1, 1, "f", "", 0}, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->stats.file_number, 2);
  ASSERT_TRUE(loaded->txn->Commit().ok());
  EXPECT_EQ(engine::QueryValue(*conn, "SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM t"),
            "0,1");
}

}  // namespace
}  // namespace millrace::files
