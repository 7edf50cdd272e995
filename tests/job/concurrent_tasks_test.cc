// Several tasks of one job at once (max_concurrent_tasks): consecutive batches loaded in
// parallel, each file exactly once, and the offset never past a file whose task has not
// committed. A task is held at fail point "task.reading" on one file's key while the others
// commit past it; the manual clock stands an hour ahead (written files are settled).
#include <gtest/gtest.h>

#include "common/metrics.h"
#include "job/job_test_util.h"

namespace millrace::job {
namespace {

constexpr int kRowsPerFile = 3;

class ConcurrentTasksTest : public ::testing::Test {
 protected:
  // `held`: files whose reads wait until released.
  void Start(const std::vector<std::string>& held = {}) {
    in_ = dir_.Join("in");
    std::filesystem::create_directories(in_);
    std::string spec;
    for (const std::string& name : held) {
      points_held_.push_back(Point(name));
      spec += (spec.empty() ? "" : ",") + Point(name) + "=wait";
    }
    auto points = FailPoints::Parse(spec);
    ASSERT_TRUE(points.ok()) << points.status().ToString();
    points_ = std::move(points).value();
    harness_.set_configure([this](JobServiceConfig& config) { config.fail_points = &points_; });
    harness_.Start();
    harness_.service().RegisterMetrics(&metrics_);
    ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  }
  void TearDown() override {
    for (const std::string& point : points_held_)
      points_.Release(point);  // never leave a task held
    harness_.Stop();
  }
  std::string Point(const std::string& name) const { return "task.reading/" + Path(name); }
  // The job's millrace_job_running_tasks sample.
  std::string RunningTasksGauge() {
    const std::string text = metrics_.RenderPrometheus();
    const std::string series = "millrace_job_running_tasks{job=\"cc\"} ";
    const size_t at = text.find(series);
    return at == std::string::npos ? "" : text.substr(at + series.size(), 1);
  }
  std::string RunningTasks() {
    return harness_.Value(
        "SELECT count(*) FROM tasks(\"type\" = \"insert\") WHERE Status = 'RUNNING'");
  }

  std::string Path(const std::string& name) const { return in_ + "/" + name; }
  static std::string Name(int i) {
    char name[32];
    std::snprintf(name, sizeof(name), "f%03d.csv", i);
    return name;
  }
  // Files 1..n, kRowsPerFile rows each, ids file * 100 + line.
  void WriteFiles(int first, int last) {
    for (int i = first; i <= last; ++i) {
      std::string content;
      for (int line = 0; line < kRowsPerFile; ++line)
        content += std::to_string(i * 100 + line) + "," + Name(i) + "\n";
      WriteFile(Path(Name(i)), content);
    }
  }
  Result<std::string> CreateJob(const std::string& properties, const std::string& table = "t") {
    return harness_.Run("CREATE JOB cc ON STREAMING PROPERTIES (" + properties +
                        ") DO INSERT INTO " + table +
                        " SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" = \"" + in_ +
                        "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  }
  std::string Rows() { return harness_.Value("SELECT count(*) FROM t"); }
  std::string Offset() { return harness_.JobColumn("cc", "CurrentOffset"); }
  bool WaitForRows(int files) {
    return harness_.WaitFor([&] { return Rows() == std::to_string(files * kRowsPerFile); });
  }
  // Every file 1..n once: each id once, and the ledger's LOADED entries.
  void ExpectEachFileOnce(int files) {
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), std::to_string(files * kRowsPerFile));
    EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"),
              std::to_string(files * kRowsPerFile));
    EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'"),
              std::to_string(files));
  }

  testing::TempDir dir_;
  std::string in_;
  std::vector<std::string> points_held_;
  FailPoints points_;
  MetricsRegistry metrics_;
  JobServiceHarness harness_{dir_.Join("db.duckdb"), JobServiceHarness::Time::kManual,
                             std::chrono::hours(1)};
};

