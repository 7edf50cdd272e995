// Streaming jobs end to end: the real `millrace serve` binary, the real `mariadb` client, the
// real s3rver — and, for the chaos test, the fault proxy between them and kill -9.
//
// MILLRACE_CHAOS_FILES (default 240) sizes the chaos run; e.g. 3000 for a long manual run.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "job/job_test_util.h"
#include "server/mysql_test_util.h"
#include "testing/fault_proxy.h"
#include "testing/s3rver.h"
#include "testing/server_process.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;
using server::ServerProcess;

Result<Rows> Mariadb(uint16_t port, const std::string& sql) {
  return server::MariaDbRows(port, sql);
}

std::string Value(uint16_t port, const std::string& sql) {
  auto rows = Mariadb(port, sql);
  if (!rows.ok() || rows->size() != 1 || (*rows)[0].size() != 1) return "?";
  return (*rows)[0][0];
}

class JobE2ETest : public ::testing::Test {
 protected:
  void RunChaos(int tasks);
  void SetUp() override {
    auto s3 = testing::S3rver::Start({"landing"});
    ASSERT_TRUE(s3.ok()) << s3.status().ToString();
    s3_ = std::move(s3).value();
    StartServer();
  }

  void StartServer() {
    auto server = ServerProcess::Start(data_.path(), {});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }

  std::string S3Call(const std::string& endpoint, const std::string& uri,
                     const std::string& extra = "") {
    return "S3(\"uri\" = \"" + uri + "\", \"format\" = \"csv\", \"column_separator\" = \",\", " +
           extra + "\"s3.endpoint\" = \"" + endpoint +
           "\", \"s3.access_key\" = \"S3RVER\", \"s3.secret_key\" = \"Secret-E2E-9Q\", "
           "\"use_path_style\" = \"true\")";
  }

  Status Exec(const std::string& sql) { return Mariadb(server_->mysql_port(), sql).status(); }
  std::string Get(const std::string& sql) { return Value(server_->mysql_port(), sql); }

  std::unique_ptr<testing::S3rver> s3_;
  testing::TempDir data_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(JobE2ETest, JobLifecycleThroughTheMysqlFrontEnd) {
  ASSERT_TRUE(s3_->PutObject("landing", "ev/1.csv", "1,one\n2,two\n").ok());
  ASSERT_TRUE(
      Exec("CREATE DATABASE shop; USE shop; CREATE TABLE events (id INT, name VARCHAR)").ok());
  Status created = Exec(
      "USE shop; CREATE JOB ev ON STREAMING PROPERTIES (\"max_interval\" = \"1\") COMMENT "
      "'clicks' DO INSERT INTO events SELECT c1, c2 FROM " +
      S3Call(s3_->endpoint(), "s3://landing/ev/*.csv"));
  ASSERT_TRUE(created.ok()) << created.ToString();
  ASSERT_TRUE(WaitFor([&] { return Get("SELECT count(*) FROM shop.events") == "2"; }));
  ASSERT_TRUE(s3_->PutObject("landing", "ev/2.csv", "3,three\n").ok());
  ASSERT_TRUE(WaitFor([&] { return Get("SELECT count(*) FROM shop.events") == "3"; }));

  auto jobs = Mariadb(server_->mysql_port(),
                      "SELECT Name, ExecuteType, Status, Comment, CurrentOffset, EndOffset, "
                      "SucceedTaskCount, FailedTaskCount FROM jobs(\"type\" = \"insert\")");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(*jobs, (Rows{{"ev", "STREAMING", "RUNNING", "clicks", "{\"fileName\":\"ev/2.csv\"}",
                          "{\"fileName\":\"ev/2.csv\"}", "2", "0"}}));
  auto tasks = Mariadb(server_->mysql_port(),
                       "SELECT JobName, Status, RunningOffset FROM tasks(\"type\" = \"insert\") "
                       "ORDER BY TaskId");
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(
      *tasks,
      (Rows{{"ev", "SUCCESS", "{\"startFileName\":\"ev/1.csv\",\"endFileName\":\"ev/1.csv\"}"},
            {"ev", "SUCCESS", "{\"startFileName\":\"ev/2.csv\",\"endFileName\":\"ev/2.csv\"}"}}));
  // The secret never reaches a client.
  auto all = server::MariaDb(server_->mysql_port(), "SELECT * FROM jobs(\"type\" = \"insert\")");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->out.find("Secret-E2E-9Q"), std::string::npos);
  EXPECT_EQ(server_->Log().find("Secret-E2E-9Q"), std::string::npos);
  // The catalog that holds it cannot be read (or changed) with SQL.
  for (const char* sql : {"SELECT * FROM __millrace.jobs", "SELECT * FROM \"__MILLRACE\".jobs",
                          "DROP TABLE __millrace.files"}) {
    auto denied = server::MariaDb(server_->mysql_port(), sql);
    ASSERT_TRUE(denied.ok());
    EXPECT_NE(denied->err.find("ERROR 1044 (42000)"), std::string::npos)
        << sql << ": " << denied->err;
  }
  // A name in a string is no relation: the sandbox refuses the function that would read it.
  auto by_string =
      server::MariaDb(server_->mysql_port(), "SELECT * FROM query_table('__millrace.jobs')");
  ASSERT_TRUE(by_string.ok());
  EXPECT_NE(by_string->err.find("ERROR 1290 (HY000)"), std::string::npos) << by_string->err;
  EXPECT_NE(by_string->err.find("query_table()"), std::string::npos) << by_string->err;

