#include "engine/database.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/duckdb_status.h"
#include "engine/engine_test_util.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::engine {
namespace {

using millrace::testing::TempDir;

TEST(DatabaseTest, ReopenedFileDatabaseKeepsCommittedRows) {
  TempDir dir;
  const std::string path = dir.Join("db.duckdb");
  {
    auto db = OpenOrDie({.path = path});
    auto conn = ConnectOrDie(*db);
    ASSERT_TRUE(conn->Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
    ASSERT_TRUE(conn->Execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')").ok());
  }
  auto db = OpenOrDie({.path = path});
  auto conn = ConnectOrDie(*db);
  EXPECT_EQ(QueryRows(*conn, "SELECT id, name FROM t ORDER BY id"),
            (std::vector<std::vector<std::string>>{{"1", "one"}, {"2", "two"}}));
}

TEST(DatabaseTest, RolledBackAndAbandonedTransactionsLeaveNothing) {
  TempDir dir;
  const std::string path = dir.Join("db.duckdb");
  {
    auto db = OpenOrDie({.path = path});
    auto conn = ConnectOrDie(*db);
    ASSERT_TRUE(conn->Execute("CREATE TABLE t (id INTEGER)").ok());
    {
      auto txn = conn->Begin();
      ASSERT_TRUE(txn.ok());
      ASSERT_TRUE(conn->Execute("INSERT INTO t VALUES (1)").ok());
      ASSERT_TRUE(txn->Rollback().ok());
    }
    {
      auto txn = conn->Begin();
      ASSERT_TRUE(txn.ok());
      ASSERT_TRUE(conn->Execute("INSERT INTO t VALUES (2)").ok());
      // Visible inside its own transaction ...
      EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM t"), "1");
    }  // ... and gone when abandoned.
    EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM t"), "0");
    {
      auto txn = conn->Begin();
      ASSERT_TRUE(txn.ok());
      ASSERT_TRUE(conn->Execute("INSERT INTO t VALUES (3)").ok());
      ASSERT_TRUE(txn->Commit().ok());
      EXPECT_FALSE(txn->active());
      EXPECT_EQ(txn->Commit().code(), StatusCode::kFailedPrecondition);
    }
  }
  auto db = OpenOrDie({.path = path});
  auto conn = ConnectOrDie(*db);
  EXPECT_EQ(QueryRows(*conn, "SELECT id FROM t"), (std::vector<std::vector<std::string>>{{"3"}}));
}

TEST(DatabaseTest, UncommittedWorkIsInvisibleToOtherConnections) {
  auto db = OpenOrDie({});
  auto writer = ConnectOrDie(*db);
  auto reader = ConnectOrDie(*db);
  ASSERT_TRUE(writer->Execute("CREATE TABLE t (id INTEGER)").ok());
  auto txn = writer->Begin();
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE(writer->Execute("INSERT INTO t VALUES (1)").ok());
  EXPECT_EQ(QueryValue(*reader, "SELECT count(*) FROM t"), "0");
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(QueryValue(*reader, "SELECT count(*) FROM t"), "1");
}

TEST(DatabaseTest, HasTableFindsTablesAsTheCatalogResolvesThem) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  auto other = ConnectOrDie(*db);
  ASSERT_TRUE(conn->Execute("CREATE SCHEMA s; CREATE TABLE s.Orders (id INTEGER); "
                            "CREATE VIEW s.v AS SELECT 1")
                  .ok());
  EXPECT_TRUE(conn->HasTable("s", "Orders"));
  EXPECT_TRUE(conn->HasTable("S", "ORDERS"));
  EXPECT_FALSE(conn->HasTable("s", "v"));  // a view
  EXPECT_FALSE(conn->HasTable("s", "missing"));
  EXPECT_FALSE(conn->HasTable("nowhere", "Orders"));
  EXPECT_FALSE(conn->HasTable("main", "Orders"));
  // In the connection's own transaction: another connection sees it only once committed.
  auto txn = conn->Begin();
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE(conn->Execute("CREATE TABLE s.fresh (id INTEGER)").ok());
  EXPECT_TRUE(conn->HasTable("s", "fresh"));
  EXPECT_FALSE(other->HasTable("s", "fresh"));
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_TRUE(other->HasTable("s", "fresh"));
}

TEST(DatabaseTest, DuckDBErrorsArriveAsStatusWithDuckDBsMessage) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);