TEST_F(ConcurrentTasksTest, FourTasksLoadEveryFileOnceAndTheOffsetReachesTheLast) {
  Start();
  WriteFiles(1, 60);
  auto created = CreateJob(
      "\"max_concurrent_tasks\" = \"4\", \"s3.max_batch_files\" = \"2\", "
      "\"max_interval\" = \"1\"");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitForRows(60)) << Rows();
  ASSERT_TRUE(harness_.WaitFor([&] { return Offset().find(Name(60)) != std::string::npos; }))
      << Offset();
  ExpectEachFileOnce(60);
  EXPECT_EQ(harness_.JobColumn("cc", "Status"), "RUNNING");
  EXPECT_EQ(harness_.JobColumn("cc", "SucceedTaskCount"), "30");
  // The job's row in the catalog says the same after the last commit.
  EXPECT_NE(harness_.Value("SELECT current_offset FROM __millrace.jobs").find(Name(60)),
            std::string::npos);
  // More files later: the next turn goes on from the offset.
  WriteFiles(61, 70);
  ASSERT_TRUE(WaitForRows(70)) << Rows();
  ExpectEachFileOnce(70);
}

TEST_F(ConcurrentTasksTest, AOnceJobFinishesOnceEveryTaskCommitted) {
  Start();
  WriteFiles(1, 30);
  ASSERT_TRUE(CreateJob("\"max_concurrent_tasks\" = \"4\", \"s3.max_batch_files\" = \"2\", "
                        "\"s3.ingestion_mode\" = \"ONCE\"")
                  .ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("cc", "Status") == "FINISHED"; }))
      << harness_.JobColumn("cc", "Status");
  ExpectEachFileOnce(30);
  EXPECT_NE(Offset().find(Name(30)), std::string::npos) << Offset();
  EXPECT_EQ(RunningTasks(), "0");
}

TEST_F(ConcurrentTasksTest, SlowFilesHoldTheOffsetButNotTheOtherTasks) {
  Start({Name(3), Name(7)});
  WriteFiles(1, 12);
  auto created = CreateJob(
      "\"max_concurrent_tasks\" = \"4\", \"s3.max_batch_files\" = \"1\", \"max_interval\" = "
      "\"1\"");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // The ten others commit while the tasks of files 3 and 7 are held.
  ASSERT_TRUE(WaitForRows(10)) << Rows();
  EXPECT_EQ(points_.Hits(Point(Name(3))), 1);
  EXPECT_EQ(points_.Hits(Point(Name(7))), 1);
  EXPECT_EQ(
      harness_.Value("SELECT count(*) FROM t WHERE name IN ('" + Name(3) + "', '" + Name(7) + "')"),
      "0");
  // The offset stays before file 3, in memory and in the catalog.
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.JobColumn("cc", "SucceedTaskCount") == "10";
  })) << harness_.JobColumn("cc", "SucceedTaskCount");
  EXPECT_NE(Offset().find(Name(2)), std::string::npos) << Offset();
  EXPECT_NE(harness_.Value("SELECT current_offset FROM __millrace.jobs").find(Name(2)),
            std::string::npos);
  // tasks() and the metrics show the two running tasks.
  EXPECT_EQ(RunningTasks(), "2");
  EXPECT_EQ(RunningTasksGauge(), "2");
  EXPECT_EQ(
      harness_.Value("SELECT count(*) FROM __millrace.files WHERE key > '" + Path(Name(2)) + "'"),
      "8");

  // File 7 commits: the offset still waits for file 3.
  points_.Release(Point(Name(7)));
  ASSERT_TRUE(WaitForRows(11)) << Rows();
  ASSERT_TRUE(harness_.WaitFor([&] { return RunningTasks() == "1"; }));
  EXPECT_NE(Offset().find(Name(2)), std::string::npos) << Offset();
  // File 3 commits: the offset catches up with the last file.
  points_.Release(Point(Name(3)));
  ASSERT_TRUE(WaitForRows(12)) << Rows();
  ASSERT_TRUE(harness_.WaitFor([&] { return Offset().find(Name(12)) != std::string::npos; }))
      << Offset();
  EXPECT_EQ(RunningTasksGauge(), "0");
  ExpectEachFileOnce(12);
}

