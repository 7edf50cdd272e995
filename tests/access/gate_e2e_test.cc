// The gate end to end: the real `millrace serve` and MariaDB Connector/C, over the text
// protocol (one statement and multi-statements) and server-side prepared statements. Each
// attempt is made as a user with no grants (and, for the server's own `__millrace`, as root):
// statements shaped so that a reader who closed comments otherwise than DuckDB would check a
// harmless statement while DuckDB ran a hidden one, EXPLAIN [ANALYZE] of what may not run,
// reads of a table without a grant, reads and writes of `__millrace`, a macro, a file in the
// work directory. Every one is refused with a MySQL error, nothing leaks or changes, and the
// connection goes on serving.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "access/access_e2e_util.h"
#include "testing/fault_proxy.h"
#include "testing/s3rver.h"
#include "testing/wait_for.h"

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

// An S3() call reading s3://landing/in/*.csv at `endpoint`, with s3rver's keys or none.
std::string S3Source(const std::string& endpoint, bool with_keys) {
  std::string call =
      "S3(\"uri\" = \"s3://landing/in/*.csv\", \"format\" = \"csv\", "
      "\"column_separator\" = \",\", \"s3.endpoint\" = \"" +
      endpoint + "\", \"use_path_style\" = \"true\"";
  if (with_keys) call += ", \"s3.access_key\" = \"S3RVER\", \"s3.secret_key\" = \"S3RVER\"";
  return call + ")";
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
      if (!status.ok()) ExpectServerError(status, sql);
    }
    auto alive = Query(mysql, "SELECT 42");
    ASSERT_TRUE(alive.ok()) << "after " << sql << ": " << alive.status().ToString();
  }

  // Runs `each` on a connection of root, then of the user with no grants.
  void ForRootAndNobody(const std::function<void(MYSQL*)>& each) {
    for (const char* user : {"root", "nobody"}) {
      MysqlPtr mysql = Login(user);
      ASSERT_NE(mysql, nullptr) << user;
      each(mysql.get());
    }
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
  ForRootAndNobody([&](MYSQL* mysql) {
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
  });
  ExpectUnchanged();
}

