// The gate end to end: the real `millrace serve` and MariaDB Connector/C, over the text
// protocol (one statement and multi-statements) and server-side prepared statements. Each
// attempt is made as a user with no grants (and, for the server's own `__millrace`, as root):
// statements shaped so that a reader who closed comments otherwise than DuckDB would check a
// harmless statement while DuckDB ran a hidden one, EXPLAIN [ANALYZE] of what may not run,
// reads of a table without a grant, reads and writes of `__millrace`, a macro, a file in the
// work directory. Every one is refused with a MySQL error, nothing leaks or changes, and the
// connection goes on serving.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "access/access_e2e_util.h"

namespace millrace::access {
namespace {

constexpr const char* kRootPassword = "Gate-Root-1";
constexpr const char* kNobodyPassword = "Gate-Nobody-2";

struct StmtCloser {
  void operator()(MYSQL_STMT* stmt) const { mysql_stmt_close(stmt); }
};
using StmtPtr = std::unique_ptr<MYSQL_STMT, StmtCloser>;

// Runs `sql` as a server-side prepared statement (COM_STMT_PREPARE, then EXECUTE): OK when
// both succeed, else the error as "errno: message".
Status RunPrepared(MYSQL* mysql, const std::string& sql) {
  StmtPtr stmt(mysql_stmt_init(mysql));
  if (mysql_stmt_prepare(stmt.get(), sql.data(), sql.size()) != 0 ||
      mysql_stmt_execute(stmt.get()) != 0) {
    return Status::Internal(std::to_string(mysql_stmt_errno(stmt.get())) + ": " +
                            mysql_stmt_error(stmt.get()));
  }
  mysql_stmt_store_result(stmt.get());
  return Status::Ok();
}

// Runs a multi-statement text; returns the number of statements that succeeded before the
// first error (all of them when none failed) and sets `*error` to that error.
int RunMulti(MYSQL* mysql, const std::string& sql, std::string* error) {
  int ok = 0;
  if (mysql_query(mysql, sql.c_str()) != 0) {
    *error = std::to_string(mysql_errno(mysql)) + ": " + mysql_error(mysql);
    return ok;
  }
  while (true) {
    ++ok;
    if (MYSQL_RES* res = mysql_store_result(mysql); res != nullptr) mysql_free_result(res);
    const int next = mysql_next_result(mysql);
    if (next == -1) return ok;
    if (next > 0) {
      *error = std::to_string(mysql_errno(mysql)) + ": " + mysql_error(mysql);
      return ok;
    }
  }
}

class GateE2ETest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = E2EServer::Start(kRootPassword);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    for (const std::string& sql :
         {std::string("CREATE DATABASE d"), std::string("CREATE TABLE d.secret (v VARCHAR)"),
          std::string("INSERT INTO d.secret VALUES ('hidden')"),
          "CREATE USER nobody IDENTIFIED BY '" + std::string(kNobodyPassword) + "'"}) {
      ASSERT_TRUE(Query(server_->root.get(), sql).ok()) << sql;
    }
    auto path =
        Query(server_->root.get(), "SELECT path FROM duckdb_databases() WHERE NOT internal");
    ASSERT_TRUE(path.ok() && !path->empty()) << path.status().ToString();
    work_dir_ = std::filesystem::path((*path)[0][0]).parent_path().string() + "/work";
  }
  static void TearDownTestSuite() { server_.reset(); }

  MysqlPtr Login(const std::string& user, unsigned long flags = 0) {
    std::string error;
    MysqlPtr mysql =
        server::ConnectorC(server_->mysql_port(), user == "root" ? kRootPassword : kNobodyPassword,
                           flags, nullptr, &error, nullptr, user);
    EXPECT_NE(mysql, nullptr) << error;
    return mysql;
  }

  // `sql` fails with a MySQL error over the text protocol and as a prepared statement, and
  // the connection still answers.
  void ExpectRefused(MYSQL* mysql, const std::string& sql) {
    auto text = Query(mysql, sql);
    EXPECT_FALSE(text.ok()) << "text protocol ran: " << sql;
    const Status prepared = RunPrepared(mysql, sql);
    EXPECT_FALSE(prepared.ok()) << "a prepared statement ran: " << sql;
    for (const Status& status : {text.status(), prepared}) {
      if (status.ok()) continue;
      const int code = std::stoi(status.message());
      EXPECT_GE(code, 1000) << sql << ": " << status.message();
      EXPECT_LT(code, 2000) << sql << ": " << status.message();
    }
    auto alive = Query(mysql, "SELECT 42");
    ASSERT_TRUE(alive.ok()) << "after " << sql << ": " << alive.status().ToString();
  }

