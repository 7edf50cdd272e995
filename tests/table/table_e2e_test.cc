// Doris DDL end to end: the real `millrace serve` and Connector/C. The table of Doris's
// regression tests and one table of each model, created as Doris writes them; SHOW CREATE TABLE
// output run again makes the same table; DESC shows Doris's columns; a table's definition and
// the table appear together, in the client's transaction when one is open.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "access/access_e2e_util.h"
#include "table/regression_ddl.h"
#include "testing/wait_for.h"

namespace millrace::table {
namespace {

using access::ConnectAs;
using access::Query;
using access::Rows;

class TableE2ETest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto dir = std::make_unique<testing::TempDir>();
    inbox_ = dir->Join("inbox");
    std::filesystem::create_directories(inbox_);
    std::ofstream(inbox_ + "/people.csv") << "1,ann,2.5\n2,bob,3\n";
    std::ofstream(inbox_ + "/people.json") << "{\"id\": 1, \"name\": \"ann\", \"score\": 2.5}\n";
    auto e2e = access::E2EServer::Start("", {"--local-root", inbox_}, std::move(dir));
    ASSERT_TRUE(e2e.ok()) << e2e.status().ToString();
    e2e_ = std::move(e2e).value();
  }
  static void TearDownTestSuite() { e2e_.reset(); }
  static MYSQL* root() { return e2e_->root.get(); }

  static Rows Run(const std::string& sql) {
    auto rows = Query(root(), sql);
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    return rows.ok() ? std::move(rows).value() : Rows{};
  }
  static std::string ErrorOf(const std::string& sql) {
    auto rows = Query(root(), sql);
    return rows.ok() ? "" : rows.status().message();
  }
  static std::string ShowCreate(const std::string& table) {
    Rows rows = Run("SHOW CREATE TABLE " + table);
    return rows.size() == 1 && rows[0].size() == 2 ? rows[0][1] : "";
  }

  static std::unique_ptr<access::E2EServer> e2e_;
  static std::string inbox_;
};

std::unique_ptr<access::E2EServer> TableE2ETest::e2e_;
std::string TableE2ETest::inbox_;

TEST_F(TableE2ETest, TheRegressionTestsDdlRunsAsWrittenAndRoundTrips) {
  Run("CREATE DATABASE reg");
  Run("USE reg");
  Run(kRegressionDdl);
  Run("INSERT INTO t VALUES (1, 'a', 2), (1, 'a', 2)");
  EXPECT_EQ(Run("SELECT count(*) FROM t"), (Rows{{"2"}})) << "DUPLICATE keeps every row";
  EXPECT_EQ(Run("DESC t"), (Rows{{"c1", "INT", "Yes", "true", "NULL", ""},
                                 {"c2", "TEXT", "Yes", "false", "NULL", ""},
                                 {"c3", "INT", "Yes", "false", "NULL", ""}}));
  // SHOW CREATE TABLE's output, run again under another name, makes the same table.
  const std::string shown = ShowCreate("t");
  ASSERT_NE(shown, "");
  Run("DROP TABLE t");
  Run(shown);
  EXPECT_EQ(ShowCreate("t"), shown);
  EXPECT_EQ(Run("SELECT table_comment FROM information_schema.tables WHERE table_name = 't' AND "
                "table_schema = 'reg'"),
            (Rows{{"OLAP"}}));
}

