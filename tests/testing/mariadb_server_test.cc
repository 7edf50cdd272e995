// The MariaDB 10.11 test server: its settings (binary log for CDC), SQL through the mariadb
// client as the test user, password authentication, what a binlog client needs, GTIDs,
// concurrent use, restarts (clean and crash), and the watchdog.
#include "testing/mariadb_server.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "testing/server_process.h"
#include "testing/server_test.h"
#include "testing/wait_for.h"

namespace millrace::testing {
namespace {

// One server for the suite: starting MariaDB is heavy. Each test uses its own database.
class MariadbServerTest : public SharedServerTest<MariadbServer> {
 protected:
  // The mariadb client to the server over TCP as user() with `password`.
  static Result<ProcessResult> Client(const std::string& password, const std::string& sql) {
    return RunProcess(
        {MariadbServer::Binary("mariadb"), "--no-defaults", "--batch", "--skip-column-names",
         "--protocol=TCP", "--host=" + server_->host(), "--port=" + std::to_string(server_->port()),
         "--user=" + server_->user(), "-e", sql},
        {"MYSQL_PWD=" + password, "LC_ALL=C"});
  }

  // `name\tvalue` lines as a map.
  static std::map<std::string, std::string> Pairs(const std::string& rows) {
    std::map<std::string, std::string> pairs;
    std::istringstream lines(rows);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t tab = line.find('\t');
      pairs[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
    }
    return pairs;
  }

