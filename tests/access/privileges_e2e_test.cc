// Privileges end to end: the real `millrace serve` and MariaDB Connector/C. What each
// statement kind needs, at the table, database and global level; views checked on the view;
// SHOW lists only what a user holds; grants and revokes reach open sessions.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "access/access_e2e_util.h"

namespace millrace::access {
namespace {

constexpr const char* kRootPassword = "Priv-Root-1";

class PrivilegesE2ETest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e2e = E2EServer::Start(kRootPassword);
    ASSERT_TRUE(e2e.ok()) << e2e.status().ToString();
    e2e_ = std::move(e2e).value();
  }
  static void TearDownTestSuite() { e2e_.reset(); }
  static MYSQL* root() { return e2e_->root.get(); }
  static uint16_t port() { return e2e_->mysql_port(); }

  static void Root(const std::string& sql) {
    auto result = Query(root(), sql);
    ASSERT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
  }

  // A fresh user with `grants` (GRANT statements' "privs ON object" parts), connected.
  static MysqlPtr NewUser(const std::string& name, const std::vector<std::string>& grants) {
    Root("CREATE USER " + name + " IDENTIFIED BY 'pw-" + name + "'");
    for (const std::string& grant : grants)
      Root("GRANT " + grant + " TO " + name);
    auto mysql = ConnectAs(port(), name, "pw-" + name);
    EXPECT_TRUE(mysql.ok()) << mysql.status().ToString();
    return mysql.ok() ? std::move(mysql).value() : nullptr;
  }

  // The error of `sql` ("errno: message"), or "" when it succeeded.
  static std::string ErrorOf(MYSQL* mysql, const std::string& sql) {
    auto result = Query(mysql, sql);
    return result.ok() ? "" : result.status().message();
  }

