// The real `millrace serve` binary driven by MariaDB Connector/C: large streamed results,
// many concurrent clients, result metadata, multi-statements and authentication.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "server/mysql_test_util.h"
#include "testing/server_process.h"

namespace millrace::server {
namespace {

class ConnectorCTest : public SharedServerTest {
 protected:
  static void SetUpTestSuite() {
    mysql_library_init(0, nullptr, nullptr);  // before any thread calls mysql_init
    StartServer({{"--threads", "2"}, {}});
  }
  static void TearDownTestSuite() { StopServer(); }

  // The server's count of bytes sent to clients; -1 when /metrics cannot be read.
  static double BytesSent() {
    auto reply = HttpGetAsRoot(server().http_port(), "/metrics");
    if (!reply.ok() || reply->status != 200) return -1;
    return PrometheusValue(reply->body, "millrace_mysql_bytes_sent_total");
  }

  // True once the bytes sent have not moved for 100 ms: while streaming, the count grows with
  // every flush, many per millisecond.
  static bool ServerStopsSending() {
    double last = -1;
    auto last_change = std::chrono::steady_clock::now();
    return testing::WaitFor([&] {
      const double sent = BytesSent();
      const auto now = std::chrono::steady_clock::now();
      if (sent < 0 || sent != last) {
        last = sent;
        last_change = now;
        return false;
      }
      return now - last_change >= std::chrono::milliseconds(100);
    });
  }