// A task that fails does not hold the others back: they commit past it, the job pauses with
// the failure, the offset stays before the failed file, and after RESUME the file loads and the
// offset catches up, the files committed past it not loaded again.
TEST_F(ConcurrentTasksTest, AFailedTaskKeepsItsFilesWhileTheOthersCommit) {
  Start();
  WriteFiles(1, 12);
  WriteFile(Path(Name(3)), "300,bad\nnot a number," + Name(3) + "\n302,bad\n");
  auto created = CreateJob(
      "\"max_concurrent_tasks\" = \"4\", \"s3.max_batch_files\" = \"1\", \"max_interval\" = "
      "\"1\"");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("cc", "Status") == "PAUSED"; }));
  EXPECT_NE(harness_.JobColumn("cc", "ErrorMsg").find(Name(3) + ": Conversion Error"),
            std::string::npos)
      << harness_.JobColumn("cc", "ErrorMsg");
  // Every other file the tasks took committed; none after the pause.
  const int committed =
      std::stoi(harness_.Value("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'"));
  EXPECT_GE(committed, 2);
  EXPECT_EQ(Rows(), std::to_string(committed * kRowsPerFile));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE name = '" + Name(3) + "'"), "0");
  EXPECT_NE(Offset().find(Name(2)), std::string::npos) << Offset();
  EXPECT_NE(harness_.Value("SELECT current_offset FROM __millrace.jobs").find(Name(2)),
            std::string::npos);

  WriteFile(Path(Name(3)), "300," + Name(3) + "\n301," + Name(3) + "\n302," + Name(3) + "\n");
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(WaitForRows(12)) << Rows();
  ASSERT_TRUE(harness_.WaitFor([&] { return Offset().find(Name(12)) != std::string::npos; }))
      << Offset();
  ExpectEachFileOnce(12);
}

// A batch that goes stale (its file replaced while read) ends the turn without a pause while
// the other tasks commit past it: the next turn, in the same epoch, lists from the offset and
// passes over the files committed ahead, loading only the replaced file, in its final version.
TEST_F(ConcurrentTasksTest, AStaleBatchEndsTheTurnAndTheNextPassesOverFilesCommittedAhead) {
  Start({Name(2)});
  WriteFiles(1, 8);
  // Past the size read in place (a copy would not see the replacement).
  std::string old_rows;
  for (int line = 0; line < 12000; ++line)
    old_rows += std::to_string(200000 + line) + ",old\n";
  WriteFile(Path(Name(2)), old_rows);
  auto created = CreateJob(
      "\"max_concurrent_tasks\" = \"4\", \"s3.max_batch_files\" = \"1\", \"max_interval\" = "
      "\"60\"");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitForRows(7)) << Rows();  // every file but the held one
  const std::string epoch = harness_.Value("SELECT epoch FROM __millrace.jobs");
  std::string new_rows;
  for (int line = 0; line < 9000; ++line)
    new_rows += std::to_string(300000 + line) + ",new\n";
  WriteFile(Path(Name(2)), new_rows);  // replaced by rename
  points_.Release(Point(Name(2)));
  ASSERT_TRUE(harness_.WaitFor([&] { return Rows() == std::to_string(7 * kRowsPerFile + 9000); }))
      << Rows();
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE name = 'old'"), "0");
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"),
            std::to_string(7 * kRowsPerFile + 9000));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'"), "8");
  EXPECT_EQ(harness_.JobColumn("cc", "Status"), "RUNNING");
  EXPECT_EQ(harness_.Value("SELECT epoch FROM __millrace.jobs"), epoch) << "no pause or resume";
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM tasks(\"type\" = \"insert\") WHERE Status = "
                           "'CANCELED' AND ErrorMsg LIKE '%changed%'"),
            "1");
  ASSERT_TRUE(harness_.WaitFor([&] { return Offset().find(Name(8)) != std::string::npos; }))
      << Offset();
}

TEST_F(ConcurrentTasksTest, PauseStopsEveryTaskAndResumeLoadsTheRestOnce) {
  Start();
  WriteFiles(1, 200);
  auto created = CreateJob(
      "\"max_concurrent_tasks\" = \"3\", \"s3.max_batch_files\" = \"1\", \"max_interval\" = "
      "\"1\"");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(harness_.WaitFor([&] { return std::stoi(Rows()) >= 10 * kRowsPerFile; }));
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'cc'").ok());
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM tasks(\"type\" = \"insert\") WHERE Status = "
                           "'RUNNING'"),
            "0");
  // What is loaded is what the ledger says, and nothing moves while paused.
  const std::string paused = Rows();
  EXPECT_EQ(harness_.Value("SELECT count(*) * " + std::to_string(kRowsPerFile) +
                           " FROM __millrace.files WHERE state = 'LOADED'"),
            paused);
  harness_.Tick(std::chrono::seconds(5));
  EXPECT_EQ(Rows(), paused);
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(WaitForRows(200)) << Rows();
  ExpectEachFileOnce(200);
}