// The internal databases are refused by the relations a statement names as DuckDB parses them,
// by the database a session asks to use and by a job's target, root's included; their letters
// in a string or inside another name refuse nothing.
TEST_F(GateE2ETest, InternalDatabasesAreRefusedByWhatIsNamedNotByTheirLetters) {
  ForRootAndNobody([&](MYSQL* mysql) {
    for (const std::string& sql : {
             std::string("USE __millrace"),
             std::string("USE __millrace_info"),
             std::string("USE `__MILLRACE_MYSQL_INFO`"),
             std::string("SELECT * FROM __millrace_mysql_info.tables"),
             std::string("SELECT * FROM __millrace_info_stub.tables"),
             std::string("WITH t AS (SELECT * FROM __millrace_info.tables) SELECT * FROM t"),
             std::string("SELECT (SELECT count(*) FROM \"__millrace_info\".schemata)"),
             std::string("SELECT 1 WHERE EXISTS (SELECT 1 FROM __millrace.users)"),
             std::string("CREATE TABLE d.copied AS SELECT * FROM __millrace_info.tables"),
             std::string("CREATE VIEW d.peek AS SELECT * FROM __millrace_mysql_info.columns"),
             std::string("SHOW TABLES FROM __millrace"),
             std::string("SHOW CREATE TABLE __millrace.users"),
             std::string("DESC __millrace.grants"),
             std::string("SHOW COLUMNS FROM __millrace.jobs"),
             std::string("DROP DATABASE __millrace_info"),
             std::string("CREATE TABLE __millrace.planted (k INT) DUPLICATE KEY(k) "
                         "DISTRIBUTED BY HASH(k) BUCKETS 1"),
             "CREATE JOB plant ON STREAMING DO INSERT INTO __millrace.grants SELECT * FROM " +
                 S3Source("http://127.0.0.1:1", true),
         }) {
      ExpectRefused(mysql, sql);
      auto refused = Query(mysql, sql);
      ASSERT_FALSE(refused.ok()) << sql;
      EXPECT_NE(refused.status().message().find("1044: "), std::string::npos)
          << sql << ": " << refused.status().ToString();
    }
    // COM_INIT_DB.
    EXPECT_NE(mysql_select_db(mysql, "__millrace"), 0);
    EXPECT_EQ(mysql_errno(mysql), 1044u) << mysql_error(mysql);
  });
  MysqlPtr root = Login("root");
  MysqlPtr nobody = Login("nobody");
  ASSERT_NE(root, nullptr);
  ASSERT_NE(nobody, nullptr);
  // COM_INIT_DB asks the same as USE: a database the user holds nothing on is refused.
  EXPECT_NE(mysql_select_db(nobody.get(), "d"), 0);
  EXPECT_EQ(mysql_errno(nobody.get()), 1044u) << mysql_error(nobody.get());
  EXPECT_EQ(mysql_select_db(root.get(), "d"), 0) << mysql_error(root.get());
  // Nor is such a user told which databases exist: an unknown one is refused alike.
  EXPECT_NE(mysql_select_db(nobody.get(), "no_such_db"), 0);
  EXPECT_EQ(mysql_errno(nobody.get()), 1044u) << mysql_error(nobody.get());
  EXPECT_NE(mysql_select_db(root.get(), "no_such_db"), 0);
  EXPECT_EQ(mysql_errno(root.get()), 1049u) << mysql_error(root.get());
  // The handshake's database.
  std::string error;
  EXPECT_EQ(server::ConnectorC(server_->mysql_port(), kRootPassword, 0, "__millrace", &error),
            nullptr);
  EXPECT_NE(error.find("1044"), std::string::npos) << error;
  // Their letters elsewhere are only letters.
  auto text = Query(root.get(), "SELECT '__millrace.users' AS __millrace_users");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, (Rows{{"__millrace.users"}}));
  ASSERT_TRUE(Query(root.get(), "CREATE TABLE d.notes__millrace (v INT)").ok());
  auto notes = Query(root.get(), "SELECT count(*) FROM d.notes__millrace");
  ASSERT_TRUE(notes.ok()) << notes.status().ToString();
  EXPECT_EQ(*notes, (Rows{{"0"}}));
  ASSERT_TRUE(Query(root.get(), "DROP TABLE d.notes__millrace").ok());
  auto jobs = Query(root.get(), "SELECT count(*) FROM jobs(\"type\" = \"insert\")");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(*jobs, (Rows{{"0"}}));
  ExpectUnchanged();
}

TEST_F(GateE2ETest, HostFactsAreForAdministrators) {
  MysqlPtr nobody = Login("nobody");
  ASSERT_NE(nobody, nullptr);
  for (const std::string& sql : {std::string("SELECT current_setting('temp_directory')"),
                                 std::string("SELECT current_setting('memory_limit')"),
                                 std::string("SELECT * FROM duckdb_settings()"),
                                 std::string("SELECT (SELECT current_setting('threads'))"),
                                 std::string("SELECT current_schemas(true)")}) {
    ExpectRefused(nobody.get(), sql);
  }
  // VERSION() is MySQL's, answered with the server's version, not DuckDB's library.
  auto version = Query(nobody.get(), "SELECT version() LIKE '%millrace%'");
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, (Rows{{"1"}}));
  auto root = Query(server_->root.get(), "SELECT current_setting('threads') > 0");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(*root, (Rows{{"1"}}));
}