  // The server's temporary directory (the socket's).
  static std::string Directory(const MariadbServer& server) {
    const std::string& socket = server.socket_path();
    return socket.substr(0, socket.rfind('/'));
  }
};

// Gone, or a zombie nobody reaps (PID 1 in a container may not).
bool ProcessGone(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z' ||
         stat[paren + 2] == 'X';
}

TEST_F(MariadbServerTest, RunsWithTheDocumentedSettings) {
  EXPECT_EQ(server_->host(), "127.0.0.1");
  EXPECT_GT(server_->port(), 0);
  EXPECT_EQ(server_->JdbcUrl(), "jdbc:mysql://127.0.0.1:" + std::to_string(server_->port()));
  auto variables = server_->Sql(
      "SHOW VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', 'binlog_row_image', "
      "'binlog_row_metadata', 'gtid_strict_mode', 'server_id', 'port', 'bind_address', "
      "'log_bin_basename', 'version', 'character_set_server', 'innodb_buffer_pool_size', "
      "'skip_name_resolve', 'innodb_flush_log_at_trx_commit', 'gtid_domain_id')");
  ASSERT_TRUE(variables.ok()) << variables.status().ToString();
  const std::map<std::string, std::string> values = Pairs(*variables);
  const std::map<std::string, std::string> expected = {
      {"log_bin", "ON"},
      {"binlog_format", "ROW"},
      {"binlog_row_image", "FULL"},
      {"binlog_row_metadata", "FULL"},
      {"gtid_strict_mode", "OFF"},
      {"gtid_domain_id", "0"},
      {"server_id", "1"},
      {"port", std::to_string(server_->port())},
      {"bind_address", "127.0.0.1"},
      {"log_bin_basename", Directory(*server_) + "/binlog"},
      {"character_set_server", "utf8mb4"},
      {"innodb_buffer_pool_size", std::to_string(32 << 20)},
      {"skip_name_resolve", "ON"},
      {"innodb_flush_log_at_trx_commit", "2"}};
  for (const auto& [name, value] : expected) {
    EXPECT_EQ(values.count(name) ? values.at(name) : "<missing>", value) << name;
  }
  ASSERT_TRUE(values.count("version"));
  EXPECT_EQ(values.at("version").substr(0, 6), "10.11.") << values.at("version");
  EXPECT_NE(values.at("version").find("MariaDB"), std::string::npos) << values.at("version");

  auto user = server_->Sql("SELECT CURRENT_USER()");
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(*user, "millrace_test@127.0.0.1");

  // Started as root, mariadbd runs as the `mysql` OS user (--user=mysql); else as us.
  struct stat process {};
  ASSERT_EQ(::stat(("/proc/" + std::to_string(server_->pid())).c_str(), &process), 0);
  const passwd* mysql = ::getpwnam("mysql");
  EXPECT_EQ(process.st_uid, ::geteuid() == 0 && mysql != nullptr ? mysql->pw_uid : ::geteuid());
}

TEST_F(MariadbServerTest, RunsSqlAndReportsErrors) {
  auto created = server_->Sql(
      "CREATE DATABASE shop;\n"
      "CREATE TABLE shop.items (id int PRIMARY KEY, name text) ENGINE=InnoDB;\n"
      "INSERT INTO shop.items VALUES (1, 'apple'), (2, 'pear\\tplum'), (3, NULL);");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(*created, "");
  auto rows = server_->Sql("SELECT id, name FROM items ORDER BY id", "shop");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  // Tab-separated columns; a tab in a value escaped, NULL spelled out (batch mode).
  EXPECT_EQ(*rows, "1\tapple\n2\tpear\\tplum\n3\tNULL");
  // A script runs in one session.
  auto session = server_->Sql("SET @n = 41;\nSELECT @n + 1;");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(*session, "42");
  // Without a database, `items` names nothing: an SQL error, not a connection failure.
  auto unqualified = server_->Sql("SELECT count(*) FROM items");
  ASSERT_FALSE(unqualified.ok());
  EXPECT_EQ(unqualified.status().code(), StatusCode::kInternal) << unqualified.status().ToString();

  // The script stops at the first error, whose message is in the status; an unknown database
  // fails the login (UNAVAILABLE), naming the database.
  ExpectSqlStopsAtFirstError(*server_, "Duplicate entry '1' for key 'PRIMARY'");
  auto missing = server_->Sql("SELECT 1", "no_such_database");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("Unknown database 'no_such_database'"),
            std::string::npos)
      << missing.status().ToString();
}

TEST_F(MariadbServerTest, ChecksPasswordsAndServesBinlogClients) {
  ExpectPasswordChecked(Client, server_->password(), /*refused_exit_code=*/1,
                        "Access denied for user 'millrace_test'@'127.0.0.1'");

  // The grant covers what a binlog client needs (ALL on *.* includes them in 10.11).
  auto privileges = server_->Sql(
      "SELECT PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.USER_PRIVILEGES "
      "WHERE GRANTEE = \"'millrace_test'@'127.0.0.1'\"");
  ASSERT_TRUE(privileges.ok()) << privileges.status().ToString();
  const std::map<std::string, std::string> granted = Pairs(*privileges);
  for (const char* privilege : {"REPLICATION SLAVE", "BINLOG MONITOR", "REPLICATION SLAVE ADMIN",
                                "BINLOG ADMIN", "BINLOG REPLAY", "SUPER", "RELOAD"}) {
    EXPECT_EQ(granted.count(privilege) ? granted.at(privilege) : "<missing>", "YES") << privilege;
  }
  auto logs = server_->Sql("SHOW BINARY LOGS");
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  EXPECT_EQ(logs->rfind("binlog.000001\t", 0), 0u) << *logs;

  // A binlog dump (REPLICATION SLAVE) as the test user over TCP sees a write's row events.
  ASSERT_TRUE(server_
                  ->Sql("CREATE DATABASE binlog_probe;\n"
                        "CREATE TABLE binlog_probe.t (id int PRIMARY KEY, v varchar(20));\n"
                        "INSERT INTO binlog_probe.t VALUES (1, 'seen');")
                  .ok());
  auto gtid = server_->Sql("SELECT @@gtid_binlog_pos");
  ASSERT_TRUE(gtid.ok()) << gtid.status().ToString();
  auto dump = RunProcess({MariadbServer::Binary("mariadb-binlog"), "--no-defaults",
                          "--read-from-remote-server", "--host=" + server_->host(),
                          "--port=" + std::to_string(server_->port()), "--user=" + server_->user(),
                          "--password=" + server_->password(), "--to-last-log", "binlog.000001"},
                         {"LC_ALL=C"});
  ASSERT_TRUE(dump.ok()) << dump.status().ToString();
  ASSERT_EQ(dump->exit_code, 0) << dump->err;
  EXPECT_NE(dump->out.find("Table_map: `binlog_probe`.`t`"), std::string::npos);
  EXPECT_NE(dump->out.find("Write_rows"), std::string::npos);
  EXPECT_NE(dump->out.find("GTID " + *gtid), std::string::npos) << *gtid;

  // The test user can also log in over the unix socket (millrace_test@localhost).
  auto socket = RunProcess({MariadbServer::Binary("mariadb"), "--no-defaults", "--batch",
                            "--skip-column-names", "--socket=" + server_->socket_path(),
                            "--user=" + server_->user(), "-e", "SELECT CURRENT_USER()"},
                           {"MYSQL_PWD=" + server_->password()});
  ASSERT_TRUE(socket.ok());
  EXPECT_EQ(socket->exit_code, 0) << socket->err;
  EXPECT_EQ(socket->out, "millrace_test@localhost\n");
}

TEST_F(MariadbServerTest, TracksGtidsInTheBinlog) {
  ASSERT_TRUE(
      server_->Sql("CREATE DATABASE gtids; CREATE TABLE gtids.t (id int PRIMARY KEY);").ok());
  auto before = server_->Sql("SELECT @@gtid_binlog_pos");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_TRUE(server_->Sql("INSERT INTO gtids.t VALUES (1)").ok());
  auto after = server_->Sql("SELECT @@gtid_binlog_pos");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  // Domain 0, server 1, one more transaction.
  ASSERT_EQ(before->rfind("0-1-", 0), 0u) << *before;
  ASSERT_EQ(after->rfind("0-1-", 0), 0u) << *after;
  EXPECT_EQ(std::stoll(after->substr(4)), std::stoll(before->substr(4)) + 1);

  // BINLOG_GTID_POS maps the binlog's end (file, offset) to the same GTID position.
  auto status = server_->Sql("SHOW BINLOG STATUS");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  std::istringstream fields(*status);
  std::string file;
  std::string offset;
  std::getline(fields, file, '\t');
  std::getline(fields, offset, '\t');
  auto mapped =
      server_->Sql("SELECT BINLOG_GTID_POS('" + file + "', " + offset + "), @@gtid_current_pos");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(*mapped, *after + "\t" + *after);
}

TEST_F(MariadbServerTest, TakesStatementsFromSeveralThreads) {
  ASSERT_TRUE(
      server_->Sql("CREATE DATABASE hits; CREATE TABLE hits.hits (thread int, n int);").ok());
  constexpr int kThreads = 8;
  constexpr int kEach = 5;
  const std::vector<Status> results = RunOnThreads(kThreads, kEach, [](int t, int n) {
    return server_
        ->Sql("INSERT INTO hits VALUES (" + std::to_string(t) + ", " + std::to_string(n) + ")",
              "hits")
        .status();
  });
  for (const Status& status : results)
    EXPECT_TRUE(status.ok()) << status.ToString();
  auto count = server_->Sql("SELECT count(DISTINCT thread, n) FROM hits", "hits");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, std::to_string(kThreads * kEach));
}

