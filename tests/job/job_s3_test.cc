// Streaming jobs over S3 (the real s3rver on loopback): CSV, JSON and Parquet, secrets that
// never show, and the object-store metrics of a job (through a fault-injecting proxy).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/logging.h"
#include "common/metrics.h"
#include "job/job_api.h"
#include "job/job_errors.h"
#include "job/job_events.h"
#include "job/job_test_util.h"
#include "testing/fault_proxy.h"
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

  // `endpoint`: "" for s3rver itself.
  std::string S3Args(const std::string& uri, const std::string& extra,
                     const std::string& endpoint = "") {
    return "S3(\"uri\" = \"" + uri + "\", " + extra + "\"s3.endpoint\" = \"" +
           (endpoint.empty() ? s3_->endpoint() : endpoint) +
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

// Doris's path_partition_keys in a job: small CSV files of several partitions (read in groups
// by one reader), a JSON file, and a file whose path lacks the key, set aside with its reason.
TEST_F(JobS3Test, PathPartitionKeysFillColumnsFromEachFilesPath) {
  ASSERT_TRUE(
      harness_.conn().Execute("CREATE TABLE visits (id INTEGER, city VARCHAR, day DATE)").ok());
  Put("pp/city=paris/day=2026-12-01/a.csv", "1\n2\n");
  Put("pp/city=paris/day=2026-12-02/b.csv", "3\n");
  Put("pp/city=rome/day=2026-12-01/c.csv", "4\n");
  Put("pp/d.csv", "5\n");  // no partition directories
  auto created = harness_.Run(
      "CREATE JOB visits ON STREAMING PROPERTIES (\"max_interval\" = \"1\", \"on_error\" = "
      "\"skip_file\") DO INSERT INTO visits SELECT CAST(c1 AS INTEGER), city, day FROM " +
      S3Args("s3://landing/pp/**.csv", "\"path_partition_keys\" = \"city,day\", "));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitFor([&] {
    return harness_.JobColumn("visits", "CurrentOffset") == "{\"fileName\":\"pp/d.csv\"}";
  })) << harness_.JobColumn("visits", "ErrorMsg");
  EXPECT_EQ(harness_.Query("SELECT id, city, day FROM visits ORDER BY id"),
            (Rows{{"1", "paris", "2026-12-01"},
                  {"2", "paris", "2026-12-01"},
                  {"3", "paris", "2026-12-02"},
                  {"4", "rome", "2026-12-01"}}));
  EXPECT_EQ(harness_.QueryExpanded("SELECT FileName, State, coalesce(Reason, '') FROM "
                                   "job_files(\"job\" = \"visits\") ORDER BY FileName"),
            (Rows{{"pp/city=paris/day=2026-12-01/a.csv", "LOADED", ""},
                  {"pp/city=paris/day=2026-12-02/b.csv", "LOADED", ""},
                  {"pp/city=rome/day=2026-12-01/c.csv", "LOADED", ""},
                  {"pp/d.csv", "QUARANTINED", "PARTITION_NOT_IN_PATH"}}));
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
  // The event secret the job got at CREATE JOB is shown, so the job made again keeps it.
  EXPECT_EQ(shown->rfind("CREATE JOB `shown` ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
                         "\"on_error\" = \"skip_file\", \"s3.event_secret\" = \"",
                         0),
            0u)
      << *shown;
  EXPECT_NE(shown->find("\") COMMENT 'it''s shown' DO INSERT INTO ev"), std::string::npos)
      << *shown;
  const size_t placeholder = shown->find("\"${s3.secret_key}\"");
  ASSERT_NE(placeholder, std::string::npos) << *shown;
  const std::string before = harness_.Value(
      "SELECT ExecuteSql || ' | ' || Properties || ' | ' || Comment FROM jobs(type := "
      "'insert') WHERE Name = 'shown'");

  // The access key is a credential too, shown as a placeholder.
  const size_t access = shown->find("\"${s3.access_key}\"");
  ASSERT_NE(access, std::string::npos) << *shown;
  ASSERT_LT(access, placeholder);
  std::string filled = *shown;
  filled.replace(placeholder + 1, std::string("${s3.secret_key}").size(), kSecret);
  filled.replace(access + 1, std::string("${s3.access_key}").size(), "S3RVER");
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

// The object-store families of a job (job_metrics.h), checked against what a proxy in front of
// s3rver saw: requests by kind and status, a retry after a 503 and one after a cut body, bytes
// downloaded equal to the objects' sizes, the estimated cost at configured prices; counts that
// survive an ALTER (a new source and client) and a resume; series gone with the job.
TEST_F(JobS3Test, ObjectStoreMetricsCountWhatTheJobAskedOfTheStore) {
  auto proxy = testing::FaultProxy::Start({.upstream_port = s3_->port()});
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  MetricsRegistry metrics;
  harness_.service().RegisterMetrics(&metrics, {.list_per_1000 = 5, .get_per_1000 = 0.4});
  auto sample = [&](const std::string& series) -> double {
    const std::string text = "\n" + metrics.RenderPrometheus();
    const size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  };
  auto requests = [&](const std::string& kind, const std::string& status) {
    return sample("millrace_job_object_store_requests_total{job=\"om\",kind=\"" + kind +
                  "\",status=\"" + status + "\"}");
  };
  auto count_series = [&](const std::string& name) {
    const std::string text = metrics.RenderPrometheus();
    size_t n = 0;
    for (size_t at = text.find("\n" + name + "{"); at != std::string::npos;
         at = text.find("\n" + name + "{", at + 1)) {
      ++n;
    }
    return n;
  };

  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ev (id INTEGER, name VARCHAR)").ok());
  Put("om/a.csv", "1,alpha\n2,beta\n");  // 15 bytes
  Put("om/b.csv", "3,gamma\n");          // 8
  Put("om/c.csv", "4,delta\n5,eps\n");   // 14
  // The first GET is refused once with 503 SlowDown: retried by the client within the task.
  (*proxy)->AddRule({.kind = testing::RequestKind::kGet, .fault = testing::Fault::SlowDown()});
  // max_interval of an hour: after its task the job asks nothing more of the store by itself.
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB om ON STREAMING PROPERTIES (\"max_interval\" = \"3600\") DO "
                       "INSERT INTO ev SELECT CAST(c1 AS INTEGER), c2 FROM " +
                       S3Args("s3://landing/om/*.csv", "\"column_separator\" = \",\", ",
                              (*proxy)->endpoint()))
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return harness_.JobColumn("om", "SucceedTaskCount") == "1"; }))
      << harness_.JobColumn("om", "ErrorMsg");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM ev"), "5");
  // One listing, three objects fetched and one refusal.
  EXPECT_EQ(requests("list", "ok"), 1);
  EXPECT_EQ(requests("get", "ok"), 3);
  EXPECT_EQ(requests("get", "server_error"), 1);
  EXPECT_EQ(requests("get", "network"), 0);
  EXPECT_EQ(requests("head", "ok"), 0);
  EXPECT_EQ(sample("millrace_job_object_store_retries_total{job=\"om\"}"), 1);
  EXPECT_EQ(sample("millrace_job_object_store_bytes_downloaded_total{job=\"om\"}"), 15 + 8 + 14);
  EXPECT_NEAR(sample("millrace_job_object_store_estimated_cost_total{job=\"om\"}"),
              (1 * 5 + 4 * 0.4) / 1000, 1e-12);
  // What the proxy saw is what the job counted.
  EXPECT_EQ((*proxy)->counts().list, 1u);
  EXPECT_EQ((*proxy)->counts().get, 4u);
  // Every kind and status is a series, zeros included: 3 x 4, a fixed set per job.
  EXPECT_EQ(count_series("millrace_job_object_store_requests_total"), 12u);

  // ALTER builds a new source with a new client: the job's counts stay.
  ASSERT_TRUE(harness_.Run("PAUSE JOB WHERE jobname = 'om'").ok());
  ASSERT_TRUE(harness_.Run("ALTER JOB om PROPERTIES (\"s3.max_batch_files\" = \"100\")").ok());
  EXPECT_EQ(requests("get", "ok"), 3);
  EXPECT_EQ(sample("millrace_job_object_store_retries_total{job=\"om\"}"), 1);

  // A new object whose first download is cut after 5 bytes (the server closes mid-body): the
  // client resumes from byte 5, so the bytes downloaded are still the objects' sizes.
  Put("om/d.csv", "6,zeta\n7,eta\n");  // 13
  (*proxy)->AddRule({.kind = testing::RequestKind::kGet,
                     .key_contains = "d.csv",
                     .fault = testing::Fault::TruncateAfter(5)});
  ASSERT_TRUE(harness_.Run("RESUME JOB WHERE jobname = 'om'").ok());
  ASSERT_TRUE(WaitFor([&] { return harness_.JobColumn("om", "SucceedTaskCount") == "2"; }))
      << harness_.JobColumn("om", "ErrorMsg");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM ev"), "7");
  // The resume reconciles below the offset (a listing) before it lists past it.
  EXPECT_EQ(requests("list", "ok"), 3);
  EXPECT_EQ(requests("get", "ok"), 4);
  EXPECT_EQ(requests("get", "network"), 1);
  EXPECT_EQ(requests("get", "server_error"), 1);
  EXPECT_EQ(sample("millrace_job_object_store_retries_total{job=\"om\"}"), 2);
  EXPECT_EQ(sample("millrace_job_object_store_bytes_downloaded_total{job=\"om\"}"),
            15 + 8 + 14 + 13);
  const double lists = requests("list", "ok");
  const double gets = requests("get", "ok") + requests("get", "network") +
                      requests("get", "server_error") + requests("head", "ok");
  EXPECT_NEAR(sample("millrace_job_object_store_estimated_cost_total{job=\"om\"}"),
              (lists * 5 + gets * 0.4) / 1000, 1e-12);
  EXPECT_EQ((*proxy)->counts().list, 3u);
  EXPECT_EQ((*proxy)->counts().get, 6u);
  // Loaded, nothing waits.
  EXPECT_EQ(sample("millrace_job_oldest_unloaded_file_age_seconds{job=\"om\"}"), 0);

  // A dropped job's series are gone at the next scrape.
  ASSERT_TRUE(harness_.Run("DROP JOB WHERE jobname = 'om'").ok());
  const std::string text = metrics.RenderPrometheus();
  EXPECT_EQ(text.find("job=\"om\""), std::string::npos) << text;
  EXPECT_EQ(count_series("millrace_job_object_store_requests_total"), 0u);
}

