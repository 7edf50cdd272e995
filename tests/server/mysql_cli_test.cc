// The real `millrace serve` binary driven by the real `mariadb` command-line client.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "server/mysql_test_util.h"
#include "testing/test_paths.h"
#include "testing/wait_for.h"

namespace millrace::server {
namespace {

class MysqlCliTest : public SharedServerTest {
 protected:
  static void SetUpTestSuite() { StartServer(); }
  static void TearDownTestSuite() { StopServer(); }

  // Runs the statements, expects the client to exit with `exit_code`, and returns its stdout
  // (on success) or stderr (on failure).
  static std::string Client(const std::string& sql, const std::vector<std::string>& extra,
                            int exit_code) {
    auto result = MariaDb(server().mysql_port(), sql, extra);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok()) return "";
    EXPECT_EQ(result->exit_code, exit_code) << sql << "\n" << result->out << result->err;
    return exit_code == 0 ? result->out : result->err;
  }
  static std::string Run(const std::string& sql, const std::vector<std::string>& extra = {}) {
    return Client(sql, extra, 0);
  }
  static std::string Fail(const std::string& sql, const std::vector<std::string>& extra = {}) {
    return Client(sql, extra, 1);
  }
};

TEST_F(MysqlCliTest, EveryCommonTypeComesBackAsExactText) {
  Run(R"sql(
    CREATE DATABASE types_db;
    USE types_db;
    CREATE TABLE t (
      id INTEGER, ti TINYINT, si SMALLINT, i INTEGER, bi BIGINT, ubi UBIGINT, hi HUGEINT,
      dec DECIMAL(18,3), f FLOAT, d DOUBLE, b BOOLEAN, dt DATE, tm TIME, ts TIMESTAMP,
      tz TIMESTAMPTZ, s VARCHAR, bl BLOB, u UUID, iv INTERVAL, l INTEGER[], st STRUCT(a INTEGER,
      b VARCHAR), m MAP(VARCHAR, INTEGER));
    INSERT INTO t VALUES (1, -128, 32767, -2147483648, 9223372036854775807,
      18446744073709551615, 170141183460469231731687303715884105727, 12345.678, 1.5, 0.1, true,
      DATE '2024-02-29', TIME '13:45:30.123456', TIMESTAMP '2024-02-29 13:45:30.5',
      TIMESTAMPTZ '2024-02-29 13:45:30+00', 'héllo wörld ✓', '\x61\x00\x62'::BLOB,
      '12345678-1234-5678-1234-567812345678', INTERVAL '1 year 2 days 03:04:05', [1, 2, 3],
      {'a': 1, 'b': 'x'}, MAP {'k': 1});
    INSERT INTO t (id, b) VALUES (2, false);
    INSERT INTO t (id) VALUES (3);
  )sql");
  const std::string out = Run("SELECT * FROM types_db.t ORDER BY id");
  EXPECT_EQ(out,
            "id\tti\tsi\ti\tbi\tubi\thi\tdec\tf\td\tb\tdt\ttm\tts\ttz\ts\tbl\tu\tiv\tl\tst\tm\n"
            "1\t-128\t32767\t-2147483648\t9223372036854775807\t18446744073709551615\t"
            "170141183460469231731687303715884105727\t12345.678\t1.5\t0.1\t1\t2024-02-29\t"
            "13:45:30.123456\t2024-02-29 13:45:30.5\t2024-02-29 13:45:30\théllo wörld ✓\ta\\0b\t"
            "12345678-1234-5678-1234-567812345678\t1 year 2 days 03:04:05\t[1, 2, 3]\t"
            "{'a': 1, 'b': x}\t{k=1}\n"
            "2\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\t0\tNULL\tNULL\tNULL\tNULL\t"
            "NULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\n"
            "3\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\t"
            "NULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\n");
  // An empty result prints nothing; an empty string is not NULL.
  EXPECT_EQ(Run("SELECT * FROM types_db.t WHERE id > 100"), "");
  EXPECT_EQ(Run("SELECT '' AS e, NULL AS n"), "e\tn\n\tNULL\n");
}

TEST_F(MysqlCliTest, ClientStartupStatementsAnswerAsMySql) {
  EXPECT_EQ(Run("SELECT @@version_comment LIMIT 1"),
            "@@version_comment\nMillrace 0.1.0 (DuckDB v1.4.4)\n");
  EXPECT_EQ(Run("SET NAMES utf8mb4; SET autocommit=1; SELECT @@autocommit, DATABASE()", {"-N"}),
            "1\tNULL\n");
  EXPECT_EQ(Run("SHOW VARIABLES LIKE 'character_set_client'"),
            "Variable_name\tValue\ncharacter_set_client\tutf8mb4\n");
  EXPECT_EQ(Run("SHOW WARNINGS"), "");
  // The interactive client's `status` and connect-time queries work through the same path.
  EXPECT_NE(Run("SELECT @@version").find("5.7.99-millrace-"), std::string::npos);
}

TEST_F(MysqlCliTest, DatabasesTablesAndDescribe) {
  Run("CREATE DATABASE shop; CREATE TABLE shop.orders (id INTEGER PRIMARY KEY, amount "
      "DECIMAL(10,2) NOT NULL, note VARCHAR)");
  const std::string databases = Run("SHOW DATABASES");
  EXPECT_NE(databases.find("\nshop\n"), std::string::npos) << databases;
  EXPECT_EQ(databases.find("\nmain\n"), std::string::npos) << databases;
  EXPECT_EQ(Run("SHOW TABLES", {"-D", "shop"}), "Tables_in_shop\norders\n");
  EXPECT_EQ(Run("USE shop; DESC orders"),
            "Field\tType\tNull\tKey\tDefault\tExtra\n"
            "id\tint\tNO\tPRI\tNULL\t\n"
            "amount\tdecimal(10,2)\tNO\t\tNULL\t\n"
            "note\tlongtext\tYES\t\tNULL\t\n");
  EXPECT_EQ(
      Run("SHOW CREATE TABLE orders", {"-N", "-D", "shop"}),
      "orders\tCREATE TABLE `orders` (\\n  `id` int NOT NULL,\\n  `amount` decimal(10,2) NOT "
      "NULL,\\n  `note` longtext DEFAULT NULL,\\n  PRIMARY KEY (`id`)\\n) ENGINE=DuckDB DEFAULT "
      "CHARSET=utf8mb4\n");
  Run("USE shop; INSERT INTO `orders` VALUES (1, 9.99, 'a'), (2, 0.01, NULL)");
  EXPECT_EQ(Run("SELECT count(*), sum(amount) FROM orders", {"-N", "-D", "shop"}), "2\t10.00\n");
  EXPECT_NE(Fail("SELECT 1", {"-D", "nope"}).find("ERROR 1049 (42000)"), std::string::npos);
}

TEST_F(MysqlCliTest, ErrorsCarryMySqlCodesAndStates) {
  EXPECT_NE(Fail("SELECT * FROM nope").find("ERROR 1146 (42S02)"), std::string::npos);
  EXPECT_NE(Fail("SELEC 1").find("ERROR 1064 (42000)"), std::string::npos);
  const std::string use = Fail("USE nope");  // the client sends COM_INIT_DB
  EXPECT_NE(use.find("ERROR 1049 (42000)"), std::string::npos) << use;
  EXPECT_NE(use.find("Unknown database 'nope'"), std::string::npos) << use;
  const std::string show = Fail("SHOW TABLES");
  EXPECT_NE(show.find("ERROR 1046 (3D000)"), std::string::npos) << show;
  EXPECT_NE(show.find("No database selected"), std::string::npos) << show;
  Run("CREATE DATABASE errs; CREATE TABLE errs.t (a INTEGER PRIMARY KEY)");
  EXPECT_NE(Fail("CREATE TABLE errs.t (a INTEGER)").find("ERROR 1050 (42S01)"), std::string::npos);
  EXPECT_NE(Fail("CREATE DATABASE errs").find("ERROR 1007 (HY000)"), std::string::npos);
  EXPECT_NE(Fail("INSERT INTO errs.t VALUES (1), (1)").find("ERROR 1062 (23000)"),
            std::string::npos);
  EXPECT_NE(Fail("SELECT nope FROM errs.t").find("ERROR 1054 (42S22)"), std::string::npos);
  // The batch stops at the first error, like MySQL, after printing what came before.
  auto result = MariaDb(server().mysql_port(), "SELECT 'before'; SELECT * FROM nope; SELECT 2");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 1);
  EXPECT_EQ(result->out, "before\nbefore\n");
}

