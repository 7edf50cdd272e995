#include "job/job_service.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

#include "job/doris_job_columns.h"
#include "job/job_test_util.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;

class JobServiceTest : public LocalJobTest {
 protected:
  std::string CreateSql(const std::string& name, const std::string& properties,
                        const std::string& pattern = "*.csv") {
    return "CREATE JOB " + name + " ON STREAMING PROPERTIES (" + properties +
           ") DO INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" = \"" + in_ +
           "/" + pattern + "\", \"format\" = \"csv\", \"column_separator\" = \",\")";
  }

  void WriteCsv(const std::string& name, int first, int count) {
    std::string content;
    for (int i = first; i < first + count; ++i) {
      content += std::to_string(i) + ",row" + std::to_string(i) + "\n";
    }
    WriteFile(in_ + "/" + name, content);
  }

  bool WaitForRows(int64_t rows) {
    return harness_.WaitFor(
        [&] { return harness_.Value("SELECT count(*) FROM t") == std::to_string(rows); });
  }
};

TEST_F(JobServiceTest, LoadsExistingFilesThenEachNewFile) {
  WriteCsv("a.csv", 0, 10);
  WriteCsv("b.csv", 10, 5);
  auto created = harness_.Run(CreateSql("ev", "\"max_interval\" = \"1\""));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitForRows(15));
  WriteCsv("c.csv", 15, 7);
  ASSERT_TRUE(WaitForRows(22));
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), "22");
  EXPECT_EQ(harness_.JobColumn("ev", "Status"), "RUNNING");
  // jobs() shows the job as published after its commit: a moment after its rows are visible.
  EXPECT_TRUE(harness_.WaitFor([&] {
    return harness_.JobColumn("ev", "CurrentOffset") == "{\"fileName\":\"" + in_ + "/c.csv\"}";
  })) << harness_.JobColumn("ev", "CurrentOffset");
  EXPECT_EQ(harness_.JobColumn("ev", "ExecuteType"), "STREAMING");
  // Files a.csv..c.csv, in rows and bytes.
  const std::string stats = harness_.JobColumn("ev", "LoadStatistic");
  EXPECT_NE(stats.find("\"scannedRows\":22"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"fileNumber\":3"), std::string::npos) << stats;
  // The ledger holds each file once with its rows.
  EXPECT_EQ(harness_.QueryExpanded(
                "SELECT FileName, State, Rows FROM job_files(\"job\" = \"ev\") ORDER BY FileName"),
            (Rows{{in_ + "/a.csv", "LOADED", "10"},
                  {in_ + "/b.csv", "LOADED", "5"},
                  {in_ + "/c.csv", "LOADED", "7"}}));
}

TEST_F(JobServiceTest, OneFilePerTaskWithMatchingOffsets) {
  for (int i = 0; i < 4; ++i)
    WriteCsv("f" + std::to_string(i) + ".csv", i * 10, 10);
  ASSERT_TRUE(
      harness_.Run(CreateSql("one", "\"max_interval\" = \"1\", \"s3.max_batch_files\" = \"1\""))
          .ok());
  ASSERT_TRUE(WaitForRows(40));
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.Value(
               "SELECT count(*) FROM tasks(type := 'insert') WHERE Status = 'SUCCESS'") == "4";
  }));
  Rows tasks = harness_.Query(
      "SELECT TaskId, Label, Status, RunningOffset, LoadStatistic FROM tasks(type := 'insert') "
      "ORDER BY TaskId");
  ASSERT_EQ(tasks.size(), 4u);
  const std::string id = harness_.JobColumn("one", "Id");
  for (int i = 0; i < 4; ++i) {
    const std::string file = in_ + "/f" + std::to_string(i) + ".csv";
    EXPECT_EQ(tasks[i][0], std::to_string(i + 1));
    EXPECT_EQ(tasks[i][1], id + "_" + std::to_string(i + 1));
    EXPECT_EQ(tasks[i][2], "SUCCESS");
    EXPECT_EQ(tasks[i][3], "{\"startFileName\":\"" + file + "\",\"endFileName\":\"" + file + "\"}");
    EXPECT_NE(tasks[i][4].find("\"scannedRows\":10,"), std::string::npos) << tasks[i][4];
  }
  EXPECT_EQ(harness_.JobColumn("one", "SucceedTaskCount"), "4");
}

