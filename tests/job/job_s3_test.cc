// Streaming jobs over S3 (the real s3rver on loopback): CSV, JSON and Parquet, and secrets
// that never show.
#include <gtest/gtest.h>

#include "common/logging.h"
#include "job/job_test_util.h"
#include "testing/s3rver.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;

constexpr char kSecret[] = "sEcReT-kEy-nEvEr-ShOwN-4711";

class CaptureSink final : public LogSink {
 public:
  explicit CaptureSink(std::string* text) : text_(text) {}
  void Write(std::string_view line) override {
    text_->append(line);
    text_->push_back('\n');
  }

 private:
  std::string* text_;
};

class JobS3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::S3rver::Start({"landing"});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    s3_ = std::move(server).value();
    Logger::Default().SetSink(std::make_unique<CaptureSink>(&log_));
    harness_.Start();
  }
  void TearDown() override {
    harness_.Stop();
    Logger::Default().SetSink(nullptr);
  }

  std::string S3Args(const std::string& uri, const std::string& extra) {
    return "S3(\"uri\" = \"" + uri + "\", " + extra + "\"s3.endpoint\" = \"" + s3_->endpoint() +
           "\", \"s3.region\" = \"us-east-1\", \"s3.access_key\" = \"S3RVER\", "
           "\"s3.secret_key\" = \"" +
           kSecret + "\", \"use_path_style\" = \"true\")";
  }

  void Put(const std::string& key, const std::string& data) {
    ASSERT_TRUE(s3_->PutObject("landing", key, data).ok()) << key;
  }

  bool WaitForCount(const std::string& table, int64_t rows) {
    return WaitFor(
        [&] { return harness_.Value("SELECT count(*) FROM " + table) == std::to_string(rows); });
  }

  std::unique_ptr<testing::S3rver> s3_;
  std::string log_;
  testing::TempDir dir_;
  JobServiceHarness harness_{dir_.Join("db.duckdb"), JobServiceHarness::Time::kReal};
};

TEST_F(JobS3Test, CsvJobLoadsExistingThenNewObjects) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ev (id INTEGER, name VARCHAR)").ok());
  Put("ev/2026/a.csv", "1,alpha\n2,beta\n");
  Put("ev/2026/b.csv", "3,gamma\n");
  Put("ev/other/c.csv", "99,not matched\n");
  auto created = harness_.Run(
      "CREATE JOB s3ev ON STREAMING PROPERTIES (\"max_interval\" = \"1\") "
      "DO INSERT INTO ev SELECT CAST(c1 AS INTEGER), c2 FROM " +
      S3Args("s3://landing/ev/2026/*.csv", "\"format\" = \"csv\", \"column_separator\" = \",\", "));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitForCount("ev", 3));
  Put("ev/2026/c.csv", "4,delta\n5,epsilon\n");
  Put("ev/2026/d.csv", "");  // a 0-byte object: no rows, not an error
  ASSERT_TRUE(WaitForCount("ev", 5));
  ASSERT_TRUE(WaitFor([&] {
    return harness_.JobColumn("s3ev", "CurrentOffset") == "{\"fileName\":\"ev/2026/d.csv\"}";
  })) << harness_.JobColumn("s3ev", "ErrorMsg");
  EXPECT_EQ(
      harness_.Query("SELECT id, name FROM ev ORDER BY id"),
      (Rows{{"1", "alpha"}, {"2", "beta"}, {"3", "gamma"}, {"4", "delta"}, {"5", "epsilon"}}));
  EXPECT_EQ(harness_.JobColumn("s3ev", "EndOffset"), "{\"fileName\":\"ev/2026/d.csv\"}");
  EXPECT_EQ(harness_.JobColumn("s3ev", "Status"), "RUNNING");
  EXPECT_EQ(harness_.QueryExpanded("SELECT FileName, Size, State, Rows FROM "
                                   "job_files(\"job\" = \"s3ev\") ORDER BY FileName"),
            (Rows{{"ev/2026/a.csv", "15", "LOADED", "2"},
                  {"ev/2026/b.csv", "8", "LOADED", "1"},
                  {"ev/2026/c.csv", "18", "LOADED", "2"},
                  {"ev/2026/d.csv", "0", "LOADED", "0"}}));
}

TEST_F(JobS3Test, JsonAndParquetJobs) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE js (id BIGINT, user_name VARCHAR)").ok());
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE pq (id BIGINT, v DOUBLE)").ok());
  Put("js/1.json",
      "{\"id\": 1, \"user\": {\"name\": \"ann\"}}\n{\"id\": 2, \"user\": {\"name\": \"bob\"}}\n");
  // A Parquet file written by DuckDB.
  const std::string parquet = dir_.Join("p.parquet");
  ASSERT_TRUE(harness_.conn()
                  .Execute("COPY (SELECT range AS id, range / 4 AS v FROM range(1000)) TO " +
                           engine::QuoteLiteral(parquet) + " (FORMAT parquet)")
                  .ok());
  std::ifstream in(parquet, std::ios::binary);
  Put("pq/1.parquet", std::string(std::istreambuf_iterator<char>(in), {}));

  ASSERT_TRUE(harness_
                  .Run("CREATE JOB js ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO "
                       "INSERT INTO js SELECT id, user.name FROM " +
                       S3Args("s3://landing/js/*.json", "\"format\" = \"json\", "))
                  .ok());
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB pq ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO "
                       "INSERT INTO pq SELECT * FROM " +
                       S3Args("s3://landing/pq/*.parquet", "\"format\" = \"parquet\", "))
                  .ok());
  ASSERT_TRUE(WaitForCount("js", 2));
  ASSERT_TRUE(WaitForCount("pq", 1000));
  EXPECT_EQ(harness_.Query("SELECT id, user_name FROM js ORDER BY id"),
            (Rows{{"1", "ann"}, {"2", "bob"}}));
  EXPECT_EQ(harness_.Value("SELECT sum(id) || '/' || sum(v) FROM pq"), "499500/124875.0");
}