  static MysqlPtr Connect(unsigned long flags = 0) {
    std::string error;
    MysqlPtr mysql = ConnectorC(server().mysql_port(), "", flags, nullptr, &error);
    EXPECT_NE(mysql, nullptr) << error;
    return mysql;
  }
};

// Every result of the statements just sent: the first column of each row, or "affected N"
// for a statement without rows.
std::vector<std::string> AllResults(MYSQL* mysql) {
  std::vector<std::string> seen;
  do {
    MYSQL_RES* res = mysql_store_result(mysql);
    if (res != nullptr) {
      while (MYSQL_ROW row = mysql_fetch_row(res))
        seen.push_back(row[0] ? row[0] : "NULL");
      mysql_free_result(res);
    } else {
      seen.push_back("affected " + std::to_string(mysql_affected_rows(mysql)));
    }
  } while (mysql_next_result(mysql) == 0);
  return seen;
}

// Runs statements that return no rows; false (with the error recorded) on failure.
bool Exec(MYSQL* mysql, const std::string& sql) {
  if (mysql_query(mysql, sql.c_str()) != 0) {
    ADD_FAILURE() << sql << ": " << mysql_errno(mysql) << " " << mysql_error(mysql);
    return false;
  }
  AllResults(mysql);  // drained, so the connection is ready for the next statement
  return true;
}

TEST_F(ConnectorCTest, AMillionRowsStreamWithFlatServerMemory) {
  MysqlPtr mysql = Connect();
  ASSERT_NE(mysql, nullptr);
  // Each row carries ~300 bytes: the whole result is ~300 MB of text.
  const std::string sql =
      "SELECT i, 'row-' || i::VARCHAR || '-' || repeat('x', 280) AS payload "
      "FROM range(1000000) t(i)";
  ASSERT_EQ(Scalar(mysql.get(), "SELECT count(*) FROM (" + sql + ")"), "1000000");
  const size_t baseline = server().RssBytes();
  ASSERT_GT(baseline, 0u);

  ASSERT_EQ(mysql_query(mysql.get(), sql.c_str()), 0) << mysql_error(mysql.get());
  MYSQL_RES* res = mysql_use_result(mysql.get());  // rows are read as they arrive
  ASSERT_NE(res, nullptr);
  ASSERT_EQ(mysql_num_fields(res), 2u);
  EXPECT_EQ(mysql_fetch_field_direct(res, 0)->type, MYSQL_TYPE_LONGLONG);
  EXPECT_EQ(mysql_fetch_field_direct(res, 1)->type, MYSQL_TYPE_BLOB);  // a LONGTEXT
  size_t rows = 0;
  size_t bytes = 0;
  size_t peak = baseline;
  bool in_order = true;
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    unsigned long* lengths = mysql_fetch_lengths(res);
    bytes += lengths[0] + lengths[1];
    in_order = in_order && std::stoul(row[0]) == rows;
    ++rows;
    if (rows % 50000 == 0) peak = std::max(peak, server().RssBytes());
    if (rows == 200000) {
      // A slow reader: the client stops reading until the server blocks on its socket (what it
      // has sent stands still) instead of buffering the rest of the result.
      EXPECT_TRUE(ServerStopsSending()) << "the server kept sending to a client that reads nothing";
      peak = std::max(peak, server().RssBytes());
    }
  }
  EXPECT_EQ(mysql_errno(mysql.get()), 0u) << mysql_error(mysql.get());
  mysql_free_result(res);
  EXPECT_EQ(rows, 1000000u);
  EXPECT_TRUE(in_order);
  EXPECT_GT(bytes, 290u * 1000000);
  // The server's memory grows by far less than the result it sent.
  EXPECT_LT(peak - baseline, 100u << 20) << "baseline " << baseline << " peak " << peak;
  std::printf("server RSS: baseline %zu MiB, peak while streaming %zu MiB\n", baseline >> 20,
              peak >> 20);
  EXPECT_EQ(Scalar(mysql.get(), "SELECT 'next'"), "next");
}

TEST_F(ConnectorCTest, FiftyConcurrentClientsEachDoRealWork) {
  MysqlPtr admin = Connect(CLIENT_MULTI_STATEMENTS);
  ASSERT_NE(admin, nullptr);
  ASSERT_TRUE(Exec(admin.get(),
                   "CREATE DATABASE conc; CREATE TABLE conc.shared AS SELECT i, i % 10 AS k "
                   "FROM range(100000) t(i)"));
  constexpr int kClients = 50;
  std::barrier start(kClients);
  std::atomic<int> succeeded{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      std::string error;
      MysqlPtr mysql =
          ConnectorC(server().mysql_port(), "", CLIENT_MULTI_STATEMENTS, "conc", &error);
      start.arrive_and_wait();
      if (mysql == nullptr) {
        ADD_FAILURE() << "client " << c << ": " << error;
        return;
      }
      const std::string table = "w" + std::to_string(c);
      bool ok = Exec(mysql.get(), "CREATE TABLE " + table + " (id INTEGER, v VARCHAR)");
      for (int i = 0; ok && i < 10; ++i) {
        ok = Exec(mysql.get(), "INSERT INTO " + table + " VALUES (" + std::to_string(i) + ", 'v" +
                                   std::to_string(c) + "')");
      }
      ok = ok && Exec(mysql.get(),
                      "INSERT INTO " + table + " SELECT i, 'bulk' FROM range(10, 1000) t(i)");
      ok = ok && Scalar(mysql.get(), "SELECT sum(id) FROM " + table) == "499500";
      ok = ok && Scalar(mysql.get(), "SELECT count(*) FROM " + table + " WHERE v = 'v" +
                                         std::to_string(c) + "'") == "10";
      // shared holds i in [0, 100000) with k = i % 10: sum = 10000 * k + 10 * sum(0..9999).
      const int k = c % 10;
      ok = ok && Scalar(mysql.get(), "SELECT sum(i) FROM shared WHERE k = " + std::to_string(k)) ==
                     std::to_string(499950000 + 10000 * k);
      ok = ok && Exec(mysql.get(), "DROP TABLE " + table);
      if (ok) ++succeeded;
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(succeeded.load(), kClients);
  EXPECT_EQ(Scalar(admin.get(),
                   "SELECT count(*) FROM information_schema.tables WHERE "
                   "table_schema = 'conc'"),
            "1");
  auto metrics = HttpGetAsRoot(server().http_port(), "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_GE(PrometheusValue(metrics->body, "millrace_mysql_connections_total"), kClients + 1);
}

// A statement runs while its rows stream: it shows in SHOW PROCESSLIST and KILL QUERY stops it
// there too. KILL QUERY of an idle session does nothing, not even to its next statement.
TEST_F(ConnectorCTest, KillQueryReachesAStatementWhileItsRowsStream) {
  MysqlPtr worker = Connect();
  MysqlPtr admin = Connect();
  ASSERT_NE(worker, nullptr);
  ASSERT_NE(admin, nullptr);
  const std::string id = std::to_string(mysql_thread_id(worker.get()));
  ASSERT_EQ(mysql_query(admin.get(), ("KILL QUERY " + id).c_str()), 0) << mysql_error(admin.get());
  EXPECT_EQ(Scalar(worker.get(), "SELECT 41 + 1"), "42");

  ASSERT_EQ(mysql_query(worker.get(), "SELECT range FROM range(100000000000)"), 0);
  MYSQL_RES* res = mysql_use_result(worker.get());
  ASSERT_NE(res, nullptr);
  ASSERT_NE(mysql_fetch_row(res), nullptr);  // the rows stream
  bool listed = false;
  ASSERT_EQ(mysql_query(admin.get(), "SHOW FULL PROCESSLIST"), 0);
  MYSQL_RES* list = mysql_store_result(admin.get());
  while (MYSQL_ROW row = mysql_fetch_row(list))
    listed |= row[0] == id && std::string(row[4]) == "Query";
  mysql_free_result(list);
  EXPECT_TRUE(listed);
  ASSERT_EQ(mysql_query(admin.get(), ("KILL QUERY " + id).c_str()), 0) << mysql_error(admin.get());
  while (mysql_fetch_row(res) != nullptr) {
  }
  EXPECT_EQ(mysql_errno(worker.get()), 1317u) << mysql_error(worker.get());
  mysql_free_result(res);
  EXPECT_EQ(Scalar(worker.get(), "SELECT 41 + 1"), "42");
}

// SHOW PROCESSLIST shows a running statement; KILL QUERY stops it and its session goes on;
// KILL ends a session; killing a session that does not exist is MySQL's 1094.
TEST_F(ConnectorCTest, KillQueryStopsALongQueryAndTheSessionGoesOn) {
  MysqlPtr worker = Connect();
  MysqlPtr admin = Connect();
  ASSERT_NE(worker, nullptr);
  ASSERT_NE(admin, nullptr);
  const unsigned long worker_id = mysql_thread_id(worker.get());
  std::atomic<int> error{0};
  std::thread long_query([&] {
    if (mysql_query(worker.get(), "SELECT count(*) FROM range(100000000000) a") != 0) {
      error = static_cast<int>(mysql_errno(worker.get()));
    } else if (MYSQL_RES* res = mysql_store_result(worker.get()); res != nullptr) {
      mysql_free_result(res);
    }
  });
  const std::string id = std::to_string(worker_id);
  // The statement shows in SHOW PROCESSLIST while it runs.
  const bool seen = testing::WaitFor([&] {
    if (mysql_query(admin.get(), "SHOW FULL PROCESSLIST") != 0) return false;
    MYSQL_RES* res = mysql_store_result(admin.get());
    bool running = false;
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      running |= row[0] == id && std::string(row[4]) == "Query" && row[7] != nullptr &&
                 std::string(row[7]).find("range(100000000000)") != std::string::npos;
    }
    mysql_free_result(res);
    return running;
  });
  EXPECT_TRUE(seen);
  ASSERT_EQ(mysql_query(admin.get(), ("KILL QUERY " + id).c_str()), 0) << mysql_error(admin.get());
  long_query.join();
  EXPECT_EQ(error.load(), 1317) << "query execution was interrupted";
  // The session goes on.
  ASSERT_EQ(mysql_query(worker.get(), "SELECT 41 + 1"), 0) << mysql_error(worker.get());
  MYSQL_RES* res = mysql_store_result(worker.get());
  EXPECT_EQ(std::string(mysql_fetch_row(res)[0]), "42");
  mysql_free_result(res);
  // KILL ends the session, idle as it is: it is gone from the process list at once.
  ASSERT_EQ(mysql_query(admin.get(), ("KILL " + id).c_str()), 0) << mysql_error(admin.get());
  EXPECT_TRUE(testing::WaitFor([&] {
    if (mysql_query(admin.get(), "SHOW PROCESSLIST") != 0) return false;
    MYSQL_RES* list = mysql_store_result(admin.get());
    bool listed = false;
    while (MYSQL_ROW row = mysql_fetch_row(list))
      listed |= row[0] == id;
    mysql_free_result(list);
    return !listed;
  }));
  EXPECT_NE(mysql_query(worker.get(), "SELECT 1"), 0);
  EXPECT_NE(mysql_query(admin.get(), "KILL QUERY 999999"), 0);
  EXPECT_EQ(mysql_errno(admin.get()), 1094u) << mysql_error(admin.get());
  ASSERT_EQ(mysql_query(admin.get(), "SHOW CATALOGS"), 0);
  res = mysql_store_result(admin.get());
  EXPECT_EQ(std::string(mysql_fetch_row(res)[1]), "internal");
  mysql_free_result(res);
}

// Doris's statement bounds: query_timeout ends a query, insert_timeout an INSERT, each with
// MySQL's 3024 naming the variable; the session goes on; 0 is no bound.
TEST_F(ConnectorCTest, QueryTimeoutAndInsertTimeoutEndStatementsThatRunOn) {
  MysqlPtr mysql = Connect();
  ASSERT_NE(mysql, nullptr);
  EXPECT_EQ(Scalar(mysql.get(), "SELECT @@query_timeout"), "900");
  EXPECT_EQ(Scalar(mysql.get(), "SELECT @@insert_timeout"), "14400");
  const std::string endless =
      "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r";
  ASSERT_TRUE(Exec(mysql.get(), "SET query_timeout = 1"));
  ASSERT_NE(mysql_query(mysql.get(), endless.c_str()), 0);
  EXPECT_EQ(mysql_errno(mysql.get()), 3024u) << mysql_error(mysql.get());
  EXPECT_NE(std::string(mysql_error(mysql.get())).find("query_timeout is 1 s"), std::string::npos)
      << mysql_error(mysql.get());
  EXPECT_EQ(Scalar(mysql.get(), "SELECT 41 + 1"), "42");

  // An INSERT is bounded by insert_timeout, whatever query_timeout says.
  ASSERT_TRUE(Exec(mysql.get(), "CREATE DATABASE IF NOT EXISTS bounds"));
  ASSERT_TRUE(Exec(mysql.get(), "CREATE TABLE IF NOT EXISTS bounds.t (n BIGINT)"));
  ASSERT_TRUE(Exec(mysql.get(), "SET @@session.query_timeout = 0, insert_timeout = 1"));
  const std::string insert = "INSERT INTO bounds.t SELECT count(*) FROM range(100000000000) a";
  ASSERT_NE(mysql_query(mysql.get(), insert.c_str()), 0);
  EXPECT_EQ(mysql_errno(mysql.get()), 3024u) << mysql_error(mysql.get());
  EXPECT_NE(std::string(mysql_error(mysql.get())).find("insert_timeout is 1 s"), std::string::npos)
      << mysql_error(mysql.get());
  EXPECT_EQ(Scalar(mysql.get(), "SELECT count(*) FROM bounds.t"), "0");
  // A statement that ends in time is not touched.
  ASSERT_TRUE(Exec(mysql.get(), "SET query_timeout = 1"));
  EXPECT_EQ(Scalar(mysql.get(), "SELECT count(*) FROM range(1000)"), "1000");
}

// A client killed in the middle of a statement leaves nothing running on the server: the
// statement is interrupted within a second, not run to its end for nobody.
TEST_F(ConnectorCTest, AStatementOfAKilledClientIsInterrupted) {
  MysqlPtr admin = Connect();
  ASSERT_NE(admin, nullptr);
  auto running = [&](std::string* id) {
    if (mysql_query(admin.get(), "SHOW FULL PROCESSLIST") != 0) return false;
    MYSQL_RES* res = mysql_store_result(admin.get());
    bool found = false;
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      if (row[7] != nullptr && std::string(row[7]).find("killed_client") != std::string::npos) {
        found = true;
        if (id != nullptr) *id = row[0];
      }
    }
    mysql_free_result(res);
    return found;
  };
  auto client = testing::SpawnProcess(
      {"/usr/bin/mariadb", "--no-defaults", "-h127.0.0.1",
       "-P" + std::to_string(server().mysql_port()), "-uroot", "-e",
       "WITH RECURSIVE killed_client(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM killed_client) "
       "SELECT count(*) FROM killed_client"},
      {}, "/dev/null", "/dev/null");
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::string id;
  ASSERT_TRUE(testing::WaitFor([&] { return running(&id); }));
  ASSERT_EQ(::kill(*client, SIGKILL), 0);
  int wait_status = 0;
  ASSERT_TRUE(testing::WaitForExit(*client, std::chrono::seconds(10), &wait_status));
  EXPECT_TRUE(testing::WaitFor([&] { return !running(nullptr); }, std::chrono::seconds(1)))
      << "connection " << id << " still runs its statement a second after its client died";
}

TEST_F(ConnectorCTest, MetadataAffectedRowsMultiResultsAndErrors) {
  MysqlPtr mysql = Connect(CLIENT_MULTI_STATEMENTS);
  ASSERT_NE(mysql, nullptr);
  ASSERT_TRUE(Exec(mysql.get(),
                   "CREATE DATABASE meta; USE meta; CREATE TABLE t (a INTEGER, "
                   "d DECIMAL(9,2), ts TIMESTAMP, b BOOLEAN, bl BLOB, u UINTEGER)"));
  ASSERT_EQ(mysql_query(mysql.get(),
                        "INSERT INTO t VALUES (1, 2.50, TIMESTAMP '2024-01-02 03:04:05', true, "
                        "'\\x00\\xff'::BLOB, 7), (2, NULL, NULL, false, NULL, NULL)"),
            0)
      << mysql_error(mysql.get());
  EXPECT_EQ(mysql_affected_rows(mysql.get()), 2u);
  EXPECT_STREQ(mysql_get_server_info(mysql.get()) + 0, "5.7.99-millrace-0.1.0");

  ASSERT_EQ(mysql_query(mysql.get(), "SELECT * FROM t ORDER BY a"), 0);
  MYSQL_RES* res = mysql_store_result(mysql.get());
  ASSERT_NE(res, nullptr);
  MYSQL_FIELD* fields = mysql_fetch_fields(res);
  EXPECT_EQ(fields[0].type, MYSQL_TYPE_LONG);
  EXPECT_EQ(fields[1].type, MYSQL_TYPE_NEWDECIMAL);
  EXPECT_EQ(fields[1].decimals, 2u);
  EXPECT_EQ(fields[2].type, MYSQL_TYPE_DATETIME);
  EXPECT_EQ(fields[3].type, MYSQL_TYPE_TINY);
  EXPECT_EQ(fields[4].type, MYSQL_TYPE_BLOB);
  EXPECT_EQ(fields[4].charsetnr, 63u);
  EXPECT_TRUE(fields[5].flags & UNSIGNED_FLAG);
  EXPECT_STREQ(fields[0].db, "meta");
  MYSQL_ROW row = mysql_fetch_row(res);
  unsigned long* lengths = mysql_fetch_lengths(res);
  EXPECT_STREQ(row[1], "2.50");
  EXPECT_STREQ(row[2], "2024-01-02 03:04:05");
  EXPECT_STREQ(row[3], "1");
  EXPECT_EQ(std::string(row[4], lengths[4]), std::string("\x00\xff", 2));
  row = mysql_fetch_row(res);
  EXPECT_EQ(row[1], nullptr);
  EXPECT_EQ(row[4], nullptr);
  EXPECT_STREQ(row[3], "0");
  mysql_free_result(res);

  // Several statements, several results.
  ASSERT_EQ(
      mysql_query(mysql.get(), "SELECT 1; UPDATE t SET a = a + 10; SELECT a FROM t ORDER BY a"), 0);
  const std::vector<std::string> seen = AllResults(mysql.get());
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "affected 2", "11", "12"}));

  // The client library escapes for the server's string syntax (NO_BACKSLASH_ESCAPES).
  const std::string tricky = R"(it's a \ back'slash\' "quoted")";
  std::string escaped(tricky.size() * 2 + 1, '\0');
  escaped.resize(
      mysql_real_escape_string(mysql.get(), escaped.data(), tricky.data(), tricky.size()));
  EXPECT_EQ(Scalar(mysql.get(), "SELECT '" + escaped + "'"), tricky);

  EXPECT_NE(mysql_query(mysql.get(), "SELECT * FROM missing"), 0);
  EXPECT_EQ(mysql_errno(mysql.get()), 1146u);
  EXPECT_STREQ(mysql_sqlstate(mysql.get()), "42S02");
  EXPECT_NE(mysql_select_db(mysql.get(), "nope"), 0);
  EXPECT_EQ(mysql_errno(mysql.get()), 1049u);
  EXPECT_EQ(mysql_ping(mysql.get()), 0);
}

TEST(ConnectorCAuthTest, PasswordsAndTheCachingSha2Switch) {
  mysql_library_init(0, nullptr, nullptr);
  testing::TempDir dir;
  auto server = ServerProcess::Start(dir.path(), {{}, {"MILLRACE_ROOT_PASSWORD=pa55word"}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::string error;
  EXPECT_NE(ConnectorC((*server)->mysql_port(), "pa55word", 0, nullptr, &error), nullptr) << error;
  EXPECT_EQ(ConnectorC((*server)->mysql_port(), "nope", 0, nullptr, &error), nullptr);
  EXPECT_EQ(error.rfind("1045 (28000): Access denied for user 'root'", 0), 0u) << error;

  MysqlPtr mysql(mysql_init(nullptr));
  mysql_optionsv(mysql.get(), MYSQL_DEFAULT_AUTH, "caching_sha2_password");
  ASSERT_NE(mysql_real_connect(mysql.get(), "127.0.0.1", "root", "pa55word", nullptr,
                               (*server)->mysql_port(), nullptr, 0),
            nullptr)
      << mysql_error(mysql.get());
  EXPECT_EQ(Scalar(mysql.get(), "SELECT CURRENT_USER()"), "root@%");
}

}  // namespace
}  // namespace millrace::server