// Small plain CSV objects are fetched into memory and joined from there; when the joined read
// fails (a file of lone \r line ends), the files loaded one by one are written out first: its
// neighbours load once, it alone is quarantined, and the objects put later load too.
TEST_F(JobS3Test, SmallObjectsJoinedFromMemoryAreWrittenOutToLoadOneByOne) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ev (id INTEGER, name VARCHAR)").ok());
  Put("mem/a.csv", "1,alpha\n2,beta\n");
  Put("mem/b.csv", "5,a\r6,b\r7,c\r");
  Put("mem/c.csv", "3,gamma");
  auto created = harness_.Run(
      "CREATE JOB mem ON STREAMING PROPERTIES (\"max_interval\" = \"1\", \"on_error\" = "
      "\"skip_file\") DO INSERT INTO ev SELECT CAST(c1 AS INTEGER), c2 FROM " +
      S3Args("s3://landing/mem/*.csv", "\"format\" = \"csv\", \"column_separator\" = \",\", "));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitFor([&] {
    return harness_.JobColumn("mem", "CurrentOffset") == "{\"fileName\":\"mem/c.csv\"}";
  })) << harness_.JobColumn("mem", "ErrorMsg");
  Put("mem/d.csv", "4,delta\n");
  Put("mem/e.csv", "5,epsilon\n");
  ASSERT_TRUE(WaitForCount("ev", 5));
  EXPECT_EQ(
      harness_.Query("SELECT id, name FROM ev ORDER BY id"),
      (Rows{{"1", "alpha"}, {"2", "beta"}, {"3", "gamma"}, {"4", "delta"}, {"5", "epsilon"}}));
  EXPECT_EQ(harness_.QueryExpanded("SELECT FileName, State, Rows FROM job_files(\"job\" = \"mem\") "
                                   "ORDER BY FileName"),
            (Rows{{"mem/a.csv", "LOADED", "2"},
                  {"mem/b.csv", "QUARANTINED", "0"},
                  {"mem/c.csv", "LOADED", "1"},
                  {"mem/d.csv", "LOADED", "1"},
                  {"mem/e.csv", "LOADED", "1"}}));
}