TEST_F(GateE2ETest, LinkLocalEndpointsAreRefused) {
  // Where cloud metadata services answer: neither S3() nor a change stream may go there, root's
  // statements included, unless --allow-endpoint names it.
  const std::string s3 =
      "SELECT * FROM S3(\"uri\" = \"s3://b/x.csv\", \"format\" = \"csv\", "
      "\"s3.endpoint\" = \"http://169.254.169.254\", \"use_path_style\" = \"true\")";
  auto read = Query(server_->root.get(), s3);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("169.254.169.254 is link-local"), std::string::npos)
      << read.status().message();
  ASSERT_TRUE(
      Query(server_->root.get(), "CREATE TABLE d.cdc (id INT PRIMARY KEY, v VARCHAR)").ok());
  for (const std::string& source :
       {std::string("\"type\" = \"postgres\", \"jdbc_url\" = "
                    "\"jdbc:postgresql://169.254.169.254:5432/db\", \"table\" = \"t\""),
        std::string("\"type\" = \"mysql\", \"jdbc_url\" = "
                    "\"jdbc:mysql://169.254.10.1:3306/db\", \"table\" = \"t\"")}) {
    auto job = Query(server_->root.get(),
                     "CREATE JOB linklocal ON STREAMING DO INSERT INTO d.cdc SELECT * FROM "
                     "cdc_stream(" +
                         source + ", \"user\" = \"u\", \"password\" = \"p\")");
    ASSERT_FALSE(job.ok()) << source;
    EXPECT_NE(job.status().message().find("is link-local"), std::string::npos)
        << job.status().message();
  }
}

TEST_F(GateE2ETest, AViewReadsWhatItWasCreatedOver) {
  ASSERT_TRUE(Query(server_->root.get(), "CREATE TABLE main.t (v VARCHAR)").ok());
  ASSERT_TRUE(Query(server_->root.get(), "INSERT INTO main.t VALUES ('main-secret')").ok());
  ASSERT_TRUE(Query(server_->root.get(), "CREATE DATABASE own").ok());
  ASSERT_TRUE(Query(server_->root.get(),
                    "CREATE USER owner IDENTIFIED BY '" + std::string(kNobodyPassword) + "'")
                  .ok());
  ASSERT_TRUE(Query(server_->root.get(),
                    "GRANT SELECT_PRIV, LOAD_PRIV, CREATE_PRIV, DROP_PRIV ON own.* TO owner")
                  .ok());
  MysqlPtr owner = Login("owner");
  ASSERT_NE(owner, nullptr);
  for (const char* sql : {"USE own", "CREATE TABLE t (v VARCHAR)", "INSERT INTO t VALUES ('mine')",
                          "CREATE VIEW v AS SELECT * FROM t WHERE v IS NOT NULL"}) {
    ASSERT_TRUE(Query(owner.get(), sql).ok()) << sql;
  }
  EXPECT_EQ(Query(owner.get(), "SELECT v FROM v").value_or(Rows{}), (Rows{{"mine"}}));
  // The view was stored over own.t, qualified: without it, it reads nothing else.
  ASSERT_TRUE(Query(owner.get(), "DROP TABLE t").ok());
  auto after_drop = Query(owner.get(), "SELECT v FROM v");
  EXPECT_FALSE(after_drop.ok()) << "the view read main.t";
  // A table of the same name in its own database again: the view reads that one.
  ASSERT_TRUE(Query(owner.get(), "CREATE TABLE t (v VARCHAR)").ok());
  ASSERT_TRUE(Query(owner.get(), "INSERT INTO t VALUES ('again')").ok());
  EXPECT_EQ(Query(owner.get(), "SELECT v FROM v").value_or(Rows{}), (Rows{{"again"}}));
  auto definition = Query(server_->root.get(),
                          "SELECT sql FROM duckdb_views() WHERE schema_name = 'own' AND "
                          "view_name = 'v'");
  ASSERT_TRUE(definition.ok() && definition->size() == 1) << definition.status().ToString();
  EXPECT_NE((*definition)[0][0].find("own.t"), std::string::npos) << (*definition)[0][0];
  ASSERT_TRUE(Query(server_->root.get(), "DROP TABLE main.t").ok());
}