  static Rows Rows(MYSQL* mysql, const std::string& sql) {
    auto result = Query(mysql, sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
    return result.ok() ? std::move(result).value() : access::Rows{};
  }

  static std::unique_ptr<E2EServer> e2e_;
};

std::unique_ptr<E2EServer> PrivilegesE2ETest::e2e_;

TEST_F(PrivilegesE2ETest, EachStatementKindNeedsItsPrivilege) {
  Root("CREATE DATABASE k");
  Root("CREATE TABLE k.t (a INT)");
  Root("INSERT INTO k.t VALUES (1)");
  MysqlPtr reader = NewUser("k_reader", {"SELECT_PRIV ON k.t"});
  EXPECT_EQ(Rows(reader.get(), "SELECT a FROM k.t"), (access::Rows{{"1"}}));
  EXPECT_EQ(ErrorOf(reader.get(), "INSERT INTO k.t VALUES (2)"),
            "1142: LOAD_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.t'");
  EXPECT_EQ(ErrorOf(reader.get(), "UPDATE k.t SET a = 3"),
            "1142: LOAD_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.t'");
  EXPECT_EQ(ErrorOf(reader.get(), "DELETE FROM k.t"),
            "1142: LOAD_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.t'");
  // An upsert writes too: DuckDB plans INSERT ... ON CONFLICT and MERGE INTO as one merge.
  Root("CREATE TABLE k.pk (id INT PRIMARY KEY, n INT)");
  Root("GRANT SELECT_PRIV ON k.pk TO k_reader");
  EXPECT_EQ(
      ErrorOf(reader.get(), "INSERT INTO k.pk VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = 2"),
      "1142: LOAD_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.pk'");
  EXPECT_EQ(ErrorOf(reader.get(), "INSERT INTO k.pk VALUES (1, 1) ON CONFLICT DO NOTHING"),
            "1142: LOAD_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.pk'");
  EXPECT_NE(ErrorOf(reader.get(),
                    "MERGE INTO k.pk USING (SELECT 1 AS id) s ON k.pk.id = s.id WHEN MATCHED "
                    "THEN DELETE"),
            "");
  EXPECT_EQ(Rows(root(), "SELECT count(*) FROM k.pk"), (access::Rows{{"0"}}));
  EXPECT_EQ(ErrorOf(reader.get(), "CREATE TABLE k.u (a INT)"),
            "1142: CREATE_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.u'");
  EXPECT_EQ(ErrorOf(reader.get(), "ALTER TABLE k.t ADD COLUMN b INT"),
            "1142: ALTER_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.t'");
  EXPECT_EQ(ErrorOf(reader.get(), "DROP TABLE k.t"),
            "1142: DROP_PRIV command denied to user 'k_reader'@'127.0.0.1' for table 'k.t'");
  EXPECT_EQ(ErrorOf(reader.get(), "CREATE USER eve"),
            "1227: Access denied; you need (at least one of) the ADMIN_PRIV privilege(s) for "
            "this operation");
  EXPECT_EQ(ErrorOf(reader.get(), "CHECKPOINT").substr(0, 5), "1227:");

  MysqlPtr loader = NewUser("k_loader", {"LOAD_PRIV ON k.t"});
  EXPECT_EQ(ErrorOf(loader.get(), "INSERT INTO k.t VALUES (2)"), "");
  EXPECT_EQ(ErrorOf(loader.get(), "DELETE FROM k.t WHERE a = 2"), "");
  Root("GRANT LOAD_PRIV ON k.pk TO k_loader");
  EXPECT_EQ(ErrorOf(loader.get(),
                    "INSERT INTO k.pk VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET "
                    "n = EXCLUDED.n"),
            "");
  EXPECT_EQ(ErrorOf(loader.get(), "SELECT * FROM k.t"),
            "1142: SELECT_PRIV command denied to user 'k_loader'@'127.0.0.1' for table 'k.t'");
  // Reading the table it writes from another table needs SELECT there.
  EXPECT_EQ(ErrorOf(loader.get(), "INSERT INTO k.t SELECT a FROM k.t"),
            "1142: SELECT_PRIV command denied to user 'k_loader'@'127.0.0.1' for table 'k.t'");

  MysqlPtr builder = NewUser("k_builder", {"CREATE_PRIV, DROP_PRIV, ALTER_PRIV ON k.*"});
  EXPECT_EQ(ErrorOf(builder.get(), "CREATE TABLE k.b (a INT)"), "");
  EXPECT_EQ(ErrorOf(builder.get(), "ALTER TABLE k.b ADD COLUMN c INT"), "");
  EXPECT_EQ(ErrorOf(builder.get(), "CREATE VIEW k.bv AS SELECT 1 AS one"), "");
  EXPECT_EQ(ErrorOf(builder.get(), "DROP VIEW k.bv"), "");
  EXPECT_EQ(ErrorOf(builder.get(), "DROP TABLE k.b"), "");
  // A view over a table it may not read.
  EXPECT_EQ(ErrorOf(builder.get(), "CREATE VIEW k.peek AS SELECT * FROM k.t"),
            "1142: SELECT_PRIV command denied to user 'k_builder'@'127.0.0.1' for table 'k.t'");
  // CREATE_PRIV on k.* is not on another database.
  EXPECT_EQ(ErrorOf(builder.get(), "CREATE DATABASE k2").substr(0, 5), "1044:");
}

TEST_F(PrivilegesE2ETest, TableDatabaseAndGlobalLevels) {
  Root("CREATE DATABASE l1");
  Root("CREATE DATABASE l2");
  Root("CREATE TABLE l1.a (x INT)");
  Root("CREATE TABLE l1.b (x INT PRIMARY KEY)");
  Root("CREATE TABLE l2.c (x INT)");
  MysqlPtr table = NewUser("lv_table", {"SELECT_PRIV ON l1.a"});
  MysqlPtr db = NewUser("lv_db", {"SELECT_PRIV ON l1.*"});
  MysqlPtr global = NewUser("lv_global", {"SELECT ON *.*"});  // MySQL's name for SELECT_PRIV
  EXPECT_EQ(ErrorOf(table.get(), "SELECT * FROM l1.a"), "");
  EXPECT_NE(ErrorOf(table.get(), "SELECT * FROM l1.b"), "");
  EXPECT_EQ(ErrorOf(db.get(), "SELECT * FROM l1.a JOIN l1.b USING (x)"), "");
  EXPECT_NE(ErrorOf(db.get(), "SELECT * FROM l2.c"), "");
  EXPECT_EQ(ErrorOf(global.get(), "SELECT * FROM l1.a, l1.b, l2.c"), "");
  // A subquery and a CTE are reads too.
  EXPECT_NE(ErrorOf(table.get(), "SELECT * FROM l1.a WHERE x IN (SELECT x FROM l1.b)"), "");
  EXPECT_NE(ErrorOf(table.get(), "WITH q AS (SELECT * FROM l1.b) SELECT * FROM q"), "");
  // USE and SHOW.
  EXPECT_EQ(ErrorOf(table.get(), "USE l1"), "");
  EXPECT_EQ(ErrorOf(table.get(), "USE l2"),
            "1044: Access denied for user 'lv_table'@'127.0.0.1' to database 'l2'");
  EXPECT_EQ(Rows(table.get(), "SHOW DATABASES"), (access::Rows{{"l1"}}));
  EXPECT_EQ(Rows(table.get(), "SHOW TABLES FROM l1"), (access::Rows{{"a"}}));
  EXPECT_EQ(Rows(db.get(), "SHOW TABLES FROM l1"), (access::Rows{{"a"}, {"b"}}));
  EXPECT_NE(ErrorOf(table.get(), "DESC l1.b"), "");
  EXPECT_EQ(ErrorOf(table.get(), "DESC l1.a"), "");
  // information_schema lists what SHOW lists (other tests' databases are on this server too).
  const std::string tables =
      "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema IN "
      "('l1', 'l2') ORDER BY 1, 2";
  EXPECT_EQ(Rows(table.get(), tables), (access::Rows{{"l1", "a"}}));
  EXPECT_EQ(Rows(db.get(), tables), (access::Rows{{"l1", "a"}, {"l1", "b"}}));
  EXPECT_EQ(Rows(global.get(), tables), (access::Rows{{"l1", "a"}, {"l1", "b"}, {"l2", "c"}}));
  EXPECT_EQ(Rows(root(), tables), Rows(global.get(), tables));
  EXPECT_EQ(Rows(table.get(), "SELECT table_name, column_name FROM INFORMATION_SCHEMA.COLUMNS"),
            (access::Rows{{"a", "x"}}));
  // In MySQL's shape, filtered all the same; the MySQL views cannot be named directly.
  EXPECT_EQ(Rows(table.get(),
                 "SELECT TABLE_NAME, COLUMN_TYPE, COLUMN_KEY FROM "
                 "information_schema.COLUMNS WHERE TABLE_SCHEMA = 'L1'"),
            (access::Rows{{"a", "int", ""}}));
  const std::string keys =
      "SELECT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS "
      "WHERE TABLE_SCHEMA = 'l1'";
  EXPECT_EQ(Rows(table.get(), keys), (access::Rows{}));
  EXPECT_EQ(Rows(db.get(), keys), (access::Rows{{"b", "PRIMARY"}}));
  EXPECT_EQ(Rows(table.get(), "SHOW TABLE STATUS FROM l1").size(), 1u);
  // A SHOW's WHERE is checked as the user's own query: it reads nothing the user may not.
  EXPECT_EQ(Rows(table.get(), "SHOW TABLE STATUS FROM l1 WHERE Name = 'a'").size(), 1u);
  EXPECT_EQ(ErrorOf(table.get(),
                    "SHOW TABLE STATUS FROM l1 WHERE (SELECT count(*) FROM l1.b) "
                    ">= 0")
                .substr(0, 5),
            "1142:");
  EXPECT_EQ(ErrorOf(table.get(),
                    "SHOW TABLES FROM l1 WHERE 1=1) UNION ALL SELECT x::VARCHAR "
                    "FROM l2.c WHERE (1=1")
                .substr(0, 5),
            "1142:");
  EXPECT_EQ(ErrorOf(table.get(), "SHOW INDEX FROM l1.a WHERE true; DROP TABLE l1.b").substr(0, 5),
            "1064:");
  EXPECT_EQ(ErrorOf(table.get(), "SELECT * FROM __millrace_mysql_info.tables").substr(0, 5),
            "1044:");
  EXPECT_EQ(Rows(table.get(), "SELECT schema_name FROM system.information_schema.schemata"),
            (access::Rows{{"l1"}}));
  EXPECT_EQ(Rows(db.get(),
                 "SELECT count(*) FROM information_schema.tables t JOIN "
                 "information_schema.columns c USING (table_schema, table_name) WHERE "
                 "t.table_schema = 'l1'"),
            (access::Rows{{"2"}}));
  // Nothing of Millrace's own schemas, even for a global grant.
  EXPECT_EQ(Rows(global.get(),
                 "SELECT count(*) FROM information_schema.tables WHERE table_schema LIKE '\\_\\_%' "
                 "ESCAPE '\\'"),
            (access::Rows{{"0"}}));
  // DuckDB's metadata functions and pg_catalog stay for ADMIN_PRIV; the filtered views cannot
  // be named, nor joined with the unfiltered ones.
  EXPECT_EQ(ErrorOf(table.get(), "SELECT * FROM duckdb_tables()").substr(0, 5), "1290:");
  EXPECT_EQ(ErrorOf(table.get(), "SELECT * FROM pg_catalog.pg_class").substr(0, 5), "1290:");
  EXPECT_EQ(ErrorOf(table.get(), "SELECT * FROM __millrace_info.tables").substr(0, 5), "1044:");
  EXPECT_EQ(ErrorOf(table.get(), "SELECT * FROM information_schema.tables, pg_catalog.pg_namespace")
                .substr(0, 5),
            "1290:");
  // Nothing else brings DuckDB's metadata along with the filtered views: a SHOW inside a query,
  // a view over metadata (an administrator's, granted), a view a user makes over
  // information_schema.
  for (const char* sql : {"SELECT d.* FROM (SHOW ALL TABLES) d, information_schema.character_sets",
                          "SELECT * FROM (SHOW TABLES FROM l2) d"}) {
    EXPECT_EQ(ErrorOf(db.get(), sql).substr(0, 5), "1290:") << sql;
  }
  // DESCRIBE of a table inside a query describes a query of it: it reads the table.
  EXPECT_EQ(ErrorOf(db.get(), "SELECT * FROM (DESCRIBE l1.b)"), "");
  EXPECT_NE(ErrorOf(db.get(), "SELECT * FROM (DESCRIBE l2.c)"), "");
  Root("CREATE VIEW l1.meta AS SELECT schema_name, table_name FROM duckdb_tables()");
  EXPECT_EQ(ErrorOf(db.get(), "SELECT * FROM l1.meta").substr(0, 5), "1290:");
  EXPECT_EQ(ErrorOf(db.get(),
                    "SELECT * FROM l1.meta UNION ALL SELECT table_schema, table_name FROM "
                    "information_schema.tables WHERE false")
                .substr(0, 5),
            "1290:");
  Root("GRANT CREATE_PRIV ON l1.* TO lv_db");
  for (const char* sql :
       {"CREATE VIEW l1.v1 AS SELECT table_schema, table_name FROM information_schema.tables",
        "CREATE VIEW l1.v2 AS SELECT * FROM (SHOW ALL TABLES)",
        "CREATE VIEW l1.v3 AS SELECT name, setting FROM pg_catalog.pg_settings"}) {
    EXPECT_EQ(ErrorOf(db.get(), sql).substr(0, 5), "1290:") << sql;
  }
  EXPECT_EQ(ErrorOf(db.get(), "CREATE VIEW l1.ok AS SELECT x FROM l1.a"), "");
  // SUMMARIZE reads its table like a query does.
  EXPECT_EQ(ErrorOf(table.get(), "SELECT * FROM (SUMMARIZE l1.a)"), "");
  EXPECT_NE(ErrorOf(table.get(), "SELECT * FROM (SUMMARIZE l1.b)"), "");
  // Only queries are routed to the filtered views.
  EXPECT_EQ(ErrorOf(table.get(), "CREATE TABLE l1.copy AS SELECT * FROM information_schema.tables")
                .substr(0, 5),
            "1290:");
}

TEST_F(PrivilegesE2ETest, SessionsAreAUsersOwnUnlessItIsAnAdministrator) {
  MysqlPtr user = NewUser("watcher", {});
  const std::string root_id = std::to_string(mysql_thread_id(root()));
  const std::string own_id = std::to_string(mysql_thread_id(user.get()));
  const access::Rows listed = Rows(user.get(), "SHOW PROCESSLIST");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0][0], own_id);
  EXPECT_EQ(listed[0][1], "watcher");
  EXPECT_GE(Rows(root(), "SHOW PROCESSLIST").size(), 2u);
  EXPECT_EQ(ErrorOf(user.get(), "KILL QUERY " + root_id),
            "1095: You are not owner of thread " + root_id);
  EXPECT_EQ(ErrorOf(user.get(), "KILL QUERY " + own_id), "");
  EXPECT_EQ(Rows(user.get(), "SELECT 1"), (access::Rows{{"1"}})) << "an idle session goes on";
}