TEST_F(JobServiceTest, PauseStopsLoadingAndResumeCatchesUp) {
  WriteCsv("a.csv", 0, 3);
  ASSERT_TRUE(harness_.Run(CreateSql("p", "\"max_interval\" = \"1\"")).ok());
  ASSERT_TRUE(WaitForRows(3));
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'p'").ok());
  EXPECT_EQ(harness_.JobColumn("p", "Status"), "PAUSED");
  EXPECT_EQ(harness_.JobColumn("p", "ErrorMsg"),
            "{\"code\":\"MANUAL_PAUSE_ERR\",\"msg\":\"paused by user\"}");
  WriteCsv("b.csv", 3, 4);
  // Paused: the file stays unloaded while the job would have polled several times.
  EXPECT_FALSE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") != "3"; },
                                std::chrono::seconds(3)));
  auto again = harness_.Run("PAUSE JOB WHERE jobname = 'p'");
  EXPECT_FALSE(again.ok());
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'p'").ok());
  ASSERT_TRUE(WaitForRows(7));
  EXPECT_EQ(harness_.JobColumn("p", "Status"), "RUNNING");
  EXPECT_EQ(harness_.JobColumn("p", "ErrorMsg"), "NULL");
}

// Batches of small files chain: each task lists and downloads the next batch while it loads,
// and the next task takes it. Every file still loads once, in tasks of consecutive files.
TEST_F(JobServiceTest, ChainedBatchesLoadEveryFileOnceInOrder) {
  constexpr int kFiles = 300;
  for (int i = 0; i < kFiles; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "f%03d.csv", i);
    WriteCsv(name, i * 3, 3);
  }
  harness_.Tick();  // all settled
  ASSERT_TRUE(
      harness_.Run(CreateSql("c", "\"max_interval\" = \"60\", \"s3.max_batch_files\" = \"20\""))
          .ok());
  ASSERT_TRUE(WaitForRows(3 * kFiles));
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), std::to_string(3 * kFiles));
  // The job's row is published just after the last commit: the rows may be visible before.
  EXPECT_TRUE(testing::WaitFor([&] {
    return harness_.JobColumn("c", "SucceedTaskCount") == std::to_string(kFiles / 20);
  })) << harness_.JobColumn("c", "SucceedTaskCount");
  // Each task took the 20 files after the previous one's.
  const Rows tasks = harness_.QueryExpanded(
      "SELECT regexp_extract(json_extract_string(RunningOffset, '$.startFileName'), 'f(\\d+)', 1), "
      "regexp_extract(json_extract_string(RunningOffset, '$.endFileName'), 'f(\\d+)', 1) "
      "FROM tasks(type := 'insert') WHERE JobName = 'c' ORDER BY TaskId");
  ASSERT_EQ(tasks.size(), static_cast<size_t>(kFiles / 20));
  for (size_t t = 0; t < tasks.size(); ++t) {
    EXPECT_EQ(std::stoi(tasks[t][0]), static_cast<int>(t) * 20) << t;
    EXPECT_EQ(std::stoi(tasks[t][1]), static_cast<int>(t) * 20 + 19) << t;
  }
  EXPECT_EQ(harness_.QueryExpanded("SELECT count(*), count(DISTINCT FileName) FROM "
                                   "job_files(\"job\" = \"c\") WHERE State = 'LOADED'"),
            (Rows{{std::to_string(kFiles), std::to_string(kFiles)}}));
}

TEST_F(JobServiceTest, PauseEndsAChainAndResumeLoadsTheRestOnce) {
  constexpr int kFiles = 400;
  for (int i = 0; i < kFiles; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "f%03d.csv", i);
    WriteCsv(name, i, 1);
  }
  harness_.Tick();
  ASSERT_TRUE(harness_
                  .Run(CreateSql("c",
                                 "\"max_interval\" = \"60\", \"s3.max_batch_files\" = \"5\", "
                                 "\"on_error\" = \"skip_file\""))
                  .ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("c", "SucceedTaskCount") != "0"; }));
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'c'").ok());
  const std::string loaded = harness_.Value("SELECT count(*) FROM t");
  EXPECT_FALSE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") != loaded; },
                                std::chrono::seconds(2)));
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'c'").ok());
  ASSERT_TRUE(WaitForRows(kFiles));
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), std::to_string(kFiles));
  // The interrupted statements of the pause were not taken for bad files.
  EXPECT_EQ(harness_.QueryExpanded("SELECT count(*) FROM job_files(\"job\" = \"c\") WHERE "
                                   "State <> 'LOADED'"),
            (Rows{{"0"}}));
}