// An unqualified name is checked as DuckDB resolves it: a view of the current database before a
// table of the same name in main, which the user may not read.
TEST_F(GateE2ETest, AViewOfTheCurrentDatabaseComesBeforeATableOfMain) {
  for (const std::string& sql :
       {std::string("CREATE TABLE main.w (v VARCHAR)"),
        std::string("INSERT INTO main.w VALUES ('main-secret')"),
        std::string("CREATE DATABASE near"), std::string("CREATE TABLE near.t (v VARCHAR)"),
        std::string("INSERT INTO near.t VALUES ('near')"),
        std::string("CREATE VIEW near.w AS SELECT v FROM near.t"),
        "CREATE USER reader IDENTIFIED BY '" + std::string(kNobodyPassword) + "'",
        std::string("GRANT SELECT_PRIV ON near.* TO reader")}) {
    ASSERT_TRUE(Query(server_->root.get(), sql).ok()) << sql;
  }
  MysqlPtr reader = Login("reader");
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(Query(reader.get(), "USE near").ok());
  auto rows = Query(reader.get(), "SELECT v FROM w");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (Rows{{"near"}}));
  // Without the view, the same name is main's table: refused.
  ASSERT_TRUE(Query(server_->root.get(), "DROP VIEW near.w").ok());
  auto refused = Query(reader.get(), "SELECT v FROM w");
  EXPECT_FALSE(refused.ok()) << "read main.w without a grant";
  ASSERT_TRUE(Query(server_->root.get(), "DROP TABLE main.w").ok());
}

// The guard keeps DuckDB's parse of a statement's text, never a decision: the same text is
// checked anew for each user, after each grant and revoke, and after its name comes to mean
// another relation.
TEST_F(GateE2ETest, ARepeatedStatementIsCheckedAnewEachTime) {
  for (const std::string& sql :
       {std::string("CREATE DATABASE again"), std::string("CREATE TABLE again.t (v VARCHAR)"),
        std::string("INSERT INTO again.t VALUES ('t')"),
        "CREATE USER repeater IDENTIFIED BY '" + std::string(kNobodyPassword) + "'"}) {
    ASSERT_TRUE(Query(server_->root.get(), sql).ok()) << sql;
  }
  const std::string read = "SELECT v FROM again.t";
  MysqlPtr repeater = Login("repeater");
  ASSERT_NE(repeater, nullptr);
  for (int round = 0; round < 2; ++round) {
    auto rows = Query(server_->root.get(), read);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(*rows, (Rows{{"t"}}));
    ExpectRefused(repeater.get(), read);
    ExpectRefused(repeater.get(), "SELECT v FROM AGAIN.T");
    ASSERT_TRUE(Query(server_->root.get(), "GRANT SELECT_PRIV ON again.t TO repeater").ok());
    EXPECT_TRUE(Query(repeater.get(), read).ok()) << "round " << round;
    EXPECT_TRUE(Query(repeater.get(), "SELECT v FROM AGAIN.T").ok()) << "round " << round;
    ASSERT_TRUE(Query(server_->root.get(), "REVOKE SELECT_PRIV ON again.t FROM repeater").ok());
  }
  // Unqualified, the name is the current database's table before main's, which the user may
  // not read.
  ASSERT_TRUE(Query(server_->root.get(), "CREATE TABLE main.t (v VARCHAR)").ok());
  ASSERT_TRUE(Query(server_->root.get(), "GRANT SELECT_PRIV ON again.t TO repeater").ok());
  ASSERT_TRUE(Query(repeater.get(), "USE again").ok());
  auto current = Query(repeater.get(), "SELECT v FROM T");
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  EXPECT_EQ(*current, (Rows{{"t"}}));
  ASSERT_TRUE(Query(server_->root.get(), "DROP TABLE main.t").ok());
  ASSERT_TRUE(Query(server_->root.get(), "REVOKE SELECT_PRIV ON again.t FROM repeater").ok());
  // The same text, now naming a view over a table the user may not read: refused as a view
  // it may not read either, and allowed once granted the view.
  ASSERT_TRUE(Query(server_->root.get(), "DROP TABLE again.t").ok());
  ASSERT_TRUE(Query(server_->root.get(), "CREATE VIEW again.t AS SELECT v FROM d.secret").ok());
  ExpectRefused(repeater.get(), read);
  ASSERT_TRUE(Query(server_->root.get(), "GRANT SELECT_PRIV ON again.t TO repeater").ok());
  auto through_view = Query(repeater.get(), read);
  ASSERT_TRUE(through_view.ok()) << through_view.status().ToString();
  EXPECT_EQ(*through_view, (Rows{{"hidden"}}));
  ASSERT_TRUE(Query(server_->root.get(), "DROP VIEW again.t").ok());
  auto gone = Query(repeater.get(), read);
  EXPECT_FALSE(gone.ok()) << "read a relation that no longer exists";
  ASSERT_TRUE(Query(server_->root.get(), "CREATE TABLE main.t (v VARCHAR)").ok());
  ExpectRefused(repeater.get(), "SELECT v FROM t");  // now main's: no grant there
  ASSERT_TRUE(Query(server_->root.get(), "DROP TABLE main.t").ok());
}