TEST_F(MysqlCliTest, HttpEndpointsOfTheRunningServer) {
  auto health = HttpGet(server().http_port(), "/api/health");
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body.rfind("{\"status\":\"ok\",\"version\":\"0.1.0\"", 0), 0u) << health->body;
  EXPECT_NE(health->body.find("\"duckdb\":\"v1.4.4\""), std::string::npos);
  Run("SELECT 1");
  auto metrics = HttpGetAsRoot(server().http_port(), "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 200);
  for (const char* name : {"millrace_mysql_connections_total", "millrace_mysql_queries_total",
                           "millrace_mysql_query_errors_total", "millrace_mysql_bytes_sent_total",
                           "millrace_mysql_bytes_received_total", "millrace_mysql_rows_sent_total",
                           "millrace_mysql_connections_active", "process_resident_memory_bytes"}) {
    EXPECT_NE(metrics->body.find(std::string("\n") + name + " "), std::string::npos) << name;
  }
  EXPECT_EQ(metrics->body.find("\nmillrace_mysql_queries_total 0\n"), std::string::npos);

  // A job's figures, by its name (docs/metrics.md; tests/job/job_metrics_test.cc has them all).
  const std::string inbox = data_dir() + "/inbox/scraped";
  std::filesystem::create_directories(inbox);
  { std::ofstream(inbox + "/a.csv") << "1,x\n2,y\n"; }
  Run("CREATE DATABASE metrics_db; CREATE TABLE metrics_db.t (id INT, name VARCHAR); "
      "CREATE JOB scraped ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO "
      "metrics_db.t SELECT c1, c2 FROM local(\"file_path\" = \"" +
      inbox + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  std::string body;
  EXPECT_TRUE(testing::WaitFor([&] {
    auto scraped = HttpGetAsRoot(server().http_port(), "/metrics");
    body = scraped.ok() ? scraped->body : "";
    return body.find("\nmillrace_job_rows_loaded_total{job=\"scraped\"} 2\n") != std::string::npos;
  })) << body;
  EXPECT_NE(body.find("\nmillrace_job_state{job=\"scraped\",state=\"RUNNING\"} 1\n"),
            std::string::npos);
  // A local job: its backlog age (0: all loaded), and no object-store series.
  EXPECT_NE(body.find("\nmillrace_job_oldest_unloaded_file_age_seconds{job=\"scraped\"} 0\n"),
            std::string::npos);
  EXPECT_EQ(body.find("millrace_job_object_store_requests_total{job=\"scraped\""),
            std::string::npos);
  // The jobs API (docs/http_api.md; tests/job/job_api_test.cc pages a million-file ledger).
  auto jobs = HttpGetAsRoot(server().http_port(), "/api/jobs");
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->status, 200);
  EXPECT_NE(jobs->body.find("\"name\":\"scraped\""), std::string::npos) << jobs->body;
  auto one = HttpGetAsRoot(server().http_port(), "/api/jobs/scraped");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->status, 200);
  EXPECT_NE(one->body.find("\"tasks\":[{"), std::string::npos) << one->body;
  auto files = HttpGetAsRoot(server().http_port(), "/api/jobs/scraped/files?state=LOADED");
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->status, 200);
  EXPECT_NE(files->body.find("\"key\":\"" + inbox + "/a.csv\""), std::string::npos) << files->body;
  EXPECT_NE(files->body.find("\"rows\":2,"), std::string::npos) << files->body;
  EXPECT_NE(files->body.find("\"next\":null"), std::string::npos) << files->body;
  auto tasks = HttpGetAsRoot(server().http_port(), "/api/jobs/scraped/tasks");
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(tasks->body.rfind("{\"tasks\":[{", 0), 0u) << tasks->body;
  EXPECT_EQ(HttpGetAsRoot(server().http_port(), "/api/jobs/scraped/filtered_rows")->body,
            "{\"next\":null,\"rows\":[]}\n");
  EXPECT_EQ(HttpGetAsRoot(server().http_port(), "/api/jobs?limit=0")->status, 400);
  EXPECT_EQ(HttpGetAsRoot(server().http_port(), "/api/jobs/nope")->status, 404);
  EXPECT_EQ(HttpGet(server().http_port(), "/api/jobs/scraped")->status, 401);
  // A user who may not read the job's table does not see the job.
  Run("CREATE USER 'viewer'@'%' IDENTIFIED BY 'v-pw'");
  auto hidden = HttpGet(server().http_port(), "/api/jobs/scraped", "", "viewer", "v-pw");
  ASSERT_TRUE(hidden.ok());
  EXPECT_EQ(hidden->status, 404);
  EXPECT_EQ(HttpGet(server().http_port(), "/api/jobs", "", "viewer", "v-pw")->body,
            "{\"jobs\":[],\"next\":null}\n");
  Run("GRANT SELECT_PRIV ON metrics_db.* TO 'viewer'@'%'");
  EXPECT_EQ(HttpGet(server().http_port(), "/api/jobs/scraped", "", "viewer", "v-pw")->status, 200);

  // SHOW CREATE JOB over the wire (tests/job/job_s3_test.cc recreates a job from it).
  EXPECT_EQ(Run("SHOW CREATE JOB scraped", {"-N", "-r"}),
            "scraped\tCREATE JOB `scraped` ON STREAMING PROPERTIES (\"max_interval\" = \"1\") "
            "DO INSERT INTO metrics_db.t SELECT c1, c2 FROM local(\"file_path\" = \"" +
                inbox + "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")\n");
  EXPECT_NE(Fail("SHOW CREATE JOB nope").find("job nope does not exist"), std::string::npos);
  Run("DROP JOB WHERE jobname = 'scraped'");
  auto dropped = HttpGetAsRoot(server().http_port(), "/metrics");
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(dropped->body.find("job=\"scraped\""), std::string::npos);
}