TEST_F(JobServiceTest, AlterRules) {
  WriteCsv("a.csv", 0, 2);
  ASSERT_TRUE(harness_.Run(CreateSql("al", "\"max_interval\" = \"1\"")).ok());
  ASSERT_TRUE(WaitForRows(2));

  auto running = harness_.Run("ALTER JOB al PROPERTIES (\"max_interval\" = \"2\")");
  ASSERT_FALSE(running.ok());
  EXPECT_NE(running.status().message().find("only a PAUSED job"), std::string::npos);

  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'al'").ok());
  auto unknown = harness_.Run("ALTER JOB al PROPERTIES (\"max_intervals\" = \"2\")");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("Supported keys are max_interval"), std::string::npos);

  auto uri = harness_.Run(
      "ALTER JOB al INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 FROM "
      "local(\"file_path\" = \"" +
      in_ + "/*.tsv\", \"format\" = \"csv\")");
  ASSERT_FALSE(uri.ok());
  EXPECT_NE(uri.status().message().find("uri cannot change"), std::string::npos);

  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE other (id INTEGER, name VARCHAR)").ok());
  auto target = harness_.Run(
      "ALTER JOB al INSERT INTO other SELECT CAST(c1 AS INTEGER), c2 FROM "
      "local(\"file_path\" = \"" +
      in_ +
      "/*.csv\", \"format\" = \"csv\", "
      "\"column_separator\" = \",\")");
  ASSERT_FALSE(target.ok());
  EXPECT_NE(target.status().message().find("target table cannot change"), std::string::npos);

  auto nothing = harness_.Run("ALTER JOB al PROPERTIES (\"max_interval\" = \"1\")");
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("changes nothing"), std::string::npos);

  // The SELECT may change: from now on names are upper-cased.
  ASSERT_TRUE(harness_
                  .Run("ALTER JOB al PROPERTIES (\"max_interval\" = \"1s\") DO INSERT INTO t "
                       "SELECT CAST(c1 AS INTEGER), upper(c2) FROM local(\"file_path\" = \"" +
                       in_ + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")")
                  .ok());
  EXPECT_NE(harness_.JobColumn("al", "ExecuteSql").find("upper(c2)"), std::string::npos);
  EXPECT_EQ(harness_.JobColumn("al", "Properties"), "{\"max_interval\":\"1s\"}");
  // Moving the offset back reloads from there: a.csv is read again, with the new SELECT.
  ASSERT_TRUE(harness_.Run("ALTER JOB al PROPERTIES (\"offset\" = '{\"fileName\":\"\"}')").ok());
  EXPECT_EQ(harness_.JobColumn("al", "CurrentOffset"), "NULL");
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'al'").ok());
  ASSERT_TRUE(WaitForRows(4));
  EXPECT_EQ(harness_.Query("SELECT name FROM t ORDER BY name"),
            (Rows{{"ROW0"}, {"ROW1"}, {"row0"}, {"row1"}}));
}

TEST_F(JobServiceTest, DropRemovesTheJobButKeepsTheData) {
  WriteCsv("a.csv", 0, 5);
  ASSERT_TRUE(harness_.Run(CreateSql("d", "\"max_interval\" = \"1\"")).ok());
  ASSERT_TRUE(WaitForRows(5));
  ASSERT_TRUE(harness_.Run("DROP JOB WHERE jobname = 'd'").ok());
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM jobs(type := 'insert')"), "0");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.files"), "0");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "5");
  WriteCsv("b.csv", 5, 5);
  EXPECT_FALSE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") != "5"; },
                                std::chrono::seconds(2)));
  EXPECT_EQ(harness_.Run("DROP JOB WHERE jobname = 'd'").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(harness_.Run("DROP JOB IF EXISTS WHERE jobname = 'd'").ok());
}