  Status missing = conn->Execute("SELECT * FROM no_such_table");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("Catalog Error"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("no_such_table"), std::string::npos) << missing.message();

  auto syntax = conn->Query("SELEC 1");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(syntax.status().message().find("Parser Error"), std::string::npos);

  ASSERT_TRUE(conn->Execute("CREATE TABLE t (id INTEGER PRIMARY KEY)").ok());
  Status exists = conn->Execute("CREATE TABLE t (id INTEGER)");
  EXPECT_EQ(exists.code(), StatusCode::kAlreadyExists) << exists.ToString();
  ASSERT_TRUE(conn->Execute("INSERT INTO t VALUES (1)").ok());
  Status duplicate = conn->Execute("INSERT INTO t VALUES (1)");
  EXPECT_EQ(duplicate.code(), StatusCode::kFailedPrecondition) << duplicate.ToString();
  EXPECT_NE(duplicate.message().find("Constraint Error"), std::string::npos);

  // An error raised while rows are produced arrives from Next().
  auto result = conn->Query("SELECT CAST('x' || i AS INTEGER) FROM range(10) t(i)");
  Status produced = result.ok() ? (*result)->Next().status() : result.status();
  EXPECT_FALSE(produced.ok());
  EXPECT_NE(produced.message().find("Conversion Error"), std::string::npos) << produced.message();
}

TEST(DatabaseTest, OpenErrorsNameThePath) {
  auto db = Database::Open({.path = "/proc/definitely/not/here.duckdb"});
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("/proc/definitely/not/here.duckdb"), std::string::npos);
  auto bad_setting = Database::Open({.memory_limit = "lots"});
  ASSERT_FALSE(bad_setting.ok());
  EXPECT_NE(bad_setting.status().message().find("memory_limit"), std::string::npos);
}

TEST(DatabaseTest, OptionsAreApplied) {
  auto db = OpenOrDie({.memory_limit = "256MB", .threads = 2});
  auto conn = ConnectOrDie(*db);
  EXPECT_EQ(QueryValue(*conn, "SELECT current_setting('threads')"), "2");
  EXPECT_EQ(QueryValue(*conn, "SELECT current_setting('memory_limit')"), "244.1 MiB");
}

TEST(DatabaseTest, EightConcurrentWritersLoseNoRow) {
  TempDir dir;
  auto db = OpenOrDie({.path = dir.Join("db.duckdb")});
  auto setup = ConnectOrDie(*db);
  ASSERT_TRUE(setup->Execute("CREATE TABLE t (writer INTEGER, seq INTEGER)").ok());
  constexpr int kThreads = 8;
  constexpr int kRowsPerThread = 500;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      auto conn = db->Connect();
      if (!conn.ok()) {
        ++failures;
        return;
      }
      auto insert = (*conn)->Prepare("INSERT INTO t VALUES ($1, $2)");
      if (!insert.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < kRowsPerThread; ++i) {
        bool ok = (*insert)->BindInt64(1, w).ok() && (*insert)->BindInt64(2, i).ok();
        auto result = ok ? (*insert)->Execute()
                         : Result<std::unique_ptr<QueryResult>>(Status::Internal("bind failed"));
        if (!result.ok() || (*result)->rows_changed() != 1) ++failures;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(QueryValue(*setup, "SELECT count(*) FROM t"),
            std::to_string(kThreads * kRowsPerThread));
  EXPECT_EQ(QueryValue(*setup, "SELECT count(DISTINCT (writer, seq)) FROM t"),
            std::to_string(kThreads * kRowsPerThread));
  EXPECT_EQ(
      QueryValue(*setup, "SELECT min(c) = max(c) FROM (SELECT count(*) c FROM t GROUP BY writer)"),
      "true");
}

TEST(DatabaseTest, PreparedStatementsBindEveryKind) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  ASSERT_TRUE(
      conn->Execute("CREATE TABLE t (b BOOLEAN, i BIGINT, d DOUBLE, s VARCHAR, x BLOB)").ok());
  auto insert = conn->Prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)");
  ASSERT_TRUE(insert.ok()) << insert.status().ToString();
  EXPECT_EQ((*insert)->parameter_count(), 5u);
  ASSERT_TRUE((*insert)->BindBool(1, true).ok());
  ASSERT_TRUE((*insert)->BindInt64(2, -42).ok());
  ASSERT_TRUE((*insert)->BindDouble(3, 2.5).ok());
  ASSERT_TRUE((*insert)->BindString(4, std::string_view("it's \0 here", 11)).ok());
  ASSERT_TRUE((*insert)->BindBlob(5, std::string_view("\x01\x02", 2)).ok());
  ASSERT_TRUE((*insert)->Execute().ok());
  ASSERT_TRUE((*insert)->BindNull(2).ok());
  ASSERT_TRUE((*insert)->Execute().ok());
  EXPECT_FALSE((*insert)->BindInt64(9, 1).ok());

  auto select = conn->Prepare("SELECT b, i, d, s, x FROM t WHERE i = $1");
  ASSERT_TRUE(select.ok());
  ASSERT_TRUE((*select)->BindInt64(1, -42).ok());
  auto result = (*select)->Execute();
  ASSERT_TRUE(result.ok());
  auto chunk = (*result)->Next();
  ASSERT_TRUE(chunk.ok() && *chunk != nullptr);
  DataChunk& c = **chunk;
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c.GetBool(0, 0));
  EXPECT_EQ(c.GetInt64(1, 0), -42);
  EXPECT_EQ(c.GetDouble(2, 0), 2.5);
  EXPECT_EQ(c.GetString(3, 0), std::string_view("it's \0 here", 11));
  EXPECT_EQ(c.GetString(4, 0), std::string_view("\x01\x02", 2));
  EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM t WHERE i IS NULL"), "1");
}