// EXPLAIN CREATE JOB over S3: the first batch's objects by key, a filtered row with its reason,
// nothing created, and the secret nowhere in the answer; a bucket that does not exist is the
// listing's error.
TEST_F(JobS3Test, ExplainCreateJobShowsTheFirstBatchAndCreatesNothing) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ev (id INTEGER, name VARCHAR)").ok());
  Put("dry/a.csv", "1,alpha\n2,beta\n");
  Put("dry/b.csv", "x,bad\n3,gamma\n");
  const std::string create =
      "CREATE JOB dry ON STREAMING PROPERTIES (\"session.insert_max_filter_ratio\" = \"0.5\") DO "
      "INSERT INTO ev SELECT c1, c2 FROM " +
      S3Args("s3://landing/dry/*.csv", "\"column_separator\" = \",\", ");
  auto lines = harness_.service().ExplainCreateJob(create);
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  // The rows in the reader's order, which a SQL result does not promise: compared as a set.
  std::vector<std::string> shown;
  std::set<std::string> rows;
  for (const DryRunLine& line : *lines) {
    const std::string text = line.section + " | " + line.item + " | " + line.detail;
    EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
    shown.push_back(line.section == "Row" ? "Row" : text);
    if (line.section == "Row") rows.insert(line.detail);
  }
  EXPECT_EQ(shown, (std::vector<std::string>{
                       "Task | batch | 2 files, 29 bytes",
                       "Task | outcome | would commit: 3 rows loaded, 1 filtered, from 2 files",
                       "File | dry/a.csv | 15 bytes, 2 rows",
                       "File | dry/b.csv | 14 bytes, 1 row",
                       "Column | c1 | VARCHAR",
                       "Column | c2 | VARCHAR",
                       "Row",
                       "Row",
                       "Row",
                       "Row",
                       "Filtered | dry/b.csv line 1 | column id: value cannot be converted to "
                       "INTEGER (value 'x')",
                   }));
  EXPECT_EQ(rows, (std::set<std::string>{
                      "{\"c1\":\"1\",\"c2\":\"alpha\"}", "{\"c1\":\"2\",\"c2\":\"beta\"}",
                      "{\"c1\":\"x\",\"c2\":\"bad\"}", "{\"c1\":\"3\",\"c2\":\"gamma\"}"}));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM ev"), "0");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM jobs(type := 'insert')"), "0");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.filtered_rows"), "0");

  auto missing = harness_.service().ExplainCreateJob(
      "CREATE JOB dry ON STREAMING DO INSERT INTO ev SELECT c1, c2 FROM " +
      S3Args("s3://nobucket/dry/*.csv", "\"column_separator\" = \",\", "));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(JobErrorOf(missing.status()), JobErrorCode::kGetRemoteData);
  EXPECT_NE(missing.status().message().find("nobucket"), std::string::npos)
      << missing.status().ToString();
  EXPECT_EQ(missing.status().message().find(kSecret), std::string::npos);
}