  // Nothing the attempts could have changed has changed.
  void ExpectUnchanged() {
    auto secret = Query(server_->root.get(), "SELECT v FROM d.secret");
    ASSERT_TRUE(secret.ok()) << secret.status().ToString();
    EXPECT_EQ(*secret, (Rows{{"hidden"}}));
    auto grants = Query(server_->root.get(), "SHOW GRANTS FOR nobody");
    ASSERT_TRUE(grants.ok()) << grants.status().ToString();
    for (const auto& row : *grants) {
      for (const std::string& cell : row)
        EXPECT_EQ(cell.find("ADMIN"), std::string::npos);
    }
    auto macros = Query(server_->root.get(),
                        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'leak'");
    ASSERT_TRUE(macros.ok()) << macros.status().ToString();
    EXPECT_EQ(*macros, (Rows{{"0"}}));
    EXPECT_FALSE(std::filesystem::exists(work_dir_ + "/x.csv"));
  }

  static std::unique_ptr<E2EServer> server_;
  static std::string work_dir_;
};

std::unique_ptr<E2EServer> GateE2ETest::server_;
std::string GateE2ETest::work_dir_;

TEST_F(GateE2ETest, CommentNestingHidesNothing) {
  MysqlPtr nobody = Login("nobody");
  ASSERT_NE(nobody, nullptr);
  // Read with comments closed at their first "*/", each of these is a harmless SELECT 1 and a
  // comment; DuckDB nests comments and reads the statement after them.
  for (const std::string& hidden :
       {std::string("DELETE FROM d.secret"), std::string("SELECT * FROM d.secret"),
        std::string("INSERT INTO d.secret VALUES ('planted')"),
        std::string("SELECT * FROM \"__millrace\".users"),
        std::string("DELETE FROM \"__millrace\".audit"), std::string("CREATE MACRO leak() AS 1"),
        "COPY (SELECT 1) TO '" + work_dir_ + "/x.csv'"}) {
    for (const std::string& shape :
         {std::string("EXPLAIN ANALYZE /* /* */ SELECT 1 -- */ "),
          std::string("EXPLAIN /* /* */ SELECT 1 -- */ "), std::string("/* /* */ SELECT 1 -- */ "),
          std::string("EXPLAIN ANALYZE /* /* */ SELECT 1 /* */ "),
          std::string("EXPLAIN ANALYZE ")}) {
      ExpectRefused(nobody.get(), shape + hidden);
    }
  }
  ExpectUnchanged();
}

TEST_F(GateE2ETest, MultiStatementsCheckEveryPieceAsDuckDbSplitsIt) {
  MysqlPtr nobody = Login("nobody", CLIENT_MULTI_STATEMENTS);
  ASSERT_NE(nobody, nullptr);
  std::string error;
  // The second statement is refused; the first ran.
  EXPECT_EQ(RunMulti(nobody.get(), "SELECT 1; SELECT * FROM d.secret", &error), 1);
  EXPECT_NE(error.find("1142"), std::string::npos) << error;
  // DuckDB reads one SELECT and a comment here: so does the server (nothing after it runs).
  error.clear();
  EXPECT_EQ(RunMulti(nobody.get(), "SELECT 1 /* /* */ ; DELETE FROM d.secret; -- */", &error), 1);
  EXPECT_EQ(error, "");
  // A text that ends inside a comment is refused whole, before any piece runs.
  error.clear();
  EXPECT_EQ(RunMulti(nobody.get(), "SELECT 1; /* /* */ DELETE FROM d.secret", &error), 0);
  EXPECT_NE(error.find("1064"), std::string::npos) << error;
  error.clear();
  EXPECT_EQ(RunMulti(nobody.get(), "SELECT 1; INSERT INTO d.secret VALUES ('x'); SELECT 2", &error),
            1);
  EXPECT_NE(error.find("1142"), std::string::npos) << error;
  ExpectUnchanged();
}

TEST_F(GateE2ETest, UngrantedTablesMacrosAndWorkDirectoryAreRefused) {
  MysqlPtr nobody = Login("nobody");
  ASSERT_NE(nobody, nullptr);
  for (const std::string& sql :
       {std::string("SELECT * FROM d.secret"), std::string("EXPLAIN SELECT * FROM d.secret"),
        std::string("EXPLAIN ANALYZE SELECT * FROM d.secret"),
        std::string("SELECT (SELECT max(v) FROM d.secret)"),
        std::string("INSERT INTO d.secret VALUES ('planted')"),
        std::string("EXPLAIN ANALYZE INSERT INTO d.secret VALUES ('planted')"),
        std::string("CREATE MACRO leak() AS 1"), std::string("CREATE MACRO d.leak() AS 1"),
        "COPY (SELECT 1) TO '" + work_dir_ + "/x.csv'",
        "EXPLAIN ANALYZE COPY (SELECT 1) TO '" + work_dir_ + "/x.csv'"}) {
    ExpectRefused(nobody.get(), sql);
  }
  ExpectUnchanged();
}

TEST_F(GateE2ETest, MillraceCatalogIsTheServersOnEveryPath) {
  MysqlPtr root = Login("root");
  MysqlPtr nobody = Login("nobody");
  ASSERT_NE(root, nullptr);
  ASSERT_NE(nobody, nullptr);
  for (MYSQL* mysql : {root.get(), nobody.get()}) {
    for (const std::string& sql : {
             std::string("SELECT name, password_hash FROM \"__millrace\".users"),
             std::string("SELECT * FROM __millrace.jobs"),
             std::string("SELECT * FROM __millrace.grants"),
             std::string("SELECT * FROM __millrace.audit"),
             std::string("EXPLAIN ANALYZE SELECT * FROM __millrace.users"),
             std::string("INSERT INTO __millrace.grants SELECT * FROM __millrace.grants"),
             std::string("DELETE FROM __millrace.audit"),
             std::string("CREATE MACRO __millrace.leak() AS 1"),
             // Unicode escapes name the schema without its letters: DuckDB's plan still says
             // which table is read.
             std::string("SELECT * FROM U&\"\\005f\\005fmillrace\".users"),
         }) {
      ExpectRefused(mysql, sql);
    }
  }
  ExpectUnchanged();
}

}  // namespace
}  // namespace millrace::access