// Job statements: a user with LOAD_PRIV on one table, through CREATE JOB, ALTER JOB and
// EXPLAIN CREATE JOB, tries to read what it may not.
class JobGateE2ETest : public GateE2ETest {
 protected:
  static void SetUpTestSuite() {
    GateE2ETest::SetUpTestSuite();
    auto s3 = testing::S3rver::Start({"landing"});
    ASSERT_TRUE(s3.ok()) << s3.status().ToString();
    s3_ = std::move(s3).value();
    ASSERT_TRUE(s3_->PutObject("landing", "in/a.csv", "1,one\n").ok());
    for (const std::string& sql :
         {std::string("CREATE TABLE d.target (v VARCHAR)"),
          "CREATE USER loader IDENTIFIED BY '" + std::string(kNobodyPassword) + "'",
          std::string("GRANT LOAD_PRIV ON d.target TO loader")}) {
      ASSERT_TRUE(Query(server_->root.get(), sql).ok()) << sql;
    }
  }
  static void TearDownTestSuite() {
    s3_.reset();
    GateE2ETest::TearDownTestSuite();
  }

  static std::string Source() { return S3Source(s3_->endpoint(), true); }
  static std::string Create(const std::string& name, const std::string& select) {
    return "CREATE JOB " + name + " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO " +
           "INSERT INTO d.target " + select;
  }

  // The SELECTs a job may not run for `loader`: each reads what loader holds no grant on.
  static std::vector<std::string> Escapes(const std::string& database_file) {
    const std::string src = Source();
    return {
        "SELECT x.v FROM " + src + " s JOIN d.secret x ON true",
        "SELECT c1 FROM " + src + " WHERE c1 IN (SELECT v FROM d.secret)",
        "SELECT c1 FROM " + src + " UNION ALL SELECT v FROM d.secret",
        "SELECT c1 FROM " + src + " WHERE EXISTS (SELECT 1 FROM d.secret WHERE v = 'hidden')",
        "SELECT (SELECT max(v) FROM d.secret) FROM " + src,
        "SELECT c1 FROM " + src +
            " UNION ALL SELECT name FROM query_table(concat('__mill', "
            "'race.users'))",
        "SELECT c1 FROM " + src +
            " UNION ALL SELECT * FROM query('SELECT name FROM ' || "
            "'\"__mill' || 'race\".users')",
        "SELECT c1 FROM " + src + " UNION ALL SELECT table_name FROM duckdb_tables()",
        "SELECT c1 FROM " + src + " UNION ALL SELECT current_setting('temp_directory')",
        "SELECT c1 FROM " + src + " UNION ALL SELECT content::VARCHAR FROM read_blob('" +
            database_file + "')",
        "SELECT c1 FROM " + src + " UNION ALL SELECT table_name FROM information_schema.tables",
    };
  }