TEST_F(PrivilegesE2ETest, AViewIsCheckedOnTheView) {
  Root("CREATE DATABASE v");
  Root("CREATE TABLE v.secret (id INT, salary INT, public BOOLEAN)");
  Root("INSERT INTO v.secret VALUES (1, 100, true), (2, 200, false)");
  Root("CREATE VIEW v.visible AS SELECT id FROM v.secret WHERE public");
  MysqlPtr user = NewUser("v_user", {"SELECT_PRIV ON v.visible"});
  EXPECT_EQ(Rows(user.get(), "SELECT id FROM v.visible"), (access::Rows{{"1"}}));
  EXPECT_EQ(ErrorOf(user.get(), "SELECT * FROM v.secret"),
            "1142: SELECT_PRIV command denied to user 'v_user'@'127.0.0.1' for table 'v.secret'");
  // Naming the table next to the view does not borrow the view's privilege.
  EXPECT_NE(ErrorOf(user.get(), "SELECT * FROM v.visible, v.secret"), "");
  // A CTE named like the view still reads the table it names.
  EXPECT_NE(ErrorOf(user.get(), "WITH visible AS (SELECT * FROM v.secret) SELECT * FROM visible"),
            "");
}

TEST_F(PrivilegesE2ETest, GrantAndRevokeReachOpenSessions) {
  Root("CREATE DATABASE g");
  Root("CREATE TABLE g.t (a INT)");
  MysqlPtr user = NewUser("g_user", {});
  EXPECT_NE(ErrorOf(user.get(), "SELECT * FROM g.t"), "");
  Root("GRANT SELECT_PRIV ON g.* TO g_user");
  EXPECT_EQ(ErrorOf(user.get(), "SELECT * FROM g.t"), "");
  Root("REVOKE SELECT_PRIV ON g.* FROM g_user");
  EXPECT_NE(ErrorOf(user.get(), "SELECT * FROM g.t"), "");
  Root("GRANT ALL ON g.t TO g_user");
  EXPECT_EQ(ErrorOf(user.get(), "INSERT INTO g.t VALUES (1)"), "");
  Root("DROP USER g_user");
  EXPECT_NE(ErrorOf(user.get(), "SELECT * FROM g.t"), "");
}