TEST_F(JobS3Test, TheSecretKeyNeverShows) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ev (id INTEGER, name VARCHAR)").ok());
  Put("sec/a.csv", "1,x\n");
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB sec ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO "
                       "INSERT INTO ev SELECT CAST(c1 AS INTEGER), c2 FROM " +
                       S3Args("s3://landing/sec/*.csv", "\"column_separator\" = \",\", "))
                  .ok());
  ASSERT_TRUE(WaitForCount("ev", 1));
  // An error that involves the job's S3 settings: a bad endpoint in an ALTER.
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'sec'").ok());
  auto bad = harness_.Run(
      "ALTER JOB sec INSERT INTO ev SELECT CAST(c1 AS INTEGER), c2 FROM "
      "S3(\"uri\" = \"s3://landing/sec/*.csv\", \"s3.endpoint\" = "
      "\"http://127.0.0.1:1\", \"s3.secret_key\" = \"" +
      std::string(kSecret) + "\", \"s3.access_key\" = \"S3RVER\", \"colour\" = \"red\")");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find(kSecret), std::string::npos);

  std::string everything;
  for (const auto& view :
       {"SELECT * FROM jobs(type := 'insert')", "SELECT * FROM tasks(type := 'insert')"}) {
    for (const auto& row : harness_.Query(view)) {
      for (const auto& cell : row)
        everything += cell + "\n";
    }
  }
  for (const auto& row : harness_.QueryExpanded("SELECT * FROM job_files(\"job\" = \"sec\")")) {
    for (const auto& cell : row)
      everything += cell + "\n";
  }
  EXPECT_NE(everything.find("\"s3.secret_key\" = \"***\""), std::string::npos) << everything;
  EXPECT_EQ(everything.find(kSecret), std::string::npos);
  EXPECT_NE(log_.find("created job sec"), std::string::npos);
  EXPECT_EQ(log_.find(kSecret), std::string::npos) << log_;
}

// SHOW CREATE JOB: the secret is a placeholder; filled in, the statement recreates an equal
// job (definition, properties, comment), which loads from where its source starts.
TEST_F(JobS3Test, ShowCreateJobRecreatesAnEqualJob) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ev (id INTEGER, name VARCHAR)").ok());
  Put("shown/a.csv", "1,x\n");
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB shown ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
                       "\"on_error\" = \"skip_file\") COMMENT 'it''s shown' DO INSERT INTO ev "
                       "SELECT CAST(c1 AS INTEGER), c2 FROM " +
                       S3Args("s3://landing/shown/*.csv", "\"column_separator\" = \",\", "))
                  .ok());
  ASSERT_TRUE(WaitForCount("ev", 1));
  auto shown = harness_.service().ShowCreateJob("shown");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_EQ(shown->find(kSecret), std::string::npos) << *shown;
  EXPECT_EQ(shown->rfind("CREATE JOB `shown` ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
                         "\"on_error\" = \"skip_file\") COMMENT 'it''s shown' DO INSERT INTO ev",
                         0),
            0u)
      << *shown;
  const size_t placeholder = shown->find("\"${s3.secret_key}\"");
  ASSERT_NE(placeholder, std::string::npos) << *shown;
  const std::string before = harness_.Value(
      "SELECT ExecuteSql || ' | ' || Properties || ' | ' || Comment FROM jobs(type := "
      "'insert') WHERE Name = 'shown'");

  std::string filled = *shown;
  filled.replace(placeholder + 1, std::string("${s3.secret_key}").size(), kSecret);
  ASSERT_TRUE(harness_.Run("DROP JOB WHERE jobname = 'shown'").ok());
  ASSERT_TRUE(harness_.conn().Execute("DELETE FROM ev").ok());
  auto recreated = harness_.Run(filled);
  ASSERT_TRUE(recreated.ok()) << recreated.status().ToString() << "\n" << filled;
  EXPECT_EQ(harness_.Value("SELECT ExecuteSql || ' | ' || Properties || ' | ' || Comment FROM "
                           "jobs(type := 'insert') WHERE Name = 'shown'"),
            before);
  ASSERT_TRUE(WaitForCount("ev", 1));  // the same source, loaded again by the new job
  EXPECT_EQ(harness_.service().ShowCreateJob("shown").value_or(""), *shown);
  EXPECT_EQ(harness_.service().ShowCreateJob("nope").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace millrace::job
