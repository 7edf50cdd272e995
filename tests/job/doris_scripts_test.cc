// Doris's streaming-job regression scenarios, run as Doris's scripts write them, through the
// real `millrace serve` binary and the real mariadb client against s3rver. The scripts follow
// Doris's documented grammar and the shape of its suites (regression-test/suites/job_p0/
// streaming_job/): "provider" = "S3", a store at an IP address given as a bare host:port with
// no use_path_style, a [0-1] glob, s3.max_batch_files = 1, unquoted ALTER values, Doris's
// offsets and their errors, and a NOT NULL column loaded with insert_strict off.
#include <gtest/gtest.h>

#include "job/doris_job_columns.h"
#include "server/mysql_test_util.h"
#include "testing/s3rver.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;
using server::ServerProcess;
using testing::WaitFor;

class DorisScriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s3 = testing::S3rver::Start({"regression-bucket"});
    ASSERT_TRUE(s3.ok()) << s3.status().ToString();
    s3_ = std::move(s3).value();
    auto server = ServerProcess::Start(data_.path(), {});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    // Doris's example data: two files the glob takes, one it does not.
    for (const auto& [key, data] : std::vector<std::pair<std::string, std::string>>{
             {"regression/load/data/example_0.csv", "1,alice,10\n2,bob,20\n"},
             {"regression/load/data/example_1.csv", "3,carol,30\n4,dave,40\n"},
             {"regression/load/data/example_2.csv", "5,erin,50\n"}}) {
      ASSERT_TRUE(s3_->PutObject("regression-bucket", key, data).ok()) << key;
    }
    ASSERT_TRUE(Exec("CREATE DATABASE IF NOT EXISTS regression_test_streaming_job").ok());
  }

  // The S3() call of Doris's suites: getS3Endpoint() is a bare host:port, here an IP address.
  std::string S3() const {
    return "S3\n(\n"
           "    \"uri\" = \"s3://regression-bucket/regression/load/data/example_[0-1].csv\",\n"
           "    \"format\" = \"csv\",\n"
           "    \"provider\" = \"S3\",\n"
           "    \"column_separator\" = \",\",\n"
           "    \"s3.endpoint\" = \"127.0.0.1:" +
           std::to_string(s3_->port()) +
           "\",\n"
           "    \"s3.region\" = \"us-east-1\",\n"
           "    \"s3.access_key\" = \"S3RVER\",\n"
           "    \"s3.secret_key\" = \"S3RVER\"\n"
           ")";
  }

  // A Doris CREATE TABLE as the suites write it (a trailing comma after the last column).
  Status CreateTable(const std::string& name, const std::string& c2_type) {
    return Exec(
        "USE regression_test_streaming_job;\n"
        "CREATE TABLE IF NOT EXISTS " +
        name +
        " (\n"
        "    `c1` int NULL,\n"
        "    `c2` " +
        c2_type +
        ",\n"
        "    `c3` int  NULL,\n"
        ") ENGINE=OLAP\n"
        "DUPLICATE KEY(`c1`)\n"
        "COMMENT 'OLAP'\n"
        "DISTRIBUTED BY HASH(`c1`) BUCKETS 3\n"
        "PROPERTIES (\"replication_allocation\" = \"tag.location.default: 1\");");
  }

  Status Exec(const std::string& sql) {
    return server::MariaDbRows(server_->mysql_port(), sql).status();
  }
  // The client's error output of a statement that must fail ("" when it succeeded).
  std::string Error(const std::string& sql) {
    auto run = server::MariaDb(server_->mysql_port(), "USE regression_test_streaming_job; " + sql);
    if (!run.ok()) return run.status().ToString();
    return run->exit_code == 0 ? "" : run->err;
  }
  Rows Query(const std::string& sql) {
    auto rows = server::MariaDbRows(server_->mysql_port(), sql);
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    return rows.ok() ? *rows : Rows{};
  }
  std::string Get(const std::string& sql) {
    Rows rows = Query(sql);
    return rows.size() == 1 && rows[0].size() == 1 ? rows[0][0] : "?";
  }
  std::string JobColumn(const std::string& job, const std::string& column) {
    return Get("SELECT " + column + " FROM jobs(\"type\"=\"insert\") WHERE Name = '" + job + "'");
  }

  std::unique_ptr<testing::S3rver> s3_;
  testing::TempDir data_;
  std::unique_ptr<ServerProcess> server_;
};