TEST_F(PrivilegesE2ETest, TheAuditLogRecordsLoginsUsersGrantsJobsAndDdl) {
  std::string error;
  EXPECT_EQ(Connect(port(), "nobody", "guess", &error), nullptr);
  MysqlPtr auditor = NewUser("auditor", {"CREATE_PRIV ON a.*"});
  Root("CREATE DATABASE a");
  EXPECT_EQ(ErrorOf(auditor.get(), "CREATE TABLE a.t (x INT)"), "");
  EXPECT_NE(ErrorOf(auditor.get(), "DROP TABLE a.t"), "");  // no DROP_PRIV: refused, recorded
  Root("SET PASSWORD FOR auditor = 'Another-Secret-9'");
  Root(
      "CREATE JOB aj ON STREAMING DO INSERT INTO a.t SELECT CAST(c1 AS INT) FROM local("
      "\"file_path\" = \"" +
      e2e_->dir->Join("data") + "/inbox/*.csv\", \"format\" = \"csv\")");
  Root("DROP JOB WHERE jobname = 'aj'");
  // Only administrators read it.
  EXPECT_EQ(ErrorOf(auditor.get(), "SELECT * FROM audit_log()"),
            "1227: Access denied; you need (at least one of) the ADMIN_PRIV privilege(s) for this "
            "operation");

  const access::Rows events = Rows(root(),
                                   "SELECT User, Host, Kind, Action, CASE WHEN Outcome = 'OK' "
                                   "THEN 'ok' ELSE 'failed' END FROM audit_log()");
  auto has = [&](const std::vector<std::string>& want) {
    return std::find(events.begin(), events.end(), want) != events.end();
  };
  EXPECT_TRUE(has({"nobody", "127.0.0.1", "LOGIN", "LOGIN", "failed"}));
  EXPECT_TRUE(has({"auditor", "127.0.0.1", "LOGIN", "LOGIN", "ok"}));
  EXPECT_TRUE(has({"root", "127.0.0.1", "USER", "CREATE USER", "ok"}));
  EXPECT_TRUE(has({"root", "127.0.0.1", "GRANT", "GRANT", "ok"}));
  EXPECT_TRUE(has({"root", "127.0.0.1", "USER", "SET PASSWORD", "ok"}));
  EXPECT_TRUE(has({"root", "127.0.0.1", "DDL", "CREATE DATABASE a", "ok"}));
  EXPECT_TRUE(has({"auditor", "127.0.0.1", "DDL", "CREATE TABLE a.t", "ok"}));
  EXPECT_TRUE(has({"auditor", "127.0.0.1", "DDL", "DROP TABLE a.t", "failed"}));
  EXPECT_TRUE(has({"root", "127.0.0.1", "JOB", "CREATE JOB", "ok"}));
  EXPECT_TRUE(has({"root", "127.0.0.1", "JOB", "DROP JOB", "ok"}));
  // No password reaches the log, in a statement or an outcome.
  const access::Rows text = Rows(root(), "SELECT Statement, Outcome FROM audit_log()");
  for (const auto& row : text) {
    for (const std::string& cell : row) {
      EXPECT_EQ(cell.find("pw-auditor"), std::string::npos) << cell;
      EXPECT_EQ(cell.find("Another-Secret-9"), std::string::npos) << cell;
      EXPECT_EQ(cell.find(kRootPassword), std::string::npos) << cell;
    }
  }
}

// The data directory and what the server writes in it are the owner's alone.
TEST_F(PrivilegesE2ETest, TheDataDirectoryIsPrivate) {
  namespace fs = std::filesystem;
  const fs::path data = e2e_->dir->Join("data");
  EXPECT_EQ(fs::status(data).permissions() & fs::perms::all, fs::perms::owner_all);
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(data)) {
    if (entry.path().filename() == "server.log") continue;  // written by the test, not the server
    const fs::perms perms = entry.status().permissions() & fs::perms::all;
    const fs::perms allowed = entry.is_directory() ? fs::perms::owner_all
                                                   : fs::perms::owner_read | fs::perms::owner_write;
    EXPECT_EQ(perms & ~allowed, fs::perms::none) << entry.path();
  }
}

}  // namespace
}  // namespace millrace::access