TEST(MysqlCliPasswordTest, PasswordsAuthSwitchAndSecretsInLogs) {
  testing::TempDir dir;
  const std::string password = "Tr0ub4dor&3-secret";
  auto server = ServerProcess::Start(dir.path(), {{}, {"MILLRACE_ROOT_PASSWORD=" + password}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->mysql_port();

  auto ok = MariaDb(port, "SELECT 'in'", {"--password=" + password});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->exit_code, 0) << ok->err;
  EXPECT_EQ(ok->out, "in\nin\n");
  // A client preferring caching_sha2_password is switched to mysql_native_password.
  auto switched = MariaDb(port, "SELECT 'switched'",
                          {"--password=" + password, "--default-auth=caching_sha2_password"});
  ASSERT_TRUE(switched.ok());
  EXPECT_EQ(switched->exit_code, 0) << switched->err;

  auto wrong = MariaDb(port, "SELECT 1", {"--password=" + password + "x"});
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->exit_code, 1);
  EXPECT_NE(wrong->err.find("ERROR 1045 (28000): Access denied for user 'root'@'127.0.0.1' "
                            "(using password: YES)"),
            std::string::npos)
      << wrong->err;
  auto none = MariaDb(port, "SELECT 1");
  ASSERT_TRUE(none.ok());
  EXPECT_NE(none->err.find("ERROR 1045 (28000)"), std::string::npos) << none->err;
  EXPECT_NE(none->err.find("(using password: NO)"), std::string::npos) << none->err;

  // Statements echoing the password are masked in the server's log.
  auto echoed = MariaDb(port, "SELECT '" + password + "' AS leak", {"--password=" + password});
  ASSERT_TRUE(echoed.ok());
  EXPECT_EQ(echoed->exit_code, 0);
  auto terminated = (*server)->Terminate();
  ASSERT_TRUE(terminated.ok());
  EXPECT_EQ(*terminated, 0);
  EXPECT_EQ((*server)->Log().find(password), std::string::npos) << (*server)->Log();
}