  static std::string DatabaseFile() {
    auto path =
        Query(server_->root.get(), "SELECT path FROM duckdb_databases() WHERE NOT internal");
    return path.ok() && !path->empty() ? (*path)[0][0] : "";
  }

  static std::unique_ptr<testing::S3rver> s3_;
};

std::unique_ptr<testing::S3rver> JobGateE2ETest::s3_;

TEST_F(JobGateE2ETest, JobStatementsCheckWhatTheSelectReads) {
  MysqlPtr loader = Login("loader");
  ASSERT_NE(loader, nullptr);
  // Its own job, reading only its source: allowed; paused for the ALTERs below.
  ASSERT_TRUE(Query(loader.get(), Create("own", "SELECT c2 FROM " + Source())).ok());
  ASSERT_TRUE(Query(loader.get(), "PAUSE JOB WHERE jobname = 'own'").ok());
  int n = 0;
  for (const std::string& select : Escapes(DatabaseFile())) {
    const std::string name = "escape" + std::to_string(n++);
    auto created = Query(loader.get(), Create(name, select));
    EXPECT_FALSE(created.ok()) << "CREATE JOB ran: " << select;
    auto explained = Query(loader.get(), "EXPLAIN " + Create(name, select));
    EXPECT_FALSE(explained.ok()) << "EXPLAIN CREATE JOB ran: " << select;
    auto altered = Query(loader.get(), "ALTER JOB own DO INSERT INTO d.target " + select);
    EXPECT_FALSE(altered.ok()) << "ALTER JOB ran: " << select;
    for (const auto& result : {created, explained, altered}) {
      if (!result.ok()) ExpectServerError(result.status(), select);
    }
  }
  auto jobs = Query(server_->root.get(),
                    "SELECT Name FROM jobs(\"type\" = \"insert\") WHERE Name LIKE 'escape%'");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_TRUE(jobs->empty());
  // Nothing of the secret reached the target.
  auto target = Query(server_->root.get(), "SELECT count(*) FROM d.target WHERE v = 'hidden'");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(*target, (Rows{{"0"}}));
  // With SELECT_PRIV on the table, the same join is allowed.
  ASSERT_TRUE(Query(server_->root.get(), "GRANT SELECT_PRIV ON d.secret TO loader").ok());
  EXPECT_TRUE(Query(loader.get(), Create("joined", Escapes("")[0])).ok());
  ASSERT_TRUE(Query(server_->root.get(), "REVOKE SELECT_PRIV ON d.secret FROM loader").ok());
  // At its next turn the job is checked again as its definer's, and pauses.
  std::string state;
  EXPECT_TRUE(testing::WaitFor([&] {
    auto rows = Query(server_->root.get(),
                      "SELECT Status, ErrorMsg FROM jobs(\"type\" = \"insert\") WHERE Name = "
                      "'joined'");
    state = rows.ok() && rows->size() == 1 ? (*rows)[0][0] + " " + (*rows)[0][1] : "";
    return state.starts_with("PAUSED");
  })) << state;
  EXPECT_NE(state.find("may no longer run its SELECT"), std::string::npos) << state;
  EXPECT_NE(state.find("SELECT_PRIV command denied to user 'loader'"), std::string::npos) << state;
  ASSERT_TRUE(Query(loader.get(), "DROP JOB WHERE jobname = 'joined'").ok());
  ASSERT_TRUE(Query(loader.get(), "DROP JOB WHERE jobname = 'own'").ok());
  ExpectUnchanged();
}