// VERIFY JOB on S3: an object rewritten with the same size is CHANGED by its ETag alone; a
// deleted one is VANISHED; one listing of the prefix, nothing downloaded.
TEST_F(JobS3Test, VerifyJobComparesETagsWithTheLedger) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE ev (id INTEGER, name VARCHAR)").ok());
  Put("v/a.csv", "1,aa\n");
  Put("v/b.csv", "2,bb\n");
  Put("v/c.csv", "3,cc\n");
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB ver ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO "
                       "INSERT INTO ev SELECT CAST(c1 AS INTEGER), c2 FROM " +
                       S3Args("s3://landing/v/*.csv", "\"column_separator\" = \",\", "))
                  .ok());
  ASSERT_TRUE(WaitForCount("ev", 3));
  Put("v/b.csv", "2,BB\n");  // same size, new content: a new ETag
  ASSERT_TRUE(s3_->DeleteObject("landing", "v/c.csv").ok());
  auto rows = harness_.service().VerifyJob("ver");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> shown;
  for (const VerifyRow& r : *rows) {
    if (r.files.value_or(1) != 0) {
      shown.push_back(std::string(VerifyKindName(r.kind)) + " " +
                      (r.files ? std::to_string(*r.files) : "-") + " " + r.file);
    }
  }
  EXPECT_EQ(shown,
            (std::vector<std::string>{"SOURCE 2 s3://landing/v/*.csv", "LOADED 1 ", "CHANGED 1 ",
                                      "CHANGED - v/b.csv", "VANISHED 1 ", "VANISHED - v/c.csv"}));
  ASSERT_GE(rows->size(), 4u);
  EXPECT_NE((*rows)[3].detail.find(", 5 bytes; the source has ETag "), std::string::npos)
      << (*rows)[3].detail;
  EXPECT_EQ(log_.find(kSecret), std::string::npos);
}