// test_streaming_insert_job: one file per task, then PAUSE, ALTER with an unquoted value,
// RESUME and DROP.
TEST_F(DorisScriptsTest, StreamingInsertJobLifecycle) {
  ASSERT_TRUE(CreateTable("test_streaming_insert_job", "string NULL").ok());
  const std::string job = "test_streaming_insert_job_name";
  Status created = Exec(
      "USE regression_test_streaming_job;\n"
      "CREATE JOB " +
      job +
      "\n"
      "PROPERTIES(\n"
      "    \"s3.max_batch_files\" = \"1\"\n"
      ")\n"
      "ON STREAMING DO INSERT INTO test_streaming_insert_job\n"
      "SELECT * FROM " +
      S3());
  ASSERT_TRUE(created.ok()) << created.ToString();
  ASSERT_TRUE(WaitFor([&] { return JobColumn(job, "SucceedTaskCount") == "2"; }))
      << JobColumn(job, "ErrorMsg");
  EXPECT_EQ(
      Query("SELECT * FROM regression_test_streaming_job.test_streaming_insert_job "
            "ORDER BY c1"),
      (Rows{{"1", "alice", "10"}, {"2", "bob", "20"}, {"3", "carol", "30"}, {"4", "dave", "40"}}));
  EXPECT_EQ(Query("SELECT Status, CurrentOffset, Properties FROM jobs(\"type\"=\"insert\") "
                  "WHERE Name = '" +
                  job + "'"),
            (Rows{{"RUNNING", "{\"fileName\":\"regression/load/data/example_1.csv\"}",
                   "{\"s3.max_batch_files\":\"1\"}"}}));
  // One file per task, each with its statistics.
  EXPECT_EQ(Query("SELECT Status, LoadStatistic FROM tasks(\"type\"=\"insert\") WHERE JobName = "
                  "'" +
                  job + "' ORDER BY TaskId"),
            (Rows{{"SUCCESS",
                   "{\"scannedRows\":2,\"loadBytes\":20,\"fileNumber\":1,\"fileSize\":20,"
                   "\"filteredRows\":0}"},
                  {"SUCCESS",
                   "{\"scannedRows\":2,\"loadBytes\":21,\"fileNumber\":1,\"fileSize\":21,"
                   "\"filteredRows\":0}"}}));

  ASSERT_TRUE(Exec("PAUSE JOB where jobname = '" + job + "'").ok());
  EXPECT_EQ(JobColumn(job, "Status"), "PAUSED");
  Status altered =
      Exec("ALTER JOB " + job + "\nPROPERTIES(\n    \"session.insert_max_filter_ratio\" = 0.5\n)");
  ASSERT_TRUE(altered.ok()) << altered.ToString();
  EXPECT_EQ(JobColumn(job, "Properties"),
            "{\"s3.max_batch_files\":\"1\",\"session.insert_max_filter_ratio\":\"0.5\"}");
  ASSERT_TRUE(Exec("RESUME JOB where jobname = '" + job + "'").ok());
  EXPECT_EQ(JobColumn(job, "Status"), "RUNNING");
  ASSERT_TRUE(Exec("DROP JOB where jobname = '" + job + "'").ok());
  EXPECT_EQ(Get("SELECT count(*) FROM jobs(\"type\"=\"insert\")"), "0");
  EXPECT_EQ(Get("SELECT count(*) FROM regression_test_streaming_job.test_streaming_insert_job"),
            "4");
}

// jobs() and tasks() with Doris's columns in Doris's order, Millrace's own after them.
TEST_F(DorisScriptsTest, JobsAndTasksHaveDorisColumnsInDorisOrder) {
  auto names = [&](const std::string& function) {
    std::vector<std::string> out;
    for (const auto& row : Query("DESCRIBE SELECT * FROM " + function + "(\"type\"=\"insert\")"))
      out.push_back(row.at(0));
    return out;
  };
  EXPECT_EQ(names("jobs"), DorisJobsColumns());
  const std::vector<std::string> doris_tasks = {
      "TaskId",     "JobId",     "JobName",    "Label",       "Status",        "ErrorMsg",
      "CreateTime", "StartTime", "FinishTime", "TrackingUrl", "LoadStatistic", "User"};
  const std::vector<std::string> tasks = names("tasks");
  ASSERT_GE(tasks.size(), doris_tasks.size());
  EXPECT_EQ(std::vector<std::string>(tasks.begin(), tasks.begin() + doris_tasks.size()),
            doris_tasks);
}