  // Errors arrive as MySQL errors with the message.
  auto bad =
      server::MariaDb(server_->mysql_port(), "ALTER JOB ev PROPERTIES (\"max_interval\" = \"2\")");
  ASSERT_TRUE(bad.ok());
  EXPECT_NE(bad->exit_code, 0);
  EXPECT_NE(bad->err.find("only a PAUSED job can be altered"), std::string::npos) << bad->err;

  ASSERT_TRUE(Exec("PAUSE JOB WHERE jobname = 'ev'").ok());
  ASSERT_TRUE(Exec("ALTER JOB ev PROPERTIES (\"max_interval\" = \"2\")").ok());
  ASSERT_TRUE(s3_->PutObject("landing", "ev/3.csv", "4,four\n").ok());
  // The job survives a restart in its state: still paused, nothing loaded.
  ASSERT_TRUE(server_->Terminate().ok());
  StartServer();
  EXPECT_EQ(Get("SELECT Status FROM jobs(\"type\" = \"insert\")"), "PAUSED");
  EXPECT_EQ(Get("SELECT count(*) FROM shop.events"), "3");
  ASSERT_TRUE(Exec("RESUME JOB WHERE jobname = 'ev'").ok());
  ASSERT_TRUE(WaitFor([&] { return Get("SELECT count(*) FROM shop.events") == "4"; }));
  ASSERT_TRUE(Exec("DROP JOB WHERE jobname = 'ev'").ok());
  EXPECT_EQ(Get("SELECT count(*) FROM jobs(\"type\" = \"insert\")"), "0");
  EXPECT_EQ(Get("SELECT count(*) FROM shop.events"), "4");
}