TEST_F(TableE2ETest, EachModelIsCreatedWithItsKeysAndRoundTrips) {
  Run("CREATE DATABASE models");
  Run("CREATE TABLE models.u (`id` BIGINT NOT NULL, `name` VARCHAR(32) DEFAULT \"anon\" COMMENT "
      "'shown name') UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS AUTO PROPERTIES "
      "(\"enable_unique_key_merge_on_write\" = \"true\")");
  Run("CREATE TABLE models.a (`k` DATE, `hits` BIGINT SUM DEFAULT \"0\", `last` STRING REPLACE) "
      "AGGREGATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 4");
  EXPECT_EQ(Run("DESC models.u"), (Rows{{"id", "BIGINT", "No", "true", "NULL", ""},
                                        {"name", "VARCHAR(32)", "Yes", "false", "anon", ""}}));
  EXPECT_EQ(Run("DESC models.a")[1],
            (std::vector<std::string>{"hits", "BIGINT", "Yes", "false", "0", "SUM"}));
  // A new key takes its columns' defaults; the same key again replaces the row.
  Run("INSERT INTO models.u (id) VALUES (1)");
  EXPECT_EQ(Run("SELECT id, name FROM models.u"), (Rows{{"1", "anon"}}));
  Run("INSERT INTO models.u VALUES (1, 'b')");
  EXPECT_EQ(Run("SELECT id, name FROM models.u"), (Rows{{"1", "b"}}));
  for (const char* table : {"models.u", "models.a"}) {
    const std::string shown = ShowCreate(table);
    Run("CREATE DATABASE IF NOT EXISTS again");
    Run("USE again");
    Run(shown);
    const std::string name = std::string(table).substr(7);
    EXPECT_EQ(ShowCreate("again." + name), shown) << table;
    EXPECT_EQ(Run("DESC again." + name), Run(std::string("DESC ") + table));
  }
  // LIKE copies the model; IF NOT EXISTS leaves a table as it is.
  Run("CREATE TABLE models.u2 LIKE models.u");
  EXPECT_NE(ShowCreate("models.u2").find("UNIQUE KEY(`id`)"), std::string::npos);
  Run("CREATE TABLE IF NOT EXISTS models.u2 (z INT) DUPLICATE KEY(z)");
  EXPECT_NE(ShowCreate("models.u2").find("UNIQUE KEY(`id`)"), std::string::npos);
  // A table made by plain SQL is shown in MySQL's layout.
  Run("CREATE TABLE models.plain (a INTEGER PRIMARY KEY)");
  EXPECT_EQ(ShowCreate("models.plain"),
            "CREATE TABLE `plain` (\n  `a` int NOT NULL,\n  PRIMARY KEY (`a`)\n) ENGINE=DuckDB "
            "DEFAULT CHARSET=utf8mb4");
}

TEST_F(TableE2ETest, ClientInsertsWriteByTheModel) {
  Run("CREATE DATABASE ins");
  Run("CREATE TABLE ins.u (id INT, name STRING, n INT) UNIQUE KEY(id)");
  // One statement giving a key twice: the later row wins (DuckDB alone would keep the first).
  Run("INSERT INTO ins.u VALUES (1, 'a', 1), (2, 'b', 1), (1, 'A', 2)");
  EXPECT_EQ(Run("SELECT id, name, n FROM ins.u ORDER BY id"),
            (Rows{{"1", "A", "2"}, {"2", "b", "1"}}));
  // A later statement replaces the key's row; a value column not given keeps its value.
  Run("INSERT INTO ins.u (id, name) VALUES (2, 'B')");
  EXPECT_EQ(Run("SELECT id, name, n FROM ins.u ORDER BY id"),
            (Rows{{"1", "A", "2"}, {"2", "B", "1"}}));
  // Doris's delete sign, named in the column list.
  Run("INSERT INTO ins.u (id, name, __DORIS_DELETE_SIGN__) VALUES (1, NULL, 1), (3, 'c', 0)");
  EXPECT_EQ(Run("SELECT id, name FROM ins.u ORDER BY id"), (Rows{{"2", "B"}, {"3", "c"}}));
  EXPECT_EQ(ErrorOf("INSERT INTO ins.u VALUES (NULL, 'x', 1)").substr(0, 5), "1048:");

  Run("CREATE TABLE ins.a (k STRING, v BIGINT SUM, m INT MAX, r STRING REPLACE) AGGREGATE "
      "KEY(k)");
  Run("INSERT INTO ins.a VALUES ('x', 1, 5, 'first'), ('x', 2, 3, 'second')");
  Run("INSERT INTO ins.a SELECT 'x', 10, 1, 'third'");
  EXPECT_EQ(Run("SELECT k, v, m, r FROM ins.a"), (Rows{{"x", "13", "5", "third"}}));
  EXPECT_EQ(
      ErrorOf("INSERT INTO ins.a (k, v, __DORIS_DELETE_SIGN__) VALUES ('x', 1, 1)").substr(0, 5),
      "1105:");
  // Privileges are the INSERT's: LOAD_PRIV on the table.
  Run("CREATE USER inserter IDENTIFIED BY 'pw-ins'");
  Run("GRANT SELECT_PRIV ON ins.* TO inserter");
  auto inserter = ConnectAs(e2e_->mysql_port(), "inserter", "pw-ins");
  ASSERT_TRUE(inserter.ok());
  auto refused = Query(inserter->get(), "INSERT INTO ins.u VALUES (9, 'z', 9)");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().substr(0, 5), "1142:") << refused.status().message();
  EXPECT_EQ(Run("SELECT count(*) FROM ins.u WHERE id = 9"), (Rows{{"0"}}));
}