// The S3 event notification as Ceph RGW pushes it for `key` (URL-encoded as S3 encodes it).
std::string RgwEvent(const std::string& bucket, const std::string& encoded_key,
                     const std::string& event = "ObjectCreated:Put") {
  return "{\"Records\":[{\"eventVersion\":\"2.2\",\"eventSource\":\"ceph:s3\",\"awsRegion\":"
         "\"default\",\"eventName\":\"" +
         event + "\",\"s3\":{\"s3SchemaVersion\":\"1.0\",\"bucket\":{\"name\":\"" + bucket +
         "\",\"arn\":\"arn:aws:s3:::" + bucket + "\"},\"object\":{\"key\":\"" + encoded_key +
         "\",\"size\":8,\"eTag\":\"0123\"}}}]}";
}

// A job with max_interval = 60 is woken by an S3 event notification carrying its secret: the
// object loads long before the next poll. A forged secret is refused (403) and counted; an event
// for a key that does not exist loads nothing; one for an object no job reads is counted; one
// for a late object loads it at once.
TEST_F(JobS3Test, AnEventWithTheJobsSecretWakesIt) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE evt (id INTEGER, name VARCHAR)").ok());
  const std::string secret = "0123456789abcdef-evt";
  auto created = harness_.Run(
      "CREATE JOB s3evt ON STREAMING PROPERTIES (\"max_interval\" = \"60\", \"s3.event_secret\" = "
      "\"" +
      secret + "\") DO INSERT INTO evt SELECT CAST(c1 AS INTEGER), c2 FROM " +
      S3Args("s3://landing/evt/*.csv", "\"format\" = \"csv\", \"column_separator\" = \",\", "));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // Idle: its first turn over, the next a minute away.
  ASSERT_TRUE(WaitFor([&] {
    auto job = ApiJob(harness_.service().ApiContext(), "root", "s3evt");
    if (!job.ok()) return false;
    const auto doc = nlohmann::json::parse(*job);
    return doc["nextPollInSeconds"].is_number() && doc["nextPollInSeconds"].get<double>() > 50;
  }));
  MetricsRegistry metrics;
  EventIntake intake(&harness_.service(), &metrics);
  Put("evt/a b.csv", "1,alpha\n");
  // A forged secret wakes nothing.
  EXPECT_EQ(intake.S3(RgwEvent("landing", "evt/a+b.csv"), "not-the-secret-at-all").status, 403);
  EXPECT_EQ(intake.S3(RgwEvent("landing", "evt/a+b.csv"), "").status, 403);
  const auto started = std::chrono::steady_clock::now();
  const EventAnswer answer = intake.S3(RgwEvent("landing", "evt/a+b.csv"), secret);
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "{\"matched\":1,\"unmatched\":0}\n");
  ASSERT_TRUE(WaitForCount("evt", 1));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  // A key that does not exist: woken, it lists and loads nothing.
  EXPECT_EQ(intake.S3(RgwEvent("landing", "evt/ghost.csv"), secret).status, 200);
  // An object no job of the secret reads.
  EXPECT_EQ(intake.S3(RgwEvent("landing", "other/x.csv"), secret).body,
            "{\"matched\":0,\"unmatched\":1}\n");
  // A removal is not news.
  EXPECT_EQ(intake.S3(RgwEvent("landing", "evt/z.csv", "ObjectRemoved:Delete"), secret).body,
            "{\"matched\":0,\"unmatched\":0}\n");
  EXPECT_EQ(intake.S3("{\"not\":\"an event\"}", secret).status, 400);
  const std::string text = metrics.RenderPrometheus();
  EXPECT_NE(text.find("millrace_events_rejected_total 2"), std::string::npos) << text;
  EXPECT_NE(text.find("millrace_events_matched_total 2"), std::string::npos) << text;
  EXPECT_NE(text.find("millrace_events_unmatched_total 1"), std::string::npos) << text;
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM evt"), "1");
  EXPECT_EQ(harness_.JobColumn("s3evt", "Status"), "RUNNING");
  // A late object (its key below the offset, "evt/a b.csv"): its event makes the woken turn
  // reconcile, so it loads now rather than at reconcile_interval (300 s).
  Put("evt/A.csv", "0,late\n");
  EXPECT_EQ(intake.S3(RgwEvent("landing", "evt/A.csv"), secret).status, 200);
  ASSERT_TRUE(WaitForCount("evt", 2));
  EXPECT_EQ(harness_.Value("SELECT string_agg(name, ',' ORDER BY id) FROM evt"), "late,alpha");
}