TEST_F(JobGateE2ETest, AlterByAnotherUserMakesThemTheDefinerCheckedAsSuch) {
  ASSERT_TRUE(Query(server_->root.get(), Create("roots", "SELECT c2 FROM " + Source())).ok());
  ASSERT_TRUE(Query(server_->root.get(), "PAUSE JOB WHERE jobname = 'roots'").ok());
  MysqlPtr loader = Login("loader");
  ASSERT_NE(loader, nullptr);
  // Root may read the secret; loader may not, so loader cannot make root's job read it.
  EXPECT_FALSE(
      Query(loader.get(), "ALTER JOB roots DO INSERT INTO d.target " + Escapes("")[0]).ok());
  auto definer = [&] {
    auto rows = Query(server_->root.get(),
                      "SELECT Definer FROM jobs(\"type\" = \"insert\") WHERE Name = 'roots'");
    return rows.ok() && rows->size() == 1 ? (*rows)[0][0] : rows.status().ToString();
  };
  EXPECT_EQ(definer(), "root");
  // A change loader may make: the job is loader's from now on, and runs with loader's rights.
  ASSERT_TRUE(Query(loader.get(), "ALTER JOB roots PROPERTIES (\"max_interval\" = \"2\")").ok());
  EXPECT_EQ(definer(), "loader");
  ASSERT_TRUE(Query(server_->root.get(), "DROP JOB WHERE jobname = 'roots'").ok());
}

TEST_F(JobGateE2ETest, DryRunsAreAudited) {
  MysqlPtr loader = Login("loader");
  ASSERT_NE(loader, nullptr);
  ASSERT_TRUE(Query(loader.get(), "EXPLAIN " + Create("dry", "SELECT c2 FROM " + Source())).ok());
  auto audited = Query(server_->root.get(),
                       "SELECT User, Kind, Action, Outcome FROM audit_log() WHERE Action = "
                       "'EXPLAIN CREATE JOB' AND Statement LIKE 'EXPLAIN CREATE JOB dry %'");
  ASSERT_TRUE(audited.ok()) << audited.status().ToString();
  ASSERT_EQ(audited->size(), 1u);
  EXPECT_EQ((*audited)[0], (std::vector<std::string>{"loader", "JOB", "EXPLAIN CREATE JOB", "OK"}));
  auto jobs =
      Query(server_->root.get(), "SELECT Name FROM jobs(\"type\" = \"insert\") WHERE Name = 'dry'");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_TRUE(jobs->empty());
}

// A server started with AWS credentials in its environment never signs a user's request with
// them: S3() and a job without keys make anonymous requests, seen by a proxy in front of
// s3rver.
TEST(AmbientCredentialsE2ETest, TheServersEnvironmentSignsNoUserRequest) {
  mysql_library_init(0, nullptr, nullptr);
  auto s3 = testing::S3rver::Start({"landing"});
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  ASSERT_TRUE((*s3)->PutObject("landing", "in/a.csv", "1,one\n").ok());
  auto proxy = testing::FaultProxy::Start({.upstream_port = (*s3)->port()});
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  constexpr const char* kEnvironmentKey = "AKIAFROMTHEENVIRONMENT";
  auto server = E2EServer::Start(kRootPassword, {}, nullptr,
                                 {std::string("AWS_ACCESS_KEY_ID=") + kEnvironmentKey,
                                  "AWS_SECRET_ACCESS_KEY=environment-secret"});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  MYSQL* root = (*server)->root.get();
  const std::string source = S3Source((*proxy)->endpoint(), false);
  // s3rver may answer an anonymous request or refuse it: either way it was not signed.
  (void)Query(root, "SELECT * FROM " + source);
  ASSERT_TRUE(Query(root, "CREATE DATABASE d").ok());
  ASSERT_TRUE(Query(root, "CREATE TABLE d.t (a VARCHAR)").ok());
  ASSERT_TRUE(
      Query(root, "CREATE JOB anon ON STREAMING DO INSERT INTO d.t SELECT c1 FROM " + source).ok());
  const size_t before_job = 1;  // at least the S3() listing
  ASSERT_TRUE(testing::WaitFor([&] { return (*proxy)->requests().size() > before_job; }));
  const std::vector<testing::ProxiedRequest> requests = (*proxy)->requests();
  ASSERT_GE(requests.size(), 2u);
  for (const testing::ProxiedRequest& r : requests) {
    EXPECT_EQ(r.authorization, "") << r.method << " " << r.key;
    EXPECT_EQ(r.authorization.find(kEnvironmentKey), std::string::npos);
  }
  ASSERT_TRUE(Query(root, "DROP JOB WHERE jobname = 'anon'").ok());
}