TEST_F(TableE2ETest, AnInsertWithALabelLoadsOnce) {
  Run("CREATE DATABASE lab");
  Run("CREATE TABLE lab.d (id INT, name STRING) DUPLICATE KEY(id)");
  Run("CREATE TABLE lab.u (id INT, name STRING) UNIQUE KEY(id)");
  Run("INSERT INTO lab.d WITH LABEL first_load (id, name) VALUES (1, 'a'), (2, 'b')");
  EXPECT_EQ(ErrorOf("INSERT INTO lab.d WITH LABEL first_load VALUES (3, 'c')"),
            "1105: Label [first_load] has already been used.");
  EXPECT_EQ(Run("SELECT count(*) FROM lab.d"), (Rows{{"2"}})) << "the second INSERT loaded nothing";
  // Labels are per database; a failed INSERT leaves no label behind.
  Run("INSERT INTO lab.u WITH LABEL `u-1` VALUES (1, 'x'), (1, 'y')");
  EXPECT_EQ(Run("SELECT id, name FROM lab.u"), (Rows{{"1", "y"}}));
  EXPECT_NE(ErrorOf("INSERT INTO lab.u WITH LABEL retry VALUES (NULL, 'z')"), "");
  Run("INSERT INTO lab.u WITH LABEL retry VALUES (2, 'z')");
  Rows loads = Run("SHOW LOAD FROM lab");
  ASSERT_EQ(loads.size(), 3u);
  EXPECT_EQ(loads[0][1], "first_load");
  EXPECT_EQ(loads[0][2], "FINISHED");
  Run("USE lab");
  loads = Run("SHOW LOAD WHERE LABEL = 'retry'");
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0][1], "retry");
  EXPECT_NE(loads[0][11].find("\"Table\":\"u\""), std::string::npos) << loads[0][11];
}

