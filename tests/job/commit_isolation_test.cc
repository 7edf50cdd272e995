// A job's commit holds only that job: while job A's commit is held at a fail point (under A's
// lock, its transaction written and not yet committed), job B loads its files and the views
// answer. A is released only after both were seen.
#include <gtest/gtest.h>

#include "job/job_test_util.h"

namespace millrace::job {
namespace {

class CommitIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto points = FailPoints::Parse("task.before_commit/a=wait");
    ASSERT_TRUE(points.ok());
    points_ = std::move(points).value();
    for (const char* name : {"a", "b"}) {
      std::filesystem::create_directories(dir_.Join(name));
    }
    harness_.set_configure([this](JobServiceConfig& config) {
      config.fail_points = &points_;
      config.workers = 2;
    });
    harness_.Start();
    ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ta (id INTEGER, name VARCHAR)").ok());
    ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE tb (id INTEGER, name VARCHAR)").ok());
  }
  void TearDown() override {
    points_.Release("task.before_commit/a");  // never leave a worker held
    harness_.Stop();
  }

  void Write(const std::string& job, const std::string& file, int rows) {
    std::string content;
    for (int i = 0; i < rows; ++i)
      content += std::to_string(i) + "," + job + "\n";
    WriteFile(dir_.Join(job) + "/" + file, content);
  }
  void Create(const std::string& job) {
    auto created =
        harness_.Run("CREATE JOB " + job +
                     " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT "
                     "INTO t" +
                     job + " SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" = \"" +
                     dir_.Join(job) + "/*.csv\", \"column_separator\" = \",\")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  std::string Count(const std::string& table) {
    return harness_.Value("SELECT count(*) FROM " + table);
  }

  testing::TempDir dir_;
  FailPoints points_;
  JobServiceHarness harness_{dir_.Join("db.duckdb")};
};

TEST_F(CommitIsolationTest, AHeldCommitStallsNeitherOtherJobsNorTheViews) {
  Write("a", "a1.csv", 5);
  harness_.Tick();
  Create("a");
  // A's task has written rows, offset, ledger and task record, and waits under A's lock.
  ASSERT_TRUE(harness_.WaitFor([&] { return points_.Hits("task.before_commit/a") == 1; }));
  EXPECT_EQ(Count("ta"), "0");  // nothing of an uncommitted task is visible

  // B is created, loads, and loads again, while A's commit is held.
  Write("b", "b1.csv", 3);
  harness_.Tick();
  Create("b");
  ASSERT_TRUE(harness_.WaitFor([&] { return Count("tb") == "3"; }));
  Write("b", "b2.csv", 4);
  ASSERT_TRUE(harness_.WaitFor([&] { return Count("tb") == "7"; }));
  // The job's row is published just after its commit: the rows may be visible a moment before.
  EXPECT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("b", "SucceedTaskCount") == "2"; }))
      << harness_.JobColumn("b", "SucceedTaskCount");

  // The views answer, and show A's task running.
  EXPECT_EQ(harness_.Query("SELECT Name, Status, SucceedTaskCount FROM jobs(type := 'insert') "
                           "ORDER BY Name"),
            (std::vector<std::vector<std::string>>{{"a", "RUNNING", "0"}, {"b", "RUNNING", "2"}}));
  EXPECT_EQ(harness_.Query("SELECT JobName, Status FROM tasks(type := 'insert') ORDER BY "
                           "JobName, TaskId"),
            (std::vector<std::vector<std::string>>{
                {"a", "RUNNING"}, {"b", "SUCCESS"}, {"b", "SUCCESS"}}));
  EXPECT_EQ(Count("ta"), "0");
  EXPECT_EQ(points_.Hits("task.before_commit/a"), 1);  // still held

  points_.Release("task.before_commit/a");
  ASSERT_TRUE(harness_.WaitFor([&] { return Count("ta") == "5"; }));
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("a", "SucceedTaskCount") == "1"; }));
  EXPECT_EQ(harness_.JobColumn("a", "CurrentOffset"),
            "{\"fileName\":\"" + dir_.Join("a") + "/a1.csv\"}");
  EXPECT_EQ(Count("tb"), "7");
}

// PAUSE of a job whose commit is held waits for it; its epoch check then either lets the
// commit through before the pause or stops it: either way each file is in the table once.
TEST_F(CommitIsolationTest, PauseOfAJobWhoseCommitIsHeldWaitsAndLosesNothing) {
  Write("a", "a1.csv", 5);
  harness_.Tick();
  Create("a");
  ASSERT_TRUE(harness_.WaitFor([&] { return points_.Hits("task.before_commit/a") == 1; }));
  std::thread pause([&] { EXPECT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'a'").ok()); });
  // The pause is blocked on A's lock: the view still shows A RUNNING.
  EXPECT_FALSE(harness_.WaitFor([&] { return harness_.JobColumn("a", "Status") == "PAUSED"; },
                                std::chrono::milliseconds(500)));
  points_.Release("task.before_commit/a");
  pause.join();
  EXPECT_EQ(harness_.JobColumn("a", "Status"), "PAUSED");
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'a'").ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return Count("ta") == "5"; }));
  EXPECT_FALSE(harness_.WaitFor([&] { return Count("ta") != "5"; }, std::chrono::seconds(1)));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'"), "1");
}

}  // namespace
}  // namespace millrace::job