// An S3 job without s3.event_secret gets one, shown by SHOW CREATE JOB; Doris's NOTIFICATION mode
// is refused, pointing to the endpoint; ORDERED_LIST is accepted.
TEST_F(JobS3Test, EventSecretsAndIngestionModes) {
  ASSERT_TRUE(harness_.conn().Execute("CREATE TABLE sec (id INTEGER, name VARCHAR)").ok());
  const std::string insert =
      " DO INSERT INTO sec SELECT CAST(c1 AS INTEGER), c2 FROM " +
      S3Args("s3://landing/sec/*.csv", "\"format\" = \"csv\", \"column_separator\" = \",\", ");
  ASSERT_TRUE(harness_
                  .Run("CREATE JOB gen ON STREAMING PROPERTIES (\"s3.ingestion_mode\" = "
                       "\"ORDERED_LIST\")" +
                       insert)
                  .ok());
  // A secret: not in jobs().Properties.
  const std::string properties = harness_.JobColumn("gen", "Properties");
  EXPECT_EQ(properties.find("s3.event_secret"), std::string::npos) << properties;
  auto shown = harness_.service().ShowCreateJob("gen", {});
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_NE(shown->find("s3.event_secret"), std::string::npos) << *shown;
  auto refused = harness_.Run(
      "CREATE JOB sqs ON STREAMING PROPERTIES (\"s3.ingestion_mode\" = \"NOTIFICATION\")" + insert);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("POST /api/s3-events"), std::string::npos)
      << refused.status().ToString();
  auto short_secret = harness_.Run(
      "CREATE JOB short ON STREAMING PROPERTIES (\"s3.event_secret\" = \"abc\")" + insert);
  ASSERT_FALSE(short_secret.ok());
  EXPECT_NE(short_secret.status().message().find("16 to 128"), std::string::npos);
}

TEST(ParseS3EventsTest, ObjectsCreatedWithTheirKeysDecoded) {
  const std::string body =
      "{\"Records\":[{\"eventName\":\"s3:ObjectCreated:Put\",\"s3\":{\"bucket\":{\"name\":\"b\"},"
      "\"object\":{\"key\":\"dir/a%20b%2Bc+d.csv\"}}},{\"eventName\":\"s3:ObjectRemoved:Delete\","
      "\"s3\":{\"bucket\":{\"name\":\"b\"},\"object\":{\"key\":\"gone.csv\"}}}]}";
  auto parsed = ParseS3Events(body);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, (std::vector<std::string>{"s3://b/dir/a b+c d.csv"}));
  EXPECT_FALSE(ParseS3Events("not json").ok());
  EXPECT_FALSE(ParseS3Events("{\"Type\":\"SubscriptionConfirmation\"}").ok());
  EXPECT_FALSE(
      ParseS3Events("{\"Records\":[{\"eventName\":\"ObjectCreated:Put\",\"s3\":{}}]}").ok());
  EXPECT_FALSE(ParseS3Events("{\"Records\":[{\"eventName\":\"ObjectCreated:Put\",\"s3\":{"
                             "\"bucket\":{\"name\":\"b\"},\"object\":{\"key\":\"bad%zz\"}}}]}")
                   .ok());
}

}  // namespace
}  // namespace millrace::job