// Lists bound as one parameter each turn back into rows with unnest, in step.
TEST(DatabaseTest, ListParametersBindManyRowsAtOnce) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  ASSERT_TRUE(conn->Execute("CREATE TABLE t (s VARCHAR, i BIGINT, b BOOLEAN)").ok());
  auto insert = conn->Prepare(
      "INSERT INTO t SELECT unnest(?::VARCHAR[]), unnest(?::BIGINT[]), unnest(?::BOOLEAN[])");
  ASSERT_TRUE(insert.ok()) << insert.status().ToString();
  ASSERT_TRUE((*insert)->BindStringList(1, {"a'b", std::string("n\0ul", 5), "", "\xc3\xa9"}).ok());
  ASSERT_TRUE((*insert)->BindInt64List(2, {1, -2, INT64_MAX, 0}).ok());
  ASSERT_TRUE((*insert)->BindBoolList(3, {true, false, true, false}).ok());
  ASSERT_TRUE((*insert)->Execute().ok());
  EXPECT_EQ(QueryValue(*conn,
                       "SELECT string_agg(i::VARCHAR || ':' || b::VARCHAR || ':' || "
                       "length(s)::VARCHAR, ',' ORDER BY i) FROM t"),
            "-2:false:5,0:false:1,1:true:3,9223372036854775807:true:0");
  EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM t WHERE s = 'a''b'"), "1");
  // Empty lists insert nothing.
  ASSERT_TRUE((*insert)->BindStringList(1, {}).ok());
  ASSERT_TRUE((*insert)->BindInt64List(2, {}).ok());
  ASSERT_TRUE((*insert)->BindBoolList(3, {}).ok());
  ASSERT_TRUE((*insert)->Execute().ok());
  EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM t"), "4");
  EXPECT_FALSE((*insert)->BindInt64List(4, {1}).ok());
}

TEST(DatabaseTest, InterruptCancelsARunningStatement) {
  auto db = OpenOrDie({.threads = 1});
  auto conn = ConnectOrDie(*db);
  std::atomic<bool> done{false};
  Status status;
  std::thread runner([&] {
    status = conn->Execute(
        "SELECT count(*) FROM range(1000000000000) a, range(10) b WHERE a.range % 7 = b.range");
    done = true;
  });
  // One interrupt is enough, wherever it lands: before the statement starts it stays pending.
  conn->Interrupt();
  runner.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_TRUE(IsDuckDbError(status, DUCKDB_ERROR_INTERRUPT)) << status.ToString();
  conn->ClearInterrupt();
  EXPECT_TRUE(conn->Execute("SELECT 1").ok());
}

