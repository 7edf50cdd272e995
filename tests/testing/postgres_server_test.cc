// The PostgreSQL 15 test server: its settings, SQL through psql as the test role, password
// authentication, replication connections, concurrent use, and restarts (clean and crash).
#include "testing/postgres_server.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/server_process.h"
#include "testing/server_test.h"

namespace millrace::testing {
namespace {

// One server for the suite: starting PostgreSQL is heavy. Each test uses its own tables.
class PostgresServerTest : public SharedServerTest<PostgresServer> {
 protected:
  // psql to the server over TCP as user() with `password`, in replication mode when asked.
  static Result<ProcessResult> Psql(const std::string& password, const std::string& sql,
                                    bool replication = false) {
    std::string conninfo = "host=" + server_->host() + " port=" + std::to_string(server_->port()) +
                           " user=" + server_->user() + " dbname=postgres";
    if (replication) conninfo += " replication=database";
    return RunProcess(
        {PostgresServer::Binary("psql"), "-X", "-A", "-t", "-q", "-d", conninfo, "-c", sql},
        {"PGPASSWORD=" + password, "PGSSLMODE=disable", "LC_ALL=C"});
  }
};

TEST_F(PostgresServerTest, RunsWithTheDocumentedSettings) {
  EXPECT_EQ(server_->host(), "127.0.0.1");
  EXPECT_GT(server_->port(), 0);
  EXPECT_EQ(server_->JdbcUrl("shop"),
            "jdbc:postgresql://127.0.0.1:" + std::to_string(server_->port()) + "/shop");
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"wal_level", "logical"},
      {"max_replication_slots", "20"},
      {"max_wal_senders", "20"},
      {"fsync", "off"},
      {"listen_addresses", "127.0.0.1"},
      {"port", std::to_string(server_->port())},
      {"server_version_num", ""},
      {"server_encoding", "UTF8"},
      {"password_encryption", "scram-sha-256"}};
  for (const auto& [name, expected] : settings) {
    auto value = server_->Sql("SHOW " + name);
    ASSERT_TRUE(value.ok()) << name << ": " << value.status().ToString();
    if (name == "server_version_num") {
      EXPECT_EQ(value->substr(0, 2), "15") << *value;
    } else {
      EXPECT_EQ(*value, expected) << name;
    }
  }
  auto role = server_->Sql(
      "SELECT current_user, rolsuper, rolreplication, rolpassword LIKE 'SCRAM-SHA-256$%' "
      "FROM pg_authid WHERE rolname = current_user");
  ASSERT_TRUE(role.ok()) << role.status().ToString();
  EXPECT_EQ(*role, "millrace_test|t|t|t");
}

TEST_F(PostgresServerTest, RunsSqlAndReportsErrors) {
  ASSERT_TRUE(server_->Sql("CREATE DATABASE shop").ok());
  auto created = server_->Sql(
      "CREATE TABLE items (id int PRIMARY KEY, name text);\n"
      "INSERT INTO items VALUES (1, 'apple'), (2, 'pear|plum'), (3, NULL);",
      "shop");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(*created, "");
  auto rows = server_->Sql("SELECT id, name FROM items ORDER BY id", "shop");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, "1|apple\n2|pear|plum\n3|");
  // The table is in `shop`, not in the default database.
  EXPECT_FALSE(server_->Sql("SELECT count(*) FROM items").ok());

  // ON_ERROR_STOP: the script stops at the first error, whose message is in the status.
  ExpectSqlStopsAtFirstError(*server_, "duplicate key value");
}

TEST_F(PostgresServerTest, ChecksPasswordsAndAllowsReplicationConnections) {
  ExpectPasswordChecked(
      [](const std::string& password, const std::string& sql) { return Psql(password, sql); },
      server_->password(), /*refused_exit_code=*/2,
      "password authentication failed for user \"millrace_test\"");
  auto wrong_replication = Psql("not-the-password", "IDENTIFY_SYSTEM", /*replication=*/true);
  ASSERT_TRUE(wrong_replication.ok());
  EXPECT_EQ(wrong_replication->exit_code, 2) << wrong_replication->out;

  // A logical replication connection (walsender) through the `host replication` line.
  auto identify = Psql(server_->password(), "IDENTIFY_SYSTEM", /*replication=*/true);
  ASSERT_TRUE(identify.ok());
  ASSERT_EQ(identify->exit_code, 0) << identify->err;
  EXPECT_NE(identify->out.find("|postgres\n"), std::string::npos) << identify->out;

  // wal_level=logical: a pgoutput slot can be made.
  auto slot = server_->Sql(
      "SELECT slot_name FROM pg_create_logical_replication_slot('millrace_slot', 'pgoutput');\n"
      "SELECT pg_drop_replication_slot('millrace_slot');");
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  EXPECT_EQ(*slot, "millrace_slot\n");
}

TEST_F(PostgresServerTest, TakesStatementsFromSeveralThreads) {
  ASSERT_TRUE(server_->Sql("CREATE TABLE hits (thread int, n int)").ok());
  constexpr int kThreads = 8;
  constexpr int kEach = 5;
  const std::vector<Status> results = RunOnThreads(kThreads, kEach, [](int t, int n) {
    return server_
        ->Sql("INSERT INTO hits VALUES (" + std::to_string(t) + ", " + std::to_string(n) + ")")
        .status();
  });
  for (const Status& status : results)
    EXPECT_TRUE(status.ok()) << status.ToString();
  auto count = server_->Sql("SELECT count(DISTINCT (thread, n)) FROM hits");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, std::to_string(kThreads * kEach));
}

TEST_F(PostgresServerTest, KeepsDataAndPortAcrossRestarts) {
  const int port = server_->port();
  ASSERT_TRUE(server_->Sql("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before');").ok());

  const Status restarted = server_->Restart();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  EXPECT_EQ(server_->port(), port);
  auto after_restart = server_->Sql("SELECT v FROM kept");
  ASSERT_TRUE(after_restart.ok()) << after_restart.status().ToString();
  EXPECT_EQ(*after_restart, "before");

  ASSERT_TRUE(server_->Sql("INSERT INTO kept VALUES ('before crash')").ok());
  const Status crashed = server_->CrashRestart();
  ASSERT_TRUE(crashed.ok()) << crashed.ToString();
  EXPECT_EQ(server_->port(), port);
  auto answer = server_->Sql("SELECT 1");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(*answer, "1");
  // Crash recovery ran: the log says so.
  EXPECT_NE(ReadFile(server_->log_path()).find("automatic recovery in progress"),
            std::string::npos);
}

}  // namespace
}  // namespace millrace::testing