// One gate: with the gate's fail point set for one user, every path that user can take fails
// at it (the text protocol, multi-statements, a server-side prepared statement, job
// statements, the HTTP API's job actions), while another user's statements run.
TEST(OneGateE2ETest, EveryPathReachesTheGate) {
  mysql_library_init(0, nullptr, nullptr);
  auto s3 = testing::S3rver::Start({"landing"});
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  auto server =
      E2EServer::Start(kRootPassword, {}, nullptr, {"MILLRACE_FAIL_POINTS=gate/tester=error"});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  MYSQL* root = (*server)->root.get();
  const std::string source = S3Source((*s3)->endpoint(), true);
  for (const std::string& sql :
       {std::string("CREATE DATABASE d"), std::string("CREATE TABLE d.t (v VARCHAR)"),
        "CREATE USER tester IDENTIFIED BY '" + std::string(kNobodyPassword) + "'",
        std::string("GRANT SELECT_PRIV, LOAD_PRIV ON d.* TO tester"),
        "CREATE JOB j ON STREAMING DO INSERT INTO d.t SELECT c1 FROM " + source}) {
    ASSERT_TRUE(Query(root, sql).ok()) << sql;
  }
  const std::string kGate = "fail point gate/tester triggered";
  std::string error;
  MysqlPtr tester = server::ConnectorC((*server)->mysql_port(), kNobodyPassword,
                                       CLIENT_MULTI_STATEMENTS, nullptr, &error, nullptr, "tester");
  ASSERT_NE(tester, nullptr) << error;
  auto expect_gate = [&](const Status& status, const std::string& path) {
    EXPECT_FALSE(status.ok()) << path << " did not reach the gate";
    EXPECT_NE(status.message().find(kGate), std::string::npos) << path << ": " << status.message();
  };
  expect_gate(Query(tester.get(), "SELECT v FROM d.t").status(), "text");
  error.clear();
  EXPECT_EQ(RunMulti(tester.get(), "SELECT 1; SELECT 2", &error), 0);
  EXPECT_NE(error.find(kGate), std::string::npos) << "multi-statements: " << error;
  expect_gate(RunPrepared(tester.get(), "SELECT v FROM d.t"), "prepared");
  expect_gate(Query(tester.get(), "PAUSE JOB WHERE jobname = 'j'").status(), "PAUSE JOB");
  expect_gate(
      Query(tester.get(), "CREATE JOB k ON STREAMING DO INSERT INTO d.t SELECT c1 FROM " + source)
          .status(),
      "CREATE JOB");
  expect_gate(Query(tester.get(),
                    "EXPLAIN CREATE JOB k ON STREAMING DO INSERT INTO d.t SELECT "
                    "c1 FROM " +
                        source)
                  .status(),
              "EXPLAIN CREATE JOB");
  httplib::Client http("127.0.0.1", (*server)->server->http_port());
  http.set_basic_auth("tester", kNobodyPassword);
  auto paused = http.Post("/api/jobs/j/pause", "", "application/json");
  ASSERT_TRUE(paused) << "no HTTP answer";
  EXPECT_NE(paused->status, 200);
  EXPECT_NE(paused->body.find(kGate), std::string::npos) << paused->status << " " << paused->body;
  // Root's statements do not reach tester's fail point.
  EXPECT_TRUE(Query(root, "SELECT count(*) FROM d.t").ok());
  EXPECT_TRUE(Query(root, "PAUSE JOB WHERE jobname = 'j'").ok());
}

}  // namespace
}  // namespace millrace::access