// DuckDB forgets an interrupt when its next statement starts; the connection does not: an
// interrupt cancels every statement started after it, by every entry point, until cleared,
// and a transaction still rolls back meanwhile.
TEST(DatabaseTest, AnInterruptStaysPendingUntilCleared) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  ASSERT_TRUE(conn->Execute("CREATE TABLE t (v INTEGER)").ok());
  auto prepared = conn->Prepare("SELECT ?::INTEGER + 1");
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  auto transaction = conn->Begin();
  ASSERT_TRUE(transaction.ok()) << transaction.status().ToString();
  ASSERT_TRUE(conn->Execute("INSERT INTO t VALUES (1)").ok());

  conn->Interrupt();
  auto expect_cancelled = [](const Status& status) {
    EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
    EXPECT_TRUE(IsDuckDbError(status, DUCKDB_ERROR_INTERRUPT)) << status.ToString();
  };
  expect_cancelled(conn->Execute("INSERT INTO t VALUES (2)"));
  expect_cancelled(conn->Query("SELECT 1").status());
  expect_cancelled(conn->Prepare("SELECT 1").status());
  expect_cancelled(conn->PrepareOne("SELECT 1").status());
  ASSERT_TRUE((*prepared)->BindInt64(1, 41).ok());
  expect_cancelled((*prepared)->Execute().status());
  EXPECT_TRUE(transaction->Rollback().ok());

  conn->ClearInterrupt();
  EXPECT_EQ(QueryValue(*conn, "SELECT count(*) FROM t"), "0");
  auto result = (*prepared)->Execute();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto chunk = (*result)->Next();
  ASSERT_TRUE(chunk.ok() && *chunk != nullptr);
  EXPECT_EQ((*chunk)->GetInt64(0, 0), 42);
}

TEST(DatabaseTest, QueryRunsEveryStatementAndStreamsTheLast) {
  auto db = OpenOrDie({});
  auto conn = ConnectOrDie(*db);
  EXPECT_EQ(QueryRows(*conn, "CREATE TABLE t AS SELECT 7 AS v; SELECT v * 2 FROM t"),
            (std::vector<std::vector<std::string>>{{"14"}}));
  auto insert = conn->Query("INSERT INTO t SELECT range FROM range(5)");
  ASSERT_TRUE(insert.ok());
  EXPECT_FALSE((*insert)->returns_rows());
  EXPECT_EQ((*insert)->rows_changed(), 5);
}

TEST(DatabaseTest, QuotingHelpers) {
  EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(QuoteLiteral("it's"), "'it''s'");
  EXPECT_EQ(LibraryVersion(), "v1.4.4");
}

// The backstop behind the sandbox (engine::Database::LockDown), as DuckDB 1.4.4 enforces it.
TEST(DatabaseTest, LockDownConfinesFilesAndFreezesSettings) {
  TempDir dir;
  const std::string work = dir.Join("work");
  std::filesystem::create_directories(work);
  {
    std::ofstream(work + "/in.csv") << "a\n1\n";
    std::ofstream(dir.Join("outside.csv")) << "a\n2\n";
  }
  auto db = OpenOrDie({.path = dir.Join("db.duckdb")});
  ASSERT_TRUE(db->LockDown({work}).ok());
  auto conn = ConnectOrDie(*db);
  EXPECT_EQ(QueryValue(*conn, "SELECT a FROM read_csv('" + work + "/in.csv')"), "1");
  for (const std::string& sql :
       {"SELECT * FROM read_csv('" + dir.Join("outside.csv") + "')",
        std::string("SELECT * FROM read_text('/etc/passwd')"),
        "COPY (SELECT 1) TO '" + dir.Join("out.csv") + "'", std::string("SET threads = 1"),
        std::string("RESET enable_external_access"), std::string("SET lock_configuration = false"),
        std::string("INSTALL httpfs")}) {
    EXPECT_FALSE(conn->Execute(sql).ok()) << sql;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.Join("out.csv")));
  // A prefix is not a directory: "work2" is not under "work".
  std::filesystem::create_directories(work + "2");
  std::ofstream(work + "2/x.csv") << "a\n3\n";
  EXPECT_FALSE(conn->Execute("SELECT * FROM read_csv('" + work + "2/x.csv')").ok());
  // What a session still may change.
  EXPECT_TRUE(conn->Execute("CREATE SCHEMA d; SET schema = 'd'").ok());
}

}  // namespace
}  // namespace millrace::engine