TEST_F(ConcurrentTasksTest, OnlyDuplicateKeyTablesOfTheEmbeddedCatalogTakeSeveralTasks) {
  Start();
  ASSERT_TRUE(
      CreateDorisTable(harness_.conn(), "CREATE TABLE u (id INT, name STRING) UNIQUE KEY(id)")
          .ok());
  ASSERT_TRUE(CreateDorisTable(harness_.conn(),
                               "CREATE TABLE a (id INT, name STRING REPLACE) AGGREGATE KEY(id)")
                  .ok());
  auto unique = CreateJob("\"max_concurrent_tasks\" = \"2\"", "u");
  ASSERT_FALSE(unique.ok());
  EXPECT_EQ(unique.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unique.status().message().find("UNIQUE KEY table"), std::string::npos)
      << unique.status().message();
  auto aggregate = CreateJob("\"max_concurrent_tasks\" = \"2\"", "a");
  ASSERT_FALSE(aggregate.ok());
  EXPECT_NE(aggregate.status().message().find("AGGREGATE KEY table"), std::string::npos)
      << aggregate.status().message();
  auto bounds = CreateJob("\"max_concurrent_tasks\" = \"0\"");
  ASSERT_FALSE(bounds.ok());
  EXPECT_NE(bounds.status().message().find("max_concurrent_tasks"), std::string::npos);

  // A UNIQUE job at one task may not be altered to several; a DUPLICATE one may.
  ASSERT_TRUE(CreateJob("\"max_interval\" = \"1\"", "u").ok());
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'cc'").ok());
  auto altered = harness_.Run("ALTER JOB cc PROPERTIES (\"max_concurrent_tasks\" = \"4\")");
  ASSERT_FALSE(altered.ok());
  EXPECT_NE(altered.status().message().find("UNIQUE KEY table"), std::string::npos);
  ASSERT_TRUE(harness_.Run("DROP JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(CreateJob("\"max_interval\" = \"1\"").ok());
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(harness_.Run("ALTER JOB cc PROPERTIES (\"max_concurrent_tasks\" = \"4\")").ok());
  WriteFiles(1, 20);
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(WaitForRows(20)) << Rows();
  ExpectEachFileOnce(20);
}

// The engine decides: a target replaced by a UNIQUE KEY table after the job was created fails
// the tasks and pauses the job, saying why, rather than loading it in an order-dependent way.
TEST_F(ConcurrentTasksTest, ATargetReplacedByAUniqueKeyTablePausesTheJob) {
  Start();
  ASSERT_TRUE(CreateJob("\"max_concurrent_tasks\" = \"2\", \"max_interval\" = \"1\"").ok());
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(harness_.conn().Execute("DROP TABLE t").ok());
  ASSERT_TRUE(
      CreateDorisTable(harness_.conn(), "CREATE TABLE t (id INT, name STRING) UNIQUE KEY(id)")
          .ok());
  WriteFiles(1, 4);
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("cc", "Status") == "PAUSED"; }));
  const std::string error = harness_.JobColumn("cc", "ErrorMsg");
  EXPECT_NE(error.find("is a UNIQUE KEY table now"), std::string::npos) << error;
  EXPECT_NE(error.find("CANNOT_RESUME"), std::string::npos) << error;
  EXPECT_EQ(Rows(), "0");
}

TEST_F(ConcurrentTasksTest, MovingTheOffsetBackLoadsTheFilesAfterItAgain) {
  Start();
  WriteFiles(1, 8);
  ASSERT_TRUE(CreateJob("\"max_concurrent_tasks\" = \"4\", \"s3.max_batch_files\" = \"1\", "
                        "\"max_interval\" = \"1\"")
                  .ok());
  ASSERT_TRUE(WaitForRows(8)) << Rows();
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'cc'").ok());
  // Files after the new offset are in the ledger: they are marked to load again, not passed
  // over as files concurrent tasks committed ahead of the offset.
  ASSERT_TRUE(
      harness_
          .Run("ALTER JOB cc PROPERTIES (\"offset\" = '{\"fileName\":\"" + Path(Name(5)) + "\"}')")
          .ok());
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.files WHERE state = 'RETRYING'"), "3");
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'cc'").ok());
  ASSERT_TRUE(WaitForRows(11)) << Rows();
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t WHERE name >= '" + Name(6) + "'"),
            std::to_string(6 * kRowsPerFile));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'"), "8");
}

}  // namespace
}  // namespace millrace::job