// Offsets: the three Doris refuses, each in Doris's words, and one that skips the files at or
// before it.
TEST_F(DorisScriptsTest, OffsetsAsDorisReadsThem) {
  ASSERT_TRUE(CreateTable("t_offset", "string NULL").ok());
  auto create = [&](const std::string& offset) {
    return Error("CREATE JOB offset_job PROPERTIES(\"offset\" = '" + offset +
                 "') ON STREAMING DO INSERT INTO t_offset SELECT * FROM " + S3());
  };
  EXPECT_NE(create("").find("Invalid format for offset"), std::string::npos) << create("");
  EXPECT_NE(create("{\"file\":\"example_0.csv\"}").find("Invalid format for offset"),
            std::string::npos);
  EXPECT_NE(create("{\"fileName\":").find("Failed to initialize offset"), std::string::npos);
  EXPECT_EQ(Get("SELECT count(*) FROM jobs(\"type\"=\"insert\")"), "0");

  EXPECT_EQ(create("{\"fileName\":\"regression/load/data/example_0.csv\"}"), "");
  ASSERT_TRUE(WaitFor([&] { return JobColumn("offset_job", "SucceedTaskCount") == "1"; }))
      << JobColumn("offset_job", "ErrorMsg");
  EXPECT_EQ(Query("SELECT c1 FROM regression_test_streaming_job.t_offset ORDER BY c1"),
            (Rows{{"3"}, {"4"}}));
  EXPECT_EQ(JobColumn("offset_job", "CurrentOffset"),
            "{\"fileName\":\"regression/load/data/example_1.csv\"}");
}

// A NOT NULL column the files cannot fill: with insert_strict off and a ratio of 1, every row
// is filtered and the tasks still succeed, counting the rows in LoadStatistic.
TEST_F(DorisScriptsTest, EveryRowFilteredAndTheTasksStillSucceed) {
  ASSERT_TRUE(CreateTable("t_not_null", "int NOT NULL").ok());
  Status created = Exec(
      "USE regression_test_streaming_job;\n"
      "CREATE JOB not_null_job\n"
      "PROPERTIES(\n"
      "    \"session.enable_insert_strict\" = \"false\",\n"
      "    \"session.insert_max_filter_ratio\" = \"1\"\n"
      ")\n"
      "ON STREAMING DO INSERT INTO t_not_null SELECT * FROM " +
      S3());
  ASSERT_TRUE(created.ok()) << created.ToString();
  ASSERT_TRUE(WaitFor([&] {
    return JobColumn("not_null_job", "CurrentOffset") ==
           "{\"fileName\":\"regression/load/data/example_1.csv\"}";
  })) << JobColumn("not_null_job", "ErrorMsg");
  EXPECT_EQ(Get("SELECT count(*) FROM regression_test_streaming_job.t_not_null"), "0");
  EXPECT_EQ(JobColumn("not_null_job", "Status"), "RUNNING");
  EXPECT_EQ(JobColumn("not_null_job", "FailedTaskCount"), "0");
  EXPECT_EQ(JobColumn("not_null_job", "LoadStatistic"),
            "{\"scannedRows\":4,\"loadBytes\":41,\"fileNumber\":2,\"fileSize\":41,"
            "\"filteredRows\":4}");
  EXPECT_EQ(Get("SELECT count(*) FROM tasks(\"type\"=\"insert\") WHERE JobName = 'not_null_job' "
                "AND Status <> 'SUCCESS'"),
            "0");
}

// Session variables and properties as Doris checks them.
TEST_F(DorisScriptsTest, PropertiesAndSessionVariablesAsDorisChecksThem) {
  ASSERT_TRUE(CreateTable("t_props", "string NULL").ok());
  auto create = [&](const std::string& properties) {
    return Error("CREATE JOB props_job PROPERTIES(" + properties +
                 ") ON STREAMING DO INSERT INTO t_props SELECT * FROM " + S3());
  };
  EXPECT_NE(create("\"session.no_such_variable\" = \"1\"")
                .find("Invalid session variable, [no_such_variable]"),
            std::string::npos);
  EXPECT_NE(create("\"max_intervall\" = \"1\"").find("Invalid properties: [max_intervall]"),
            std::string::npos);
  EXPECT_NE(create("\"s3.max_batch_bytes\" = \"1048576\"").find("s3.max_batch_bytes"),
            std::string::npos);
  // A real Doris variable Millrace ignores, an internal key, and Doris's own timeouts.
  EXPECT_EQ(create("\"session.exec_mem_limit\" = \"8589934592\", \"__internal\" = \"x\", "
                   "\"session.insert_timeout\" = \"3600\", \"session.query_timeout\" = 600"),
            "");
  ASSERT_TRUE(WaitFor([&] { return JobColumn("props_job", "SucceedTaskCount") == "1"; }))
      << JobColumn("props_job", "ErrorMsg");
}

}  // namespace
}  // namespace millrace::job
