// Local files are read in place (LocalSource::Place: a symlink in the task's work directory),
// not copied: a file rewritten while its task reads it must not load half old, half new. The
// task is held at fail point "task.reading" (the file placed and its records counted, DuckDB
// about to read it) while the test rewrites the file, in place or by rename over it; the check
// after the read (PlacedFile::CheckUnchanged) ends the task with nothing committed, the job lists
// again at once, and the file loads once, in its final version. The manual clock stands still
// (an hour ahead, so written files are settled): only that relisting can explain the load.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/job_test_util.h"

namespace millrace::job {
namespace {

std::string Rows(int n, const std::string& name) {
  std::string content;
  for (int i = 0; i < n; ++i)
    content += std::to_string(i) + "," + name + "\n";
  return content;
}

uint64_t Inode(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

class InPlaceReadTest : public ::testing::Test {
 protected:
  void Start(const std::string& file) {
    in_ = dir_.Join("in");
    std::filesystem::create_directories(in_);
    point_ = "task.reading/" + in_ + "/" + file;
    auto points = FailPoints::Parse(point_ + "=wait");
    ASSERT_TRUE(points.ok()) << points.status().ToString();
    points_ = std::move(points).value();
    harness_.set_configure([this](JobServiceConfig& config) { config.fail_points = &points_; });
    harness_.Start();
    ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  }
  void TearDown() override {
    points_.Release(point_);  // never leave a worker held
    harness_.Stop();
  }

  void CreateJob() {
    auto created = harness_.Run(
        "CREATE JOB inplace ON STREAMING PROPERTIES (\"max_interval\" = \"60\") DO INSERT INTO t "
        "SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" = \"" +
        in_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // After the rewrite: t holds the final version's rows only, the file is in the ledger once,
  // and the task that read the first version ended without committing, saying why.
  void ExpectFinalVersionOnce(int rows, const std::string& name) {
    points_.Release(point_);
    ASSERT_TRUE(testing::WaitFor([&] {
      return harness_.Value("SELECT count(*) FROM t") == std::to_string(rows);
    })) << harness_.Value("SELECT count(*) FROM t");
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE name <> '" + name + "'"), "0");
    EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), std::to_string(rows));
    EXPECT_EQ(harness_.JobColumn("inplace", "Status"), "RUNNING");
    // The job's row is published just after its commit: the rows may be visible a moment before.
    EXPECT_TRUE(testing::WaitFor([&] {
      return harness_.JobColumn("inplace", "SucceedTaskCount") == "1";
    })) << harness_.JobColumn("inplace", "SucceedTaskCount");
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM tasks(\"type\" = \"insert\") WHERE Status = "
                             "'CANCELED' AND ErrorMsg LIKE '%changed while it was read%'"),
              "1")
        << harness_.Value(
               "SELECT string_agg(Status || ': ' || ErrorMsg, ' | ') FROM "
               "tasks(\"type\" = \"insert\")");
    // The batch's link goes once its task ends (its directory waits emptied for the next batch,
    // load/work_dir.h).
    EXPECT_TRUE(testing::WaitFor([&] {
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(dir_.Join("db.duckdb.work"))) {
        if (entry.is_symlink()) return false;
      }
      return true;
    }));
  }

  // Writes `name` (12,000 old rows: past FetchOptions::in_place_min_bytes), creates the job and
  // returns once its task is held reading the file in place; *inode: the file's.
  void HoldTheReadOf(const std::string& name, uint64_t* inode) {
    Start(name);
    const std::string path = in_ + "/" + name;
    WriteFile(path, Rows(12000, "old"));
    *inode = Inode(path);
    CreateJob();
    ASSERT_TRUE(testing::WaitFor([&] { return points_.Hits(point_) == 1; }));
    ExpectReadInPlace();
  }

  // While the task is held: the file is not copied but linked to the file the task opened.
  void ExpectReadInPlace() {
    int links = 0;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(dir_.Join("db.duckdb.work"))) {
      if (!entry.is_symlink()) continue;
      EXPECT_EQ(std::filesystem::read_symlink(entry.path()).string().rfind("/proc/self/fd/", 0), 0u)
          << entry.path();
      ++links;
    }
    EXPECT_EQ(links, 1);
  }

  testing::TempDir dir_;
  std::string in_;
  std::string point_;
  FailPoints points_;
  JobServiceHarness harness_{dir_.Join("db.duckdb"), JobServiceHarness::Time::kManual,
                             std::chrono::hours(1)};
};

TEST_F(InPlaceReadTest, AFileRewrittenInPlaceDuringItsReadLoadsOnceInItsFinalVersion) {
  uint64_t inode = 0;
  ASSERT_NO_FATAL_FAILURE(HoldTheReadOf("f.csv", &inode));
  const std::string path = in_ + "/f.csv";  // in_: set by Start
  // Rewritten in place (truncated, same inode), shorter, as a writer that reopens it would.
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    const std::string rows = Rows(8000, "new");
    ASSERT_EQ(::write(fd, rows.data(), rows.size()), static_cast<ssize_t>(rows.size()));
    ::close(fd);
  }
  ASSERT_EQ(Inode(path), inode);
  ExpectFinalVersionOnce(8000, "new");
}

TEST_F(InPlaceReadTest, AFileReplacedByRenameDuringItsReadLoadsOnceInItsFinalVersion) {
  uint64_t inode = 0;
  ASSERT_NO_FATAL_FAILURE(HoldTheReadOf("g.csv", &inode));
  const std::string path = in_ + "/g.csv";  // in_: set by Start
  // Replaced: the path names another file (the link leads there when DuckDB opens it).
  WriteFile(in_ + "/.g.csv.tmp", Rows(9000, "new"));
  std::filesystem::rename(in_ + "/.g.csv.tmp", path);
  ASSERT_NE(Inode(path), inode);
  ExpectFinalVersionOnce(9000, "new");
}

}  // namespace
}  // namespace millrace::job