// The job's credentials never reach the disk in clear: not the database file (checkpointed at
// shutdown), its write-ahead log, nor the server's log; they are sealed with the data
// directory's key (0600), which a restart reads back to carry the job on.
TEST_F(JobE2ETest, CredentialsAreSealedAtRest) {
  ASSERT_TRUE(s3_->PutObject("landing", "sealed/1.csv", "1,one\n").ok());
  ASSERT_TRUE(
      Exec("CREATE DATABASE shop; USE shop; CREATE TABLE events (id INT, name VARCHAR)").ok());
  ASSERT_TRUE(Exec("USE shop; CREATE JOB sealed ON STREAMING PROPERTIES (\"max_interval\" = \"1\") "
                   "DO INSERT INTO events SELECT c1, c2 FROM " +
                   S3Call(s3_->endpoint(), "s3://landing/sealed/*.csv"))
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Get("SELECT count(*) FROM shop.events") == "1"; }));
  auto wal_or_db = [&] {
    std::string bytes;
    for (const auto& entry : std::filesystem::directory_iterator(data_.path())) {
      if (entry.is_regular_file()) bytes += testing::ReadFile(entry.path().string());
    }
    return bytes;
  };
  // While it runs (the write-ahead log holds the job's rows) and after a clean stop (the
  // database file, checkpointed).
  EXPECT_EQ(wal_or_db().find("Secret-E2E-9Q"), std::string::npos);
  const std::string log = server_->Log();
  ASSERT_TRUE(server_->Terminate().ok());
  EXPECT_EQ(wal_or_db().find("Secret-E2E-9Q"), std::string::npos);
  EXPECT_EQ(log.find("Secret-E2E-9Q"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((data_.path() + "/secret.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // A restart opens the sealed statement with the key: the job carries on.
  StartServer();
  ASSERT_TRUE(s3_->PutObject("landing", "sealed/2.csv", "2,two\n").ok());
  EXPECT_TRUE(WaitFor([&] { return Get("SELECT count(*) FROM shop.events") == "2"; }))
      << Get("SELECT ErrorMsg FROM jobs(\"type\" = \"insert\")");
  // Without its key, the server still starts: the job is paused and says why, and its sealed
  // statement is kept for the key to open again.
  ASSERT_TRUE(server_->Terminate().ok());
  const std::string key = data_.path() + "/secret.key";
  const std::string moved = data_.path() + "/moved.key";
  ASSERT_EQ(::rename(key.c_str(), moved.c_str()), 0);
  StartServer();
  EXPECT_EQ(Get("SELECT Status FROM jobs(\"type\" = \"insert\")"), "PAUSED");
  EXPECT_NE(Get("SELECT ErrorMsg FROM jobs(\"type\" = \"insert\")").find("cannot be opened with"),
            std::string::npos)
      << Get("SELECT ErrorMsg FROM jobs(\"type\" = \"insert\")");
  ASSERT_TRUE(server_->Terminate().ok());
  ASSERT_EQ(::rename(moved.c_str(), key.c_str()), 0);
  StartServer();
  EXPECT_EQ(Get("SELECT Status FROM jobs(\"type\" = \"insert\")"), "RUNNING");
}

// EXPLAIN CREATE JOB through the mariadb client: one result set (Section, Item, Detail) of the
// first batch, the reader's columns, the rows and a filtered row; nothing created or loaded;
// the secret in neither the answer nor the log. DuckDB's own EXPLAIN is still DuckDB's, and a
// bad statement gets CREATE JOB's error.
TEST_F(JobE2ETest, ExplainCreateJobThroughTheMysqlFrontEnd) {
  // Debug logging: the server logs each statement (masked as its handler shows it).
  ASSERT_TRUE(server_->Terminate().ok());
  auto debug = ServerProcess::Start(data_.path(), {.args = {"--log-level", "debug"}});
  ASSERT_TRUE(debug.ok()) << debug.status().ToString();
  server_ = std::move(debug).value();
  ASSERT_TRUE(s3_->PutObject("landing", "dry/1.csv", "1,one\nx,bad\n2,two\n").ok());
  ASSERT_TRUE(
      Exec("CREATE DATABASE shop; USE shop; CREATE TABLE events (id INT, name VARCHAR)").ok());
  const std::string body = "DO INSERT INTO events SELECT c1, c2 FROM " +
                           S3Call(s3_->endpoint(), "s3://landing/dry/*.csv");
  auto header = server::MariaDb(server_->mysql_port(),
                                "USE shop; EXPLAIN CREATE JOB dry ON STREAMING PROPERTIES "
                                "(\"session.insert_max_filter_ratio\" = \"0.5\") " +
                                    body);
  ASSERT_TRUE(header.ok());
  ASSERT_EQ(header->exit_code, 0) << header->err;
  EXPECT_EQ(header->out.rfind("Section\tItem\tDetail\n", 0), 0u) << header->out;
  EXPECT_EQ(header->out.find("Secret-E2E-9Q"), std::string::npos);

  auto lines =
      Mariadb(server_->mysql_port(), "USE shop; EXPLAIN CREATE JOB dry ON STREAMING " + body);
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  ASSERT_EQ(lines->size(), 9u) << ::testing::PrintToString(*lines);
  EXPECT_EQ((*lines)[0], (std::vector<std::string>{"Task", "batch", "1 file, 18 bytes"}));
  EXPECT_EQ((*lines)[1][2].rfind("would fail: TOO_MANY_FAILURE_ROWS_ERR: 1 of 3 rows", 0), 0u)
      << (*lines)[1][2];
  EXPECT_EQ((*lines)[2], (std::vector<std::string>{"File", "dry/1.csv", "18 bytes, 2 rows"}));
  EXPECT_EQ((*lines)[3], (std::vector<std::string>{"Column", "c1", "VARCHAR"}));
  EXPECT_EQ((*lines)[4], (std::vector<std::string>{"Column", "c2", "VARCHAR"}));
  for (size_t i = 5; i < 8; ++i)
    EXPECT_EQ((*lines)[i][0], "Row");
  EXPECT_EQ((*lines)[8], (std::vector<std::string>{
                             "Filtered", "dry/1.csv line 2",
                             "column id: value cannot be converted to INTEGER (value 'x')"}));
  EXPECT_EQ(Get("SELECT count(*) FROM jobs(\"type\" = \"insert\")"), "0");
  EXPECT_EQ(Get("SELECT count(*) FROM shop.events"), "0");
  EXPECT_NE(server_->Log().find("EXPLAIN CREATE JOB dry ON STREAMING"), std::string::npos)
      << server_->Log();
  EXPECT_NE(server_->Log().find("\"s3.secret_key\" = \"***\""), std::string::npos)
      << server_->Log();
  EXPECT_EQ(server_->Log().find("Secret-E2E-9Q"), std::string::npos);

  // DuckDB's EXPLAIN is not taken for the job statement.
  auto explained = Mariadb(server_->mysql_port(), "EXPLAIN SELECT 1");
  ASSERT_TRUE(explained.ok()) << explained.status().ToString();
  EXPECT_FALSE(explained->empty());
  // A bad statement: CREATE JOB's error, as a MySQL error.
  auto bad = server::MariaDb(server_->mysql_port(),
                             "USE shop; EXPLAIN CREATE JOB dry ON STREAMING DO INSERT INTO nope "
                             "SELECT c1, c2 FROM " +
                                 S3Call(s3_->endpoint(), "s3://landing/dry/*.csv"));
  ASSERT_TRUE(bad.ok());
  EXPECT_NE(bad->exit_code, 0);
  EXPECT_NE(bad->err.find("target table nope"), std::string::npos) << bad->err;
  // (The client echoes the failing statement; the server's log masks it.)
  EXPECT_EQ(server_->Log().find("Secret-E2E-9Q"), std::string::npos);
}

// Doris tables of each model, created as Doris writes them, loaded by streaming jobs from S3
// across two tasks with a kill -9 of the server between them: DUPLICATE keeps every row,
// UNIQUE the newest row per key, AGGREGATE the sums per key.
TEST_F(JobE2ETest, EachDorisModelKeepsItsRowsAcrossTasksAndAKill) {
  ASSERT_TRUE(Exec("CREATE DATABASE models").ok());
  Status created = Exec(
      "USE models; "
      "CREATE TABLE IF NOT EXISTS t (\n"
      "    `c1` int NULL,\n"
      "    `c2` string NULL,\n"
      "    `c3` int  NULL,\n"
      ") ENGINE=OLAP\n"
      "DUPLICATE KEY(`c1`)\n"
      "COMMENT 'OLAP'\n"
      "DISTRIBUTED BY HASH(`c1`) BUCKETS 3\n"
      "PROPERTIES (\"replication_allocation\" = \"tag.location.default: 1\");"
      "CREATE TABLE IF NOT EXISTS users (\n"
      "    `user_id` LARGEINT NOT NULL COMMENT \"id\",\n"
      "    `username` VARCHAR(50) NOT NULL COMMENT \"name\",\n"
      "    `city` VARCHAR(20) COMMENT \"city\"\n"
      ") UNIQUE KEY(`user_id`, `username`)\n"
      "DISTRIBUTED BY HASH(`user_id`) BUCKETS 10\n"
      "PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\");"
      "CREATE TABLE IF NOT EXISTS visits (\n"
      "    `user_id` LARGEINT NOT NULL COMMENT \"id\",\n"
      "    `date` DATE NOT NULL COMMENT \"day\",\n"
      "    `cost` BIGINT SUM DEFAULT \"0\" COMMENT \"total spend\",\n"
      "    `max_dwell_time` INT MAX DEFAULT \"0\" COMMENT \"longest visit\"\n"
      ") AGGREGATE KEY(`user_id`, `date`)\n"
      "DISTRIBUTED BY HASH(`user_id`) BUCKETS 1;");
  ASSERT_TRUE(created.ok()) << created.ToString();
  auto job = [&](const std::string& name, const std::string& table, const std::string& select) {
    return Exec("USE models; CREATE JOB " + name +
                " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO " + table +
                " " + select + " FROM " +
                S3Call(s3_->endpoint(), "s3://landing/" + name + "/*.csv"));
  };
  ASSERT_TRUE(s3_->PutObject("landing", "dup/1.csv", "1,a,1\n1,a,1\n2,b,2\n").ok());
  ASSERT_TRUE(
      s3_->PutObject("landing", "uniq/1.csv", "1,ann,Paris\n2,bob,Oslo\n1,ann,Rome\n").ok());
  ASSERT_TRUE(s3_->PutObject("landing", "agg/1.csv",
                             "1,2026-12-01,10,5\n1,2026-12-01,5,9\n2,2026-12-01,1,1\n")
                  .ok());
  ASSERT_TRUE(job("dup", "t", "SELECT c1, c2, c3").ok());
  ASSERT_TRUE(job("uniq", "users", "SELECT c1, c2, c3").ok());
  ASSERT_TRUE(job("agg", "visits", "SELECT c1, c2, c3, c4").ok());
  ASSERT_TRUE(WaitFor([&] {
    return Get("SELECT count(*) FROM jobs(\"type\" = \"insert\") WHERE SucceedTaskCount = 1") ==
           "3";
  }));
  server_.reset();  // kill -9 between the tasks
  StartServer();
  ASSERT_TRUE(s3_->PutObject("landing", "dup/2.csv", "2,b,2\n").ok());
  ASSERT_TRUE(s3_->PutObject("landing", "uniq/2.csv", "2,bob,Lima\n3,cy,Kyiv\n").ok());
  ASSERT_TRUE(
      s3_->PutObject("landing", "agg/2.csv", "1,2026-12-01,100,7\n2,2026-12-02,3,3\n").ok());
  ASSERT_TRUE(WaitFor([&] {
    return Get("SELECT count(*) FROM jobs(\"type\" = \"insert\") WHERE SucceedTaskCount = 2") ==
           "3";
  }));
  EXPECT_EQ(*Mariadb(server_->mysql_port(), "SELECT c1, c2, c3 FROM models.t ORDER BY c1"),
            (Rows{{"1", "a", "1"}, {"1", "a", "1"}, {"2", "b", "2"}, {"2", "b", "2"}}));
  EXPECT_EQ(*Mariadb(server_->mysql_port(),
                     "SELECT user_id, username, city FROM models.users ORDER BY user_id"),
            (Rows{{"1", "ann", "Rome"}, {"2", "bob", "Lima"}, {"3", "cy", "Kyiv"}}));
  EXPECT_EQ(*Mariadb(server_->mysql_port(),
                     "SELECT user_id, date, cost, max_dwell_time FROM models.visits ORDER BY "
                     "user_id, date"),
            (Rows{{"1", "2026-12-01", "115", "9"},
                  {"2", "2026-12-01", "1", "1"},
                  {"2", "2026-12-02", "3", "3"}}));
}

// Files arrive in random name order while the fault proxy injects 503s, resets, truncated
// bodies and stalls, and the server is killed with kill -9 at random moments. At the end the
// table holds every file's rows exactly once, and the faults never paused the job. `tasks`:
// the job's max_concurrent_tasks. (Files arrive out of order, so a file below the offset that
// is not in the ledger may be a late one: the offset's bound after each kill is asserted by
// JobCrashTest, whose files arrive in order.)
void JobE2ETest::RunChaos(int tasks) {
  const char* env_files = std::getenv("MILLRACE_CHAOS_FILES");
  const int files = env_files != nullptr ? std::atoi(env_files) : 240;
  constexpr int kRows = 4;
  testing::FaultProxy::Options proxy_options;
  proxy_options.upstream_port = s3_->port();
  proxy_options.seed = 424242;
  proxy_options.enforce_if_match = true;
  auto proxy = testing::FaultProxy::Start(proxy_options);
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  using testing::Fault;
  using testing::FaultRule;
  using testing::RequestKind;
  (*proxy)->AddRule({RequestKind::kList, "", -1, 0.15, Fault::SlowDown()});
  (*proxy)->AddRule({RequestKind::kGet, "", -1, 0.10, Fault::SlowDown()});
  (*proxy)->AddRule({RequestKind::kGet, "", -1, 0.08, Fault::ResetAfter(16)});
  (*proxy)->AddRule({RequestKind::kGet, "", -1, 0.08, Fault::TruncateAfter(16)});
  (*proxy)->AddRule(
      {RequestKind::kGet, "", -1, 0.03, Fault::StallAfter(16, std::chrono::milliseconds(1500))});
  (*proxy)->AddRule(
      {RequestKind::kList, "", -1, 0.03, Fault::StallBefore(std::chrono::milliseconds(1500))});

  ASSERT_TRUE(Exec("CREATE TABLE t (file INT, line INT, payload VARCHAR)").ok());
  Status created = Exec(
      "CREATE JOB chaos ON STREAMING PROPERTIES (\"max_interval\" = \"1\", \"reconcile_interval\" "
      "= \"1\", \"s3.max_batch_files\" = \"25\", \"max_concurrent_tasks\" = \"" +
      std::to_string(tasks) + "\") DO INSERT INTO t SELECT c1, c2, c3 FROM " +
      S3Call((*proxy)->endpoint(), "s3://landing/chaos/*.csv"));
  ASSERT_TRUE(created.ok()) << created.ToString();

  std::vector<int> order(files);
  for (int i = 0; i < files; ++i)
    order[i] = i;
  std::mt19937 rng(20261202);
  std::shuffle(order.begin(), order.end(), rng);
  testing::FaultProxy& faults = **proxy;
  // The job's S3 requests so far (the proxy sees every one, faulted or not).
  auto requests = [&] {
    const testing::ProxyCounts counts = faults.counts();
    return counts.list + counts.get + counts.head + counts.other;
  };
  std::atomic<int> written{0};
  std::atomic<bool> put_failed{false};
  std::atomic<bool> stop{false};  // no server to list any more: the producer stops waiting
  std::thread producer([&] {
    std::mt19937 prng(7);
    int burst = 0;
    for (int f : order) {
      std::string body;
      for (int line = 0; line < kRows; ++line) {
        body += std::to_string(f) + "," + std::to_string(line) + ",p" +
                std::to_string(f * 7 + line) + "\n";
      }
      char key[32];
      std::snprintf(key, sizeof(key), "chaos/f%06d.csv", f);
      if (!s3_->PutObject("landing", key, body).ok()) put_failed = true;
      ++written;
      // Files keep arriving across the kills: after a random number of them, the next wait
      // until the job has listed the bucket again (whichever server runs by then).
      if (--burst <= 0) {
        const uint64_t lists = faults.counts().list;
        EXPECT_TRUE(WaitFor([&] { return stop || faults.counts().list > lists; })) << "no listing";
        burst = 1 + static_cast<int>(prng() % 12);
      }
    }
  });
  int kills = 0;
  while (written < files || kills < 6) {
    // A random point of the server's work: after it has made a random number of S3 requests
    // since it started (0: while it starts; the last GET of a batch: while it loads and
    // commits). A running job lists at least every second, so the count always moves.
    const uint64_t before = requests();
    const uint64_t more = rng() % 40;
    EXPECT_TRUE(WaitFor([&] { return requests() >= before + more; })) << "the job went quiet";
    server_.reset();  // kill -9
    ++kills;
    StartServer();
    if (HasFatalFailure()) break;
  }
  stop = true;
  producer.join();
  ASSERT_FALSE(put_failed);
  const std::string expected = std::to_string(files * kRows);
  ASSERT_TRUE(
      WaitFor([&] { return Get("SELECT count(*) FROM t") == expected; }, std::chrono::seconds(120)))
      << Get("SELECT count(*) FROM t") << " rows; job: "
      << Get("SELECT concat(Status, ' ', coalesce(ErrorMsg, '')) FROM jobs(\"type\" = \"insert\")");
  EXPECT_EQ(Get("SELECT count(*) FROM (SELECT file FROM t GROUP BY file HAVING count(*) = " +
                std::to_string(kRows) + " AND count(DISTINCT line) = " + std::to_string(kRows) +
                " AND bool_and(payload = 'p' || (file * 7 + line)))"),
            std::to_string(files));
  EXPECT_EQ(Get("SELECT Status FROM jobs(\"type\" = \"insert\")"), "RUNNING");
  EXPECT_EQ(Get("SELECT FailedTaskCount FROM jobs(\"type\" = \"insert\")"), "0")
      << "failed tasks: "
      << Get("SELECT string_agg(ErrorMsg, ' | ') FROM tasks(\"type\" = \"insert\") WHERE "
             "Status = 'FAILED'");
  const auto counts = (*proxy)->counts();
  std::printf("chaos (%d task(s) at once): %d files, %d kills, %llu requests faulted\n", tasks,
              files, kills, static_cast<unsigned long long>(counts.faulted));
  EXPECT_GT(counts.faulted, 0u);
}

TEST_F(JobE2ETest, ChaosLosesAndDoublesNothing) {
  RunChaos(1);
}

TEST_F(JobE2ETest, ChaosWithFourTasksAtOnceLosesAndDoublesNothing) {
  RunChaos(4);
}

}  // namespace
}  // namespace millrace::job