TEST_F(MariadbServerTest, KeepsDataAndPortAcrossRestarts) {
  const int port = server_->port();
  ASSERT_TRUE(server_
                  ->Sql("CREATE DATABASE kept;\n"
                        "CREATE TABLE kept.kept (v varchar(20)) ENGINE=InnoDB;\n"
                        "INSERT INTO kept.kept VALUES ('before crash');")
                  .ok());
  auto gtid = server_->Sql("SELECT @@gtid_binlog_pos");
  ASSERT_TRUE(gtid.ok());

  const pid_t crashed_pid = server_->pid();
  size_t log_start = FileSize(server_->log_path());
  const Status crashed = server_->CrashRestart();
  ASSERT_TRUE(crashed.ok()) << crashed.ToString();
  EXPECT_EQ(server_->port(), port);
  EXPECT_NE(server_->pid(), crashed_pid);
  EXPECT_TRUE(ProcessGone(crashed_pid));
  auto after_crash = server_->Sql("SELECT v FROM kept ORDER BY v", "kept");
  ASSERT_TRUE(after_crash.ok()) << after_crash.status().ToString();
  EXPECT_EQ(*after_crash, "before crash");
  // Crash recovery ran (the binlog was left open), and the binlog position survived.
  EXPECT_NE(TailSince(server_->log_path(), log_start, 1000).find("Recovering after a crash"),
            std::string::npos)
      << TailSince(server_->log_path(), log_start);
  auto gtid_after_crash = server_->Sql("SELECT @@gtid_binlog_pos");
  ASSERT_TRUE(gtid_after_crash.ok());
  EXPECT_EQ(*gtid_after_crash, *gtid);

  ASSERT_TRUE(server_->Sql("INSERT INTO kept VALUES ('before restart')", "kept").ok());
  log_start = FileSize(server_->log_path());
  const Status restarted = server_->Restart();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  EXPECT_EQ(server_->port(), port);
  auto after_restart = server_->Sql("SELECT v FROM kept ORDER BY v", "kept");
  ASSERT_TRUE(after_restart.ok()) << after_restart.status().ToString();
  EXPECT_EQ(*after_restart, "before crash\nbefore restart");
  const std::string log = TailSince(server_->log_path(), log_start, 1000);
  EXPECT_NE(log.find("Shutdown complete"), std::string::npos) << log;
  EXPECT_EQ(log.find("Recovering after a crash"), std::string::npos) << log;
}

// A test process that dies without destructors (here a forked child that _exits) leaves
// neither a server nor its directory: the watchdog kills one and removes the other.
TEST_F(MariadbServerTest, WatchdogStopsTheServerOfADeadTestProcess) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto started = MariadbServer::Start();
    std::string report = "failed " + started.status().ToString();
    if (started.ok()) {
      MariadbServer* server = started->release();  // never destroyed
      report = std::to_string(server->pid()) + " " + Directory(*server) + "\n";
    }
    [[maybe_unused]] const ssize_t written = ::write(fds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string report;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;)
    report.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int wait_status = 0;
  ASSERT_TRUE(WaitForExit(child, std::chrono::seconds(120), &wait_status));
  ASSERT_EQ(report.rfind("failed", 0), std::string::npos) << report;

  std::istringstream fields(report);
  pid_t server_pid = -1;
  std::string dir;
  fields >> server_pid >> dir;
  ASSERT_GT(server_pid, 0) << report;
  ASSERT_FALSE(dir.empty()) << report;
  EXPECT_TRUE(WaitFor([&] { return ProcessGone(server_pid); }));
  EXPECT_TRUE(WaitFor([&] { return ::access(dir.c_str(), F_OK) != 0; })) << dir;
  // The suite's server is untouched.
  auto answer = server_->Sql("SELECT 1");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(*answer, "1");
}

}  // namespace
}  // namespace millrace::testing