TEST(MysqlCliShutdownTest, SigtermStopsCleanlyAndDataSurvivesARestart) {
  testing::TempDir dir;
  {
    auto server = ServerProcess::Start(dir.path(), {{"--log-level", "debug"}, {}});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    auto created = MariaDb((*server)->mysql_port(),
                           "CREATE DATABASE keep; CREATE TABLE keep.t AS SELECT * FROM range(5)");
    ASSERT_TRUE(created.ok());
    ASSERT_EQ(created->exit_code, 0) << created->err;
    EXPECT_TRUE(std::filesystem::exists(dir.Join("ports.json")));
    auto status = (*server)->Terminate();
    ASSERT_TRUE(status.ok()) << status.status().ToString();
    EXPECT_EQ(*status, 0) << (*server)->Log();
    const std::string log = (*server)->Log();
    EXPECT_NE(log.find("received Terminated, shutting down"), std::string::npos) << log;
    EXPECT_NE(log.find("INFO stopped"), std::string::npos) << log;
    EXPECT_FALSE(std::filesystem::exists(dir.Join("ports.json")));
  }
  auto again = ServerProcess::Start(dir.path(), {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto count = MariaDb((*again)->mysql_port(), "SELECT count(*) FROM keep.t", {"-N"});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->out, "5\n") << count->err;
}

// SIGTERM with a statement that would run for ever: it gets --shutdown-grace, then it is
// interrupted and the server exits cleanly; the endless statement does not hold it up.
TEST(MysqlCliShutdownTest, TheGraceEndsAStatementThatRunsOn) {
  testing::TempDir dir;
  auto server = ServerProcess::Start(dir.path(), {{"--shutdown-grace", "1"}, {}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->mysql_port();
  std::thread endless([port] {
    auto run = MariaDb(port,
                       "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                       "SELECT count(*) FROM r");
    ASSERT_TRUE(run.ok());
    EXPECT_NE(run->exit_code, 0);  // the connection closed under it
  });
  ASSERT_TRUE(testing::WaitFor([&] {
    auto list = MariaDb(port, "SHOW PROCESSLIST", {"-N"});
    return list.ok() && list->out.find("WITH RECURSIVE") != std::string::npos;
  }));
  auto status = (*server)->Terminate(std::chrono::seconds(20));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(*status, 0) << (*server)->Log();
  EXPECT_NE((*server)->Log().find("interrupting the statements still running after the 1000 ms"),
            std::string::npos)
      << (*server)->Log();
  endless.join();
}

TEST(MysqlCliStartupTest, RefusesABusyPortAndNonLoopbackWithoutPassword) {
  testing::TempDir dir;
  auto first = ServerProcess::Start(dir.path(), {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  testing::TempDir other;
  auto busy = testing::RunProcess({testing::MillraceBinary(), "serve", "--data-dir", other.path(),
                                   "--mysql-port", std::to_string((*first)->mysql_port()),
                                   "--http-port", "0"});
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->exit_code, 1);
  EXPECT_NE(busy->err.find("cannot listen for MySQL on 127.0.0.1:" +
                           std::to_string((*first)->mysql_port())),
            std::string::npos)
      << busy->err;
  auto open = testing::RunProcess(
      {testing::MillraceBinary(), "serve", "--data-dir", other.path(), "--bind", "0.0.0.0"},
      {"MILLRACE_ROOT_PASSWORD="});
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->exit_code, 2);
  EXPECT_NE(open->err.find("refusing to listen on non-loopback address 0.0.0.0"), std::string::npos)
      << open->err;
}

}  // namespace
}  // namespace millrace::server