TEST_F(JobServiceTest, OnceEndsFinished) {
  WriteCsv("a.csv", 0, 3);
  WriteCsv("b.csv", 3, 3);
  ASSERT_TRUE(harness_
                  .Run(CreateSql("once",
                                 "\"s3.ingestion_mode\" = \"ONCE\", "
                                 "\"s3.max_batch_files\" = \"1\""))
                  .ok());
  ASSERT_TRUE(harness_.WaitFor([&] { return harness_.JobColumn("once", "Status") == "FINISHED"; }));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "6");
  EXPECT_EQ(harness_.JobColumn("once", "SucceedTaskCount"), "2");
}

TEST_F(JobServiceTest, BadStatementsAreRejectedWithClearErrors) {
  auto prop = harness_.Run(CreateSql("x", "\"max_batch\" = \"1\""));
  ASSERT_FALSE(prop.ok());
  EXPECT_NE(prop.status().message().find("Invalid properties: [max_batch]"), std::string::npos);
  EXPECT_NE(prop.status().message().find("s3.max_batch_files"), std::string::npos);

  auto value = harness_.Run(CreateSql("x", "\"max_interval\" = \"soon\""));
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("\"max_interval\" must be"), std::string::npos);

  auto table = harness_.Run(
      "CREATE JOB x ON STREAMING DO INSERT INTO missing SELECT * FROM "
      "local(\"file_path\" = \"" +
      in_ + "/*.csv\")");
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find("missing"), std::string::npos);

  auto no_source = harness_.Run("CREATE JOB x ON STREAMING DO INSERT INTO t SELECT 1, 'a'");
  ASSERT_FALSE(no_source.ok());
  EXPECT_NE(no_source.status().message().find("exactly one S3(...), local(...) or cdc_stream(...)"),
            std::string::npos);

  auto syntax = harness_.Run("CREATE JOB x ONN STREAMING DO INSERT INTO t SELECT 1");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("expected ON STREAMING"), std::string::npos);

  ASSERT_TRUE(harness_.Run(CreateSql("dup", "\"max_interval\" = 5")).ok());
  EXPECT_EQ(harness_.Run(CreateSql("dup", "\"max_interval\" = 5")).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(harness_.Run("PAUSE JOB WHERE jobname = 'nope'").status().code(),
            StatusCode::kNotFound);
}

TEST_F(JobServiceTest, JobsViewColumnsAndValues) {
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB v PROPERTIES (\"max_interval\" = \"3\") ON STREAMING "
                       "COMMENT 'nightly' DO INSERT INTO t SELECT CAST(c1 AS INTEGER), c2 "
                       "FROM local(\"file_path\" = \"" +
                       in_ +
                       "/*.csv\", \"column_separator\" "
                       "= \",\")")
                  .ok());
  auto result = harness_.conn().Query("SELECT * FROM jobs(type := 'insert')");
  ASSERT_TRUE(result.ok());
  std::vector<std::string> names;
  for (size_t i = 0; i < (*result)->column_count(); ++i)
    names.push_back((*result)->column_name(i));
  EXPECT_EQ(names, DorisJobsColumns());
  EXPECT_EQ(harness_.Query("SELECT Id, Name, Definer, ExecuteType, RecurringStrategy, Status, "
                           "Comment, Properties, LoadStatistic, Lag FROM jobs(type := 'insert') "
                           "WHERE Name = 'v' ORDER BY Id"),
            (Rows{{"1", "v", "root", "STREAMING", "NULL", "RUNNING", "nightly",
                   "{\"max_interval\":\"3\"}",
                   "{\"scannedRows\":0,\"loadBytes\":0,\"fileNumber\":0,\"fileSize\":0,"
                   "\"filteredRows\":0}",
                   "{\"files\":0,\"bytes\":0}"}}));
  auto bad = harness_.conn().Query("SELECT * FROM jobs(type := 'mv')");
  EXPECT_FALSE(bad.ok());
}

