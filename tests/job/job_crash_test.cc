// Crash tests: the job service runs in a child process that is killed with SIGKILL at random
// moments (and at each fail point) while files keep arriving; after every restart the job
// carries on, and at the end the table holds each file's rows exactly once.
//
// MILLRACE_CRASH_FILES (default 2000) and MILLRACE_CRASH_SEED size and seed a run; the
// default keeps `make test` well under two minutes, e.g. MILLRACE_CRASH_FILES=20000 for a long
// manual run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include "job/job_test_util.h"

namespace millrace::job {
namespace {

constexpr int kRowsPerFile = 5;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

// Runs the job service over `db_path` until killed. On the first start it creates the table
// and the job. Never returns.
[[noreturn]] void RunChild(const std::string& db_path, const std::string& in_dir,
                           const std::string& fail_points, bool create) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
  auto points = FailPoints::Parse(fail_points);
  if (!points.ok()) _exit(3);
  auto db = engine::Database::Open({.path = db_path, .threads = 2});
  if (!db.ok()) _exit(4);
  JobServiceConfig config;
  config.db = db->get();
  config.clock = Clock::Real();
  config.work_root = db_path + ".work";
  config.fail_points = &*points;
  config.retry_backoff = std::chrono::milliseconds(10);
  config.make_source = load::DefaultSourceFactory(Clock::Real(), std::chrono::milliseconds(50));
  auto service = JobService::Start(std::move(config));
  if (!service.ok()) {
    std::fprintf(stderr, "child: %s\n", service.status().ToString().c_str());
    _exit(5);
  }
  if (create) {
    auto conn = (*db)->Connect();
    if (!conn.ok() ||
        !(*conn)->Execute("CREATE TABLE t (file INTEGER, line INTEGER, payload VARCHAR)").ok()) {
      _exit(6);
    }
    auto created = (*service)->Execute(
        "CREATE JOB crash ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
        "\"s3.max_batch_files\" = \"50\") DO INSERT INTO t SELECT CAST(c1 AS INTEGER), "
        "CAST(c2 AS INTEGER), c3 FROM local(\"file_path\" = \"" +
        in_dir + "/*.csv\", \"column_separator\" = \",\")");
    if (!created.ok()) {
      std::fprintf(stderr, "child: %s\n", created.status().ToString().c_str());
      _exit(7);
    }
  }
  while (true)
    pause();
}

class JobCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = dir_.Join("in");
    std::filesystem::create_directories(in_);
  }

  pid_t StartChild(const std::string& fail_points, bool create) {
    const pid_t pid = fork();
    if (pid == 0) RunChild(db_path_, in_, fail_points, create);
    return pid;
  }

  static int KillAndReap(pid_t pid) {
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }

  void WriteDataFile(int file) {
    std::string content;
    for (int line = 0; line < kRowsPerFile; ++line) {
      content += std::to_string(file) + "," + std::to_string(line) + ",p" +
                 std::to_string(file * 31 + line) + "\n";
    }
    char name[32];
    std::snprintf(name, sizeof(name), "/f%06d.csv", file);
    WriteFile(in_ + name, content);
  }

  // Opens the database (no child running) and checks every file's rows are there once.
  void ExpectExactlyOnce(int files) {
    auto db = engine::OpenOrDie({.path = db_path_});
    auto conn = engine::ConnectOrDie(*db);
    EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM t"),
              std::to_string(files * kRowsPerFile));
    // Per file: the right number of rows, each line once, and the right payloads.
    EXPECT_EQ(
        engine::QueryValue(*conn,
                           "SELECT count(*) FROM (SELECT file, count(*) AS n, "
                           "count(DISTINCT line) AS lines, "
                           "bool_and(payload = 'p' || (file * 31 + line)) AS payload_ok "
                           "FROM t GROUP BY file) WHERE n = " +
                               std::to_string(kRowsPerFile) + " AND lines = n AND payload_ok"),
        std::to_string(files));
    EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(DISTINCT file) FROM t"),
              std::to_string(files));
    EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM __millrace.files"),
              std::to_string(files));
  }

  // Waits (with the child running) until the table holds `files` files' rows.
  bool WaitUntilLoaded(int files) {
    // Read through a separate process' view is not possible while the child holds the
    // database, so the child is stopped to look and restarted when not yet done.
    for (int round = 0; round < 60; ++round) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      KillAndReap(child_);
      std::string count;
      {
        auto db = engine::OpenOrDie({.path = db_path_});
        auto conn = engine::ConnectOrDie(*db);
        count = engine::QueryValue(*conn, "SELECT count(*) FROM t");
      }
      if (count == std::to_string(files * kRowsPerFile)) {
        child_ = -1;
        return true;
      }
      child_ = StartChild("", false);
    }
    return false;
  }

  void TearDown() override {
    if (child_ > 0) KillAndReap(child_);
  }

  testing::TempDir dir_;
  std::string in_;
  std::string db_path_ = dir_.Join("db.duckdb");
  pid_t child_ = -1;
};

TEST_F(JobCrashTest, KillNineAtRandomMomentsLosesAndDoublesNothing) {
  const int files = EnvInt("MILLRACE_CRASH_FILES", 2000);
  std::mt19937 rng(static_cast<unsigned>(EnvInt("MILLRACE_CRASH_SEED", 20261202)));
  std::atomic<int> written{0};
  std::thread producer([&] {
    std::mt19937 prng(7);
    for (int f = 0; f < files; ++f) {
      WriteDataFile(f);
      written = f + 1;
      // Files keep arriving for several seconds, across many kills.
      if (f % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 + prng() % 300));
    }
  });
  child_ = StartChild("", true);
  int kills = 0;
  while (written < files || kills < 8) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + rng() % 900));
    KillAndReap(child_);
    ++kills;
    child_ = StartChild("", false);
  }
  producer.join();
  ASSERT_TRUE(WaitUntilLoaded(files));
  ExpectExactlyOnce(files);
  std::printf("killed the job service %d times while loading %d files\n", kills, files);
}

// Each crash window of a task, hit on purpose: the process dies there, and after a restart the
// batch is loaded exactly once.
TEST_F(JobCrashTest, EveryFailPointCrashWindowRecovers) {
  int files = 0;
  bool created = false;
  for (const char* point : {"task.after_download", "task.before_commit", "task.after_commit"}) {
    for (int i = 0; i < 3; ++i)
      WriteDataFile(files++);
    child_ = StartChild(std::string(point) + "=crash", !created);
    created = true;
    int status = 0;
    // The child dies at the fail point by itself.
    for (int waited = 0; waited < 600 && waitpid(child_, &status, WNOHANG) == 0; ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(WIFEXITED(status)) << point;
    EXPECT_EQ(WEXITSTATUS(status), 137) << point;
    child_ = StartChild("", false);
    ASSERT_TRUE(WaitUntilLoaded(files)) << point;
    ExpectExactlyOnce(files);
  }
}

}  // namespace
}  // namespace millrace::job