TEST_F(TableE2ETest, EdgesOfInsertAndDdlFoundInReview) {
  Run("CREATE DATABASE edge");
  Run("CREATE TABLE edge.u (k INT, v STRING) UNIQUE KEY(k)");
  // A label with nothing after it is a syntax error, not a crash; the server goes on.
  EXPECT_EQ(ErrorOf("INSERT INTO edge.u WITH LABEL l1").substr(0, 5), "1064:");
  EXPECT_EQ(Run("SELECT 1"), (Rows{{"1"}}));
  // DuckDB's own INSERT forms still work on Doris tables.
  Run("INSERT INTO edge.u WITH src AS (SELECT 1 AS k, 'a' AS v) SELECT * FROM src");
  Run("INSERT INTO edge.u VALUES (1, 'b') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v");
  EXPECT_EQ(Run("SELECT k, v FROM edge.u"), (Rows{{"1", "b"}}));
  // Plain DuckDB DDL whose column is named like a Doris word goes to DuckDB.
  Run("CREATE TABLE edge.plain (id INTEGER PRIMARY KEY, engine VARCHAR, datetime TIMESTAMP)");
  // A dropped Doris table's definition goes with it: a plain table of the same name and
  // columns made later is plain (a second row of a key is refused, not folded).
  Run("CREATE TABLE edge.a (k INT, n BIGINT SUM) AGGREGATE KEY(k)");
  Run("DROP TABLE edge.a");
  Run("CREATE TABLE edge.a (k INTEGER PRIMARY KEY, n BIGINT)");
  Run("INSERT INTO edge.a VALUES (1, 1)");
  EXPECT_NE(ErrorOf("INSERT INTO edge.a VALUES (1, 1)"), "");
  EXPECT_EQ(ShowCreate("edge.a").rfind("CREATE TABLE `a` (\n", 0), 0u) << ShowCreate("edge.a");
  // A refused INSERT in a client's transaction leaves no label behind.
  Run("CREATE USER labeller IDENTIFIED BY 'pw-lab'");
  Run("GRANT SELECT_PRIV ON edge.* TO labeller");
  auto user = ConnectAs(e2e_->mysql_port(), "labeller", "pw-lab");
  ASSERT_TRUE(user.ok());
  ASSERT_TRUE(Query(user->get(), "BEGIN").ok());
  EXPECT_FALSE(Query(user->get(), "INSERT INTO edge.u WITH LABEL stolen VALUES (5, 'x')").ok());
  ASSERT_TRUE(Query(user->get(), "COMMIT").ok());
  EXPECT_EQ(Run("SHOW LOAD FROM edge WHERE LABEL = 'stolen'"), Rows{});
  // SHOW LOAD lists only the loads of tables the user may see.
  Run("CREATE TABLE edge.hidden (k INT) DUPLICATE KEY(k)");
  Run("INSERT INTO edge.hidden WITH LABEL secret_load VALUES (1)");
  Run("INSERT INTO edge.u WITH LABEL open_load VALUES (2, 'y')");
  Run("REVOKE SELECT_PRIV ON edge.* FROM labeller");
  Run("GRANT SELECT_PRIV ON edge.u TO labeller");
  auto loads = Query(user->get(), "SHOW LOAD FROM edge");
  ASSERT_TRUE(loads.ok()) << loads.status().ToString();
  ASSERT_EQ(loads->size(), 1u);
  EXPECT_EQ((*loads)[0][1], "open_load");
  // A connection id past 32 bits names no session.
  EXPECT_EQ(ErrorOf("KILL QUERY 99999999999"), "1094: Unknown thread id: 99999999999");
}

TEST_F(TableE2ETest, AUniqueKeyTableMadeFromAQueryKeepsTheNewestRowPerKey) {
  Run("CREATE DATABASE ctas");
  Run("CREATE TABLE ctas.src (k INT, v STRING, n INT) DUPLICATE KEY(k)");
  Run("INSERT INTO ctas.src VALUES (1, 'a', 1), (2, 'b', 2), (1, 'c', 3)");
  Run("CREATE TABLE ctas.u UNIQUE KEY(k) PROPERTIES (\"replication_num\" = \"1\") AS SELECT k, v "
      "FROM ctas.src ORDER BY n");
  EXPECT_EQ(Run("SELECT k, v FROM ctas.u ORDER BY k"), (Rows{{"1", "c"}, {"2", "b"}}));
  EXPECT_NE(ShowCreate("ctas.u").find("UNIQUE KEY(`k`)"), std::string::npos);
  Run("INSERT INTO ctas.u VALUES (2, 'B')");
  EXPECT_EQ(Run("SELECT v FROM ctas.u WHERE k = 2"), (Rows{{"B"}}));
  EXPECT_EQ(
      ErrorOf("CREATE TABLE ctas.bad UNIQUE KEY(v) AS SELECT k, v FROM ctas.src").substr(0, 5),
      "1105:");
  EXPECT_EQ(
      ErrorOf("CREATE TABLE ctas.agg AGGREGATE KEY(k) AS SELECT k FROM ctas.src").substr(0, 5),
      "1235:");
  EXPECT_EQ(Run("SHOW TABLES FROM ctas"), (Rows{{"src"}, {"u"}}));
}