TEST_F(JobServiceTest, RestartBringsEveryJobBackInItsState) {
  WriteCsv("a.csv", 0, 4);
  ASSERT_TRUE(harness_.Run(CreateSql("r1", "\"max_interval\" = \"1\"")).ok());
  ASSERT_TRUE(harness_.Run(CreateSql("r2", "\"max_interval\" = \"1\"", "*.none")).ok());
  ASSERT_TRUE(WaitForRows(4));
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'r2'").ok());
  harness_.Stop();

  WriteCsv("b.csv", 4, 4);
  harness_.Start();
  EXPECT_EQ(harness_.JobColumn("r2", "Status"), "PAUSED");
  ASSERT_TRUE(WaitForRows(8));
  EXPECT_EQ(harness_.JobColumn("r1", "Status"), "RUNNING");
  // The view is published just after the commit that made the rows visible.
  EXPECT_TRUE(
      harness_.WaitFor([&] { return harness_.JobColumn("r1", "SucceedTaskCount") == "2"; }));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM tasks(type := 'insert') WHERE JobName = 'r1'"),
            "2");
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), "8");
}

}  // namespace
}  // namespace millrace::job

namespace millrace::job {
namespace {

class LateFilesTest : public JobServiceTest {};

TEST_F(LateFilesTest, LateFilesAreLoadedExactlyOnce) {
  WriteCsv("b.csv", 10, 2);
  WriteCsv("c.csv", 20, 2);
  ASSERT_TRUE(harness_
                  .Run(CreateSql("late",
                                 "\"max_interval\" = \"1\", \"reconcile_interval\" = "
                                 "\"1\""))
                  .ok());
  ASSERT_TRUE(WaitForRows(4));
  WriteCsv("a.csv", 0, 3);  // arrives with a name below the offset
  ASSERT_TRUE(WaitForRows(7));
  EXPECT_EQ(harness_.JobColumn("late", "CurrentOffset"), "{\"fileName\":\"" + in_ + "/c.csv\"}");
  // Several more reconciliations find nothing new: still each row once.
  EXPECT_FALSE(harness_.WaitFor([&] { return harness_.Value("SELECT count(*) FROM t") != "7"; },
                                std::chrono::seconds(3)));
  EXPECT_EQ(harness_.Value("SELECT count(DISTINCT id) FROM t"), "7");
  EXPECT_EQ(harness_.QueryExpanded("SELECT regexp_replace(FileName, '.*/', ''), State, Rows FROM "
                                   "job_files(\"job\" = \"late\") ORDER BY FileName"),
            (Rows{{"a.csv", "LOADED", "3"}, {"b.csv", "LOADED", "2"}, {"c.csv", "LOADED", "2"}}));
}

TEST_F(LateFilesTest, IgnoredLateFilesAreSkippedAndCounted) {
  WriteCsv("b.csv", 10, 2);
  ASSERT_TRUE(harness_
                  .Run(CreateSql("ign",
                                 "\"max_interval\" = \"1\", \"reconcile_interval\" = "
                                 "\"1\", \"late_files\" = \"ignore\""))
                  .ok());
  ASSERT_TRUE(WaitForRows(2));
  WriteCsv("a.csv", 0, 3);
  // The ledger records the skip before the task publishes its note: wait for both.
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.QueryExpanded(
               "SELECT State FROM job_files(\"job\" = \"ign\") WHERE FileName "
               "LIKE '%a.csv'") == Rows{{"SKIPPED"}} &&
           harness_.JobColumn("ign", "JobRuntimeMsg").find("1 late file(s) skipped") !=
               std::string::npos;
  }));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "2");
}

TEST_F(LateFilesTest, AChangedObjectIsReportedNotReloaded) {
  WriteCsv("a.csv", 0, 2);
  ASSERT_TRUE(harness_
                  .Run(CreateSql("chg",
                                 "\"max_interval\" = \"1\", \"reconcile_interval\" = "
                                 "\"1\""))
                  .ok());
  ASSERT_TRUE(WaitForRows(2));
  WriteCsv("a.csv", 100, 5);  // rewritten in place after it was loaded
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.JobColumn("chg", "JobRuntimeMsg").find("changed after they were loaded") !=
           std::string::npos;
  }));
  EXPECT_NE(harness_.QueryExpanded("SELECT Error FROM job_files(\"job\" = \"chg\")")[0][0].find(
                "changed after it was loaded"),
            std::string::npos);
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM t"), "2");
}

}  // namespace
}  // namespace millrace::job
