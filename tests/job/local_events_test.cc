// Local jobs woken by inotify (source/local_watcher.h): with max_interval = 60 and the manual
// clock standing still, no poll can explain a file loaded after the job's first turn; the
// watcher's event does. An overflow of the kernel's queue still loads every file once (the
// jobs list), and a file the job's pattern does not match wakes nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "job/job_api.h"
#include "job/job_test_util.h"
#include "source/local_watcher.h"

namespace millrace::job {
namespace {

class LocalEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = dir_.Join("in");
    std::filesystem::create_directories(in_);
    auto watcher = source::LocalWatcher::Start();
    ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
    watcher_ = std::move(watcher).value();
    harness_.set_configure([this](JobServiceConfig& config) {
      config.make_source = load::DefaultSourceFactory(harness_.clock(), JobServiceHarness::kSettle,
                                                      {}, watcher_.get());
    });
    harness_.Start();
    watcher_->SetListener([this](const std::string& path, bool directory) {
      if (deaf_) {
        // Lost, as when the kernel's queue overflows.
        if (path.ends_with(".csv")) ++lost_;
        return;
      }
      woken_ += harness_.service().Wake(path, directory);
    });
    ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  }
  void TearDown() override {
    // The listener calls the service: it goes first.
    watcher_->SetListener(nullptr);
    harness_.Stop();
  }

  // Rows of t, waiting in real time only: the manual clock does not move.
  bool RowsBecome(int n) {
    return testing::WaitFor(
        [&] { return harness_.Value("SELECT count(*) FROM t") == std::to_string(n); },
        std::chrono::seconds(20));
  }
  int SucceededTasks() { return std::atoi(harness_.JobColumn("ev", "SucceedTaskCount").c_str()); }

  testing::TempDir dir_;
  std::string in_;
  std::unique_ptr<source::LocalWatcher> watcher_;
  // An hour ahead: files written now are settled by the standing clock.
  JobServiceHarness harness_{dir_.Join("db.duckdb"), JobServiceHarness::Time::kManual,
                             std::chrono::hours(1)};
  std::atomic<int> woken_{0};
  std::atomic<bool> deaf_{false};  // the listener drops events, counting them in lost_
  std::atomic<int> lost_{0};
};

TEST_F(LocalEventsTest, AFileThatLandsWakesItsJobWhileTheClockStandsStill) {
  WriteFile(in_ + "/a.csv", "1,a\n");
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB ev ON STREAMING PROPERTIES (\"max_interval\" = \"60\") DO "
                       "INSERT INTO t SELECT c1, c2 FROM local(\"file_path\" = \"" +
                       in_ + "/**.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")")
                  .ok());
  // The job's first turn, at its creation.
  ASSERT_TRUE(RowsBecome(1));
  ASSERT_TRUE(testing::WaitFor([&] { return SucceededTasks() == 1; }, std::chrono::seconds(10)));
  // The next poll is a minute away on a clock that does not move: only an event loads these.
  WriteFile(in_ + "/b.csv", "2,b\n");
  EXPECT_TRUE(RowsBecome(2));
  // A new subdirectory is watched, and what landed in it before its watch is listed.
  std::filesystem::create_directories(in_ + "/day1");
  WriteFile(in_ + "/day1/c.csv", "3,c\n");
  EXPECT_TRUE(RowsBecome(3));
  // A file the pattern does not match wakes nothing.
  const int before = woken_;
  WriteFile(in_ + "/notes.txt", "not a row\n");
  // (e.csv: a name after day1/c.csv, the job's offset; one before it is a late file, see
  // ALateFilesEventBringsTheReconciliationForward.)
  WriteFile(in_ + "/e.csv", "4,e\n");
  EXPECT_TRUE(RowsBecome(4));
  EXPECT_EQ(harness_.Value("SELECT string_agg(name, ',' ORDER BY id) FROM t"), "a,b,c,e");
  // The .txt woke nothing; e.csv (written under a temporary name, then renamed) woke the job.
  // (The .txt's events came first: once e.csv's wake is counted, theirs were handled.)
  ASSERT_TRUE(testing::WaitFor([&] { return woken_ - before >= 1; }, std::chrono::seconds(10)));
  EXPECT_EQ(woken_ - before, 1);
  // Each wake-up was followed by a commit: the metric counts them. (It is observed just after
  // the commit, so the rows can be seen a moment before it counts the last one.)
  MetricsRegistry metrics;
  harness_.service().RegisterMetrics(&metrics, {});
  const std::string count = "millrace_job_event_wake_to_commit_seconds_count{job=\"ev\"} ";
  std::string text;
  const auto counted = [&] {
    text = metrics.RenderPrometheus();
    const size_t at = text.find(count);
    return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + count.size());
  };
  EXPECT_TRUE(testing::WaitFor([&] { return counted() >= 3; }, std::chrono::seconds(10))) << text;
}

// A file that lands named at or below the job's offset (a late file) is not seen by the
// listing after the offset; its event makes the turn it wakes reconcile, so it loads now rather
// than at reconcile_interval (300 s, on a clock that stands still).
TEST_F(LocalEventsTest, ALateFilesEventBringsTheReconciliationForward) {
  WriteFile(in_ + "/a.csv", "1,a\n");
  WriteFile(in_ + "/c.csv", "3,c\n");
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB ev ON STREAMING PROPERTIES (\"max_interval\" = \"60\") DO "
                       "INSERT INTO t SELECT c1, c2 FROM local(\"file_path\" = \"" +
                       in_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")")
                  .ok());
  ASSERT_TRUE(RowsBecome(2));
  ASSERT_TRUE(testing::WaitFor([&] { return SucceededTasks() == 1; }, std::chrono::seconds(10)));
  WriteFile(in_ + "/b.csv", "2,b\n");
  EXPECT_TRUE(RowsBecome(3));
  EXPECT_EQ(harness_.Value("SELECT string_agg(name, ',' ORDER BY id) FROM t"), "a,b,c");
  // A file after the offset still loads by the listing alone, and b.csv is not loaded twice.
  WriteFile(in_ + "/d.csv", "4,d\n");
  EXPECT_TRUE(RowsBecome(4));
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), "4");
}

TEST_F(LocalEventsTest, AnOverflowStillLoadsEveryFileOnce) {
  WriteFile(in_ + "/a.csv", "0,a\n");
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB ev ON STREAMING PROPERTIES (\"max_interval\" = \"60\") DO "
                       "INSERT INTO t SELECT c1, c2 FROM local(\"file_path\" = \"" +
                       in_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")")
                  .ok());
  // Idle: its task committed and its next turn a minute away (the turn after a task looks
  // again at once).
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        auto job = ApiJob(harness_.service().ApiContext(), "root", "ev");
        if (!job.ok()) return false;
        const auto doc = nlohmann::json::parse(*job);
        return SucceededTasks() == 1 && doc["nextPollInSeconds"].is_number() &&
               doc["nextPollInSeconds"].get<double>() > 50;
      },
      std::chrono::seconds(10)));
  // Files whose events are lost, then the overflow.
  deaf_ = true;
  for (int i = 1; i <= 20; ++i)
    WriteFile(in_ + "/f" + std::to_string(100 + i) + ".csv", std::to_string(i) + ",x\n");
  ASSERT_TRUE(testing::WaitFor([&] { return lost_ >= 20; }, std::chrono::seconds(10)));
  deaf_ = false;
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "1");
  watcher_->SimulateOverflow();
  EXPECT_TRUE(RowsBecome(21));
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), "21");
}

}  // namespace
}  // namespace millrace::job