TEST_F(TableE2ETest, DescFunctionShowsTheColumnsFilesLoadWith) {
  // local() takes a file once it has not changed for a second (source/local_source.h).
  ASSERT_TRUE(testing::WaitFor([&] {
    return Query(root(), "SELECT * FROM local(\"file_path\" = \"" + inbox_ +
                             "/people.*\", \"format\" = \"csv\")")
        .ok();
  }));
  EXPECT_EQ(Run("DESC FUNCTION local(\"file_path\" = \"" + inbox_ +
                "/people.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")"),
            (Rows{{"c1", "VARCHAR", "Yes", "false", "NULL", ""},
                  {"c2", "VARCHAR", "Yes", "false", "NULL", ""},
                  {"c3", "VARCHAR", "Yes", "false", "NULL", ""}}));
  const Rows json = Run("DESC FUNCTION local(\"file_path\" = \"" + inbox_ +
                        "/people.json\", \"format\" = \"json\")");
  ASSERT_EQ(json.size(), 3u);
  EXPECT_EQ(json[0][0], "id");
  EXPECT_EQ(json[0][1], "BIGINT");
  EXPECT_EQ(json[2][1], "DOUBLE");
  EXPECT_NE(ErrorOf("DESC FUNCTION local(\"file_path\" = \"/etc/passwd\", \"format\" = "
                    "\"csv\")"),
            "");
}

TEST_F(TableE2ETest, ATableAndItsDefinitionAppearTogether) {
  Run("CREATE DATABASE tx");
  Run("BEGIN");
  Run("CREATE TABLE tx.gone (k INT) UNIQUE KEY(k)");
  Run("ROLLBACK");
  EXPECT_EQ(Run("SHOW TABLES FROM tx"), Rows{});
  Run("BEGIN");
  Run("CREATE TABLE tx.kept (k INT) UNIQUE KEY(k)");
  Run("INSERT INTO tx.kept VALUES (1)");
  Run("COMMIT");
  EXPECT_NE(ShowCreate("tx.kept").find("UNIQUE KEY(`k`)"), std::string::npos);
  // A refused definition leaves nothing behind.
  EXPECT_EQ(ErrorOf("CREATE TABLE tx.bad (k INT, v BITMAP)").substr(0, 5), "1235:");
  EXPECT_EQ(ErrorOf("CREATE TABLE tx.bad (k INT, v INT) UNIQUE KEY(v)").substr(0, 5), "1105:");
  EXPECT_EQ(ErrorOf("CREATE TABLE tx.bad (k INT) DUPLICATE KEY(k").substr(0, 5), "1064:");
  EXPECT_EQ(Run("SHOW TABLES FROM tx"), (Rows{{"kept"}}));
  // A name already taken is MySQL's 1050, and the first table's definition stands.
  EXPECT_EQ(ErrorOf("CREATE TABLE tx.kept (k INT) DUPLICATE KEY(k)").substr(0, 5), "1050:")
      << ErrorOf("CREATE TABLE tx.kept (k INT) DUPLICATE KEY(k)");
  EXPECT_NE(ShowCreate("tx.kept").find("UNIQUE KEY(`k`)"), std::string::npos);
  auto fresh = ConnectAs(e2e_->mysql_port(), "root", "");
  ASSERT_TRUE(fresh.ok());
  auto no_database = Query(fresh->get(), "CREATE TABLE nodb_table (k INT) DUPLICATE KEY(k)");
  ASSERT_FALSE(no_database.ok());
  EXPECT_EQ(no_database.status().message().substr(0, 5), "1046:");
}

TEST_F(TableE2ETest, CreatingADorisTableNeedsCreatePriv) {
  Run("CREATE DATABASE priv");
  Run("CREATE USER maker IDENTIFIED BY 'pw-maker'");
  Run("GRANT SELECT_PRIV ON priv.* TO maker");
  auto maker = ConnectAs(e2e_->mysql_port(), "maker", "pw-maker");
  ASSERT_TRUE(maker.ok()) << maker.status().ToString();
  auto refused = Query(maker->get(), "CREATE TABLE priv.t (k INT) UNIQUE KEY(k)");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().substr(0, 5), "1142:") << refused.status().message();
  EXPECT_EQ(Run("SHOW TABLES FROM priv"), Rows{});
  Run("GRANT CREATE_PRIV ON priv.* TO maker");
  EXPECT_TRUE(Query(maker->get(), "CREATE TABLE priv.t (k INT) UNIQUE KEY(k)").ok());
  EXPECT_NE(ShowCreate("priv.t").find("UNIQUE KEY(`k`)"), std::string::npos);
}

}  // namespace
}  // namespace millrace::table
