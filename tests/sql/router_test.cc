#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "common/logging.h"
#include "engine/engine_test_util.h"
#include "sql/mysql_errors.h"
#include "sql/session.h"
#include "testing/wait_for.h"

namespace millrace::sql {
namespace {

using Rows = std::vector<std::vector<std::string>>;

struct Table {
  std::vector<std::string> columns;
  Rows rows;
  int64_t affected_rows = 0;
  bool has_rows = false;
};

Result<Table> RunStatement(Session& session, std::string_view sql) {
  MR_ASSIGN_OR_RETURN(StatementResult result, session.Execute(sql));
  Table table;
  table.affected_rows = result.affected_rows;
  if (result.rows == nullptr) return table;
  table.has_rows = true;
  for (size_t c = 0; c < result.rows->column_count(); ++c) {
    table.columns.push_back(result.rows->column_name(c));
  }
  while (true) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::DataChunk> chunk, result.rows->Next());
    if (chunk == nullptr) break;
    for (size_t r = 0; r < chunk->size(); ++r) {
      std::vector<std::string> row;
      for (size_t c = 0; c < chunk->column_count(); ++c)
        row.push_back(chunk->GetText(c, r));
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = engine::OpenOrDie({});
    RouterOptions options;
    options.hidden_databases = {"internal_jobs"};
    options.system_variables = {{"wait_timeout", "77", true}};
    router_ = std::make_unique<Router>(db_.get(), options);
    ASSERT_TRUE(router_->InstallMysqlInformationSchema().ok());
    auto session = router_->NewSession(SessionInfo{42, "root", "10.1.2.3"});
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
  }

  Table Ok(std::string_view sql) {
    auto table = RunStatement(*session_, sql);
    EXPECT_TRUE(table.ok()) << sql << ": " << table.status().ToString();
    return table.ok() ? std::move(table).value() : Table{};
  }
  Rows Query(std::string_view sql) { return Ok(sql).rows; }
  // The MySQL error number of a failing statement (0 when it succeeds).
  int ErrorCode(std::string_view sql) {
    auto table = RunStatement(*session_, sql);
    return table.ok() ? 0 : ClassifyError(table.status()).code;
  }

  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<Session> session_;
};

TEST_F(RouterTest, DatabasesAreSchemasWithNoneSelectedAtStart) {
  EXPECT_EQ(Query("SELECT DATABASE()"), (Rows{{"NULL"}}));
  EXPECT_EQ(ErrorCode("SHOW TABLES"), kErNoDb);
  EXPECT_EQ(ErrorCode("USE nope"), kErBadDb);

  EXPECT_EQ(Ok("CREATE DATABASE shop").affected_rows, 1);
  EXPECT_EQ(ErrorCode("CREATE DATABASE shop"), kErDbCreateExists);
  EXPECT_EQ(ErrorCode("CREATE DATABASE IF NOT EXISTS shop DEFAULT CHARACTER SET utf8mb4"), 0);
  Ok("CREATE SCHEMA `Other`");
  Ok("CREATE SCHEMA internal_jobs");
  const Table dbs = Ok("SHOW DATABASES");
  EXPECT_EQ(dbs.columns, (std::vector<std::string>{"Database"}));
  EXPECT_EQ(dbs.rows, (Rows{{"Other"}, {"shop"}}));  // main and the hidden schema are not listed
  EXPECT_EQ(Query("SHOW DATABASES LIKE 'SH%'"), (Rows{{"shop"}}));

  Ok("use SHOP");
  EXPECT_EQ(Query("SELECT DATABASE(), schema()"), (Rows{{"shop", "shop"}}));
  Ok("CREATE TABLE `order items` (id INTEGER PRIMARY KEY, sku VARCHAR UNIQUE, "
     "qty DECIMAL(10,2) NOT NULL DEFAULT 1)");
  // The table went into the selected database, and resolves unqualified there.
  EXPECT_EQ(Query("SELECT table_schema FROM information_schema.tables WHERE table_name = "
                  "'order items'"),
            (Rows{{"shop"}}));
  Ok("INSERT INTO `order items` VALUES (1, 'a', 2.5)");
  const Table tables = Ok("SHOW FULL TABLES");
  EXPECT_EQ(tables.columns, (std::vector<std::string>{"Tables_in_shop", "Table_type"}));
  EXPECT_EQ(tables.rows, (Rows{{"order items", "BASE TABLE"}}));
  EXPECT_EQ(Query("SHOW TABLES FROM Other"), (Rows{}));
  EXPECT_EQ(ErrorCode("SHOW TABLES FROM nope"), kErBadDb);

  EXPECT_EQ(ErrorCode("DROP DATABASE internal_jobs"), kErDbAccessDenied);
  EXPECT_EQ(ErrorCode("DROP DATABASE nope"), kErDbDropExists);
  EXPECT_EQ(ErrorCode("DROP DATABASE IF EXISTS nope"), 0);
  EXPECT_EQ(Ok("DROP DATABASE shop").affected_rows, 1);
  EXPECT_EQ(Query("SELECT DATABASE()"), (Rows{{"NULL"}}));
  EXPECT_EQ(ErrorCode("SELECT * FROM shop.\"order items\""), kErNoSuchTable);
}

TEST_F(RouterTest, DescribeShowColumnsAndShowCreateTable) {
  Ok("CREATE DATABASE d");
  Ok("USE d");
  Ok("CREATE TABLE t (id INTEGER PRIMARY KEY, sku VARCHAR UNIQUE, qty DECIMAL(10,2) NOT NULL "
     "DEFAULT 1)");
  const Table desc = Ok("DESC t");
  EXPECT_EQ(desc.columns,
            (std::vector<std::string>{"Field", "Type", "Null", "Key", "Default", "Extra"}));
  EXPECT_EQ(desc.rows, (Rows{{"id", "int", "NO", "PRI", "NULL", ""},
                             {"sku", "longtext", "YES", "UNI", "NULL", ""},
                             {"qty", "decimal(10,2)", "NO", "", "1", ""}}));
  EXPECT_EQ(Ok("DESCRIBE d.T").rows, desc.rows);
  EXPECT_EQ(Ok("SHOW COLUMNS FROM t FROM d").rows, desc.rows);
  EXPECT_EQ(Query("SHOW COLUMNS FROM t LIKE 's%'"),
            (Rows{{"sku", "longtext", "YES", "UNI", "NULL", ""}}));
  EXPECT_EQ(Query("DESC t qty"), (Rows{{"qty", "decimal(10,2)", "NO", "", "1", ""}}));
  EXPECT_EQ(Ok("SHOW FULL COLUMNS FROM t").columns.size(), 9u);
  EXPECT_EQ(Query("SHOW COLUMNS FROM t WHERE `Key` = 'PRI'"),
            (Rows{{"id", "int", "NO", "PRI", "NULL", ""}}));
  // DuckDB's own DESCRIBE of a query still works.
  EXPECT_EQ(Ok("DESCRIBE SELECT 1 AS one").rows.size(), 1u);

  const Table create = Ok("SHOW CREATE TABLE t");
  EXPECT_EQ(create.columns, (std::vector<std::string>{"Table", "Create Table"}));
  ASSERT_EQ(create.rows.size(), 1u);
  EXPECT_EQ(create.rows[0][0], "t");
  // In MySQL's layout, which tools parse.
  EXPECT_EQ(create.rows[0][1].rfind("CREATE TABLE `t` (\n", 0), 0u) << create.rows[0][1];
  EXPECT_EQ(Query("SHOW CREATE DATABASE D"), (Rows{{"d", "CREATE DATABASE `d`"}}));

  EXPECT_EQ(ErrorCode("DESC nope"), kErNoSuchTable);
  auto missing = RunStatement(*session_, "SHOW CREATE TABLE nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "Table 'd.nope' doesn't exist");
  EXPECT_EQ(ErrorCode("DESC other.t"), kErBadDb);
}

// information_schema as MySQL clients read it: MySQL's views, upper-case columns and types,
// compared case-insensitively; DuckDB's own stays behind system.information_schema.
TEST_F(RouterTest, InformationSchemaHasMySqlShape) {
  Ok("CREATE DATABASE d");
  Ok("CREATE TABLE d.t (id INTEGER PRIMARY KEY, u UBIGINT NOT NULL, s VARCHAR UNIQUE, "
     "n DECIMAL(10,2), b BOOLEAN, ts TIMESTAMP, tz TIMESTAMPTZ, bin BLOB, l INTEGER[], "
     "h HUGEINT)");
  Ok("CREATE VIEW d.v AS SELECT id FROM d.t");
  EXPECT_EQ(Query("SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COMMENT FROM "
                  "information_schema.TABLES WHERE TABLE_SCHEMA = 'D' ORDER BY 1"),
            (Rows{{"t", "BASE TABLE", "DuckDB", ""}, {"v", "VIEW", "NULL", "VIEW"}}));
  EXPECT_EQ(Query("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM "
                  "INFORMATION_SCHEMA.schemata"),
            (Rows{{"d", "utf8mb4"}}));
  EXPECT_EQ(
      Query("SELECT COLUMN_NAME, ORDINAL_POSITION, IS_NULLABLE, DATA_TYPE, COLUMN_TYPE, "
            "CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, "
            "CHARACTER_SET_NAME, COLUMN_KEY FROM information_schema.columns WHERE "
            "table_schema = 'd' AND table_name = 't' ORDER BY ORDINAL_POSITION"),
      (Rows{
          {"id", "1", "NO", "int", "int", "NULL", "10", "0", "NULL", "NULL", "PRI"},
          {"u", "2", "NO", "bigint", "bigint unsigned", "NULL", "20", "0", "NULL", "NULL", ""},
          {"s", "3", "YES", "longtext", "longtext", "4294967295", "NULL", "NULL", "NULL", "utf8mb4",
           "UNI"},
          {"n", "4", "YES", "decimal", "decimal(10,2)", "NULL", "10", "2", "NULL", "NULL", ""},
          {"b", "5", "YES", "tinyint", "tinyint(1)", "NULL", "3", "0", "NULL", "NULL", ""},
          {"ts", "6", "YES", "datetime", "datetime(6)", "NULL", "NULL", "NULL", "6", "NULL", ""},
          {"tz", "7", "YES", "timestamp", "timestamp(6)", "NULL", "NULL", "NULL", "6", "NULL", ""},
          {"bin", "8", "YES", "longblob", "longblob", "4294967295", "NULL", "NULL", "NULL", "NULL",
           ""},
          {"l", "9", "YES", "longtext", "longtext", "4294967295", "NULL", "NULL", "NULL", "utf8mb4",
           ""},
          {"h", "10", "YES", "decimal", "decimal(39,0)", "NULL", "39", "0", "NULL", "NULL", ""}}));
  // Drivers compare as MySQL's general collation does: IS_NULLABLE = 'yes'.
  EXPECT_EQ(Query("SELECT count(*) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'T' AND "
                  "IS_NULLABLE = 'yes'"),
            (Rows{{"8"}}));
  EXPECT_EQ(Query("SELECT INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME FROM "
                  "information_schema.STATISTICS WHERE TABLE_NAME = 't' ORDER BY INDEX_NAME = "
                  "'PRIMARY' DESC"),
            (Rows{{"PRIMARY", "0", "1", "id"}, {"t_s_key", "0", "1", "s"}}));
  EXPECT_EQ(Query("SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION FROM "
                  "information_schema.KEY_COLUMN_USAGE WHERE TABLE_NAME = 't' AND "
                  "CONSTRAINT_NAME = 'PRIMARY'"),
            (Rows{{"PRIMARY", "id", "1"}}));
  EXPECT_EQ(Query("SELECT count(*) FROM information_schema.ROUTINES"), (Rows{{"0"}}));
  EXPECT_EQ(Query("SELECT TABLE_NAME FROM information_schema.VIEWS"), (Rows{{"v"}}));
  // DuckDB's own, by its catalog name.
  EXPECT_EQ(Query("SELECT data_type FROM system.information_schema.columns WHERE "
                  "table_schema = 'd' AND table_name = 't' AND column_name = 'id'"),
            (Rows{{"INTEGER"}}));
}

TEST_F(RouterTest, ShowTableStatusIndexAndEngines) {
  Ok("CREATE DATABASE d");
  Ok("USE d");
  Ok("CREATE TABLE t (a INTEGER, b VARCHAR, c INTEGER UNIQUE, PRIMARY KEY (a, b))");
  Ok("CREATE TABLE other (x INTEGER)");
  const Table status = Ok("SHOW TABLE STATUS LIKE 't'");
  ASSERT_EQ(status.columns.size(), 18u);
  EXPECT_EQ(status.columns[0], "Name");
  ASSERT_EQ(status.rows.size(), 1u);
  EXPECT_EQ(status.rows[0][0], "t");
  EXPECT_EQ(status.rows[0][1], "DuckDB");
  EXPECT_EQ(Query("SHOW TABLE STATUS FROM d WHERE Name = 'other'").size(), 1u);
  EXPECT_EQ(Query("SHOW TABLE STATUS").size(), 2u);
  const Table index = Ok("SHOW INDEX FROM t");
  EXPECT_EQ(index.columns[2], "Key_name");
  EXPECT_EQ(index.rows.size(), 3u);
  EXPECT_EQ(Query("SHOW KEYS FROM t FROM d WHERE Key_name = 'PRIMARY'").size(), 2u);
  EXPECT_EQ(Query("SHOW INDEXES IN d.t WHERE Column_name = 'b'")[0][3], "2");
  EXPECT_EQ(ErrorCode("SHOW INDEX FROM nope"), kErNoSuchTable);
  EXPECT_EQ(Query("SHOW ENGINES")[0][0], "DuckDB");
}

TEST_F(RouterTest, TransactionsAsClientsDriveThem) {
  Ok("CREATE DATABASE d");
  Ok("USE d");
  Ok("CREATE TABLE t (x INTEGER)");
  // autocommit = 0: the first statement opens a transaction, ROLLBACK ends it.
  Ok("SET autocommit = 0");
  EXPECT_FALSE(session_->in_transaction());
  Ok("INSERT INTO t VALUES (1)");
  EXPECT_TRUE(session_->in_transaction());
  Ok("ROLLBACK");
  EXPECT_FALSE(session_->in_transaction());
  EXPECT_EQ(Query("SELECT count(*) FROM t"), (Rows{{"0"}}));
  Ok("INSERT INTO t VALUES (2)");
  Ok("COMMIT");
  // Setting autocommit to 1 commits the open transaction.
  Ok("INSERT INTO t VALUES (3)");
  Ok("SET autocommit = 1");
  EXPECT_FALSE(session_->in_transaction());
  Ok("ROLLBACK");
  EXPECT_EQ(Query("SELECT x FROM t ORDER BY x"), (Rows{{"2"}, {"3"}}));
  // START TRANSACTION's MySQL forms.
  Ok("START TRANSACTION READ ONLY");
  EXPECT_TRUE(session_->in_transaction());
  EXPECT_NE(ErrorCode("INSERT INTO t VALUES (4)"), 0);
  Ok("ROLLBACK");
  Ok("START TRANSACTION READ WRITE, WITH CONSISTENT SNAPSHOT");
  Ok("INSERT INTO t VALUES (4)");
  Ok("ROLLBACK");
  EXPECT_EQ(ErrorCode("START TRANSACTION READ SOMETIMES"), kErParse);
  Ok("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  Ok("SET TRANSACTION READ ONLY");
  EXPECT_EQ(Query("SELECT count(*) FROM t"), (Rows{{"2"}}));
}

TEST_F(RouterTest, SystemVariablesAndSessionFunctionsAnswerAsMySql) {
  const Table comment = Ok("SELECT @@version_comment LIMIT 1");
  EXPECT_EQ(comment.columns, (std::vector<std::string>{"@@version_comment"}));
  EXPECT_EQ(comment.rows, (Rows{{router_->options().version_comment}}));
  const Table t =
      Ok("select @@session.auto_increment_increment AS auto_increment_increment, "
         "@@character_set_client, @@wait_timeout, connection_id(), USER(), current_user(), "
         "VERSION(), concat(@@version, '!') AS v");
  EXPECT_EQ(t.columns, (std::vector<std::string>{
                           "auto_increment_increment", "@@character_set_client", "@@wait_timeout",
                           "connection_id()", "USER()", "current_user()", "VERSION()", "v"}));
  EXPECT_EQ(t.rows,
            (Rows{{"1", "utf8mb4", "77", "42", "root@10.1.2.3", "root@%",
                   router_->options().server_version, router_->options().server_version + "!"}}));
  EXPECT_EQ(ErrorCode("SELECT @@no_such_variable"), kErUnknownSystemVariable);

  Ok("SET NAMES latin1");
  Ok("SET autocommit=0, @@session.sql_select_limit = DEFAULT, character_set_results = NULL");
  EXPECT_FALSE(session_->autocommit());
  EXPECT_EQ(Query("SELECT @@autocommit, @@character_set_client, @@character_set_results"),
            (Rows{{"0", "latin1", "NULL"}}));
  Ok("SET SESSION autocommit = ON");
  EXPECT_TRUE(session_->autocommit());
  EXPECT_EQ(ErrorCode("SET autocommit = 'maybe'"), kErWrongValueForVar);
  EXPECT_EQ(ErrorCode("SET GLOBAL autocommit = 1"), kErNotSupportedYet);
  EXPECT_EQ(ErrorCode("SET no_such_setting = 1"), kErUnknownSystemVariable);  // DuckDB's answer
  Ok("SET threads = 2");  // a DuckDB setting goes to DuckDB
  EXPECT_EQ(Query("SELECT current_setting('threads')"), (Rows{{"2"}}));
  Ok("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");

  const Table vars = Ok("SHOW VARIABLES LIKE 'auto%'");
  EXPECT_EQ(vars.columns, (std::vector<std::string>{"Variable_name", "Value"}));
  EXPECT_EQ(vars.rows, (Rows{{"auto_increment_increment", "1"}, {"autocommit", "1"}}));
  EXPECT_EQ(Query("SHOW SESSION VARIABLES WHERE Variable_name = 'wait_timeout'"),
            (Rows{{"wait_timeout", "77"}}));
  EXPECT_EQ(Query("SHOW COLLATION LIKE 'utf8mb4_general_ci'"),
            (Rows{{"utf8mb4_general_ci", "utf8mb4", "45", "Yes", "Yes", "1"}}));
  EXPECT_EQ(Query("SHOW CHARACTER SET WHERE Charset = 'utf8mb4'"),
            (Rows{{"utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", "4"}}));
}

TEST_F(RouterTest, DriverConnectQueriesAreAnswered) {
  // What MySQL Connector/J 8 sends right after connecting.
  const Table jdbc =
      Ok("/* mysql-connector-java-8.0.33 */SELECT @@session.auto_increment_increment AS "
         "auto_increment_increment, @@character_set_client AS character_set_client, "
         "@@character_set_connection AS character_set_connection, @@character_set_results AS "
         "character_set_results, @@character_set_server AS character_set_server, "
         "@@collation_server AS collation_server, @@collation_connection AS collation_connection, "
         "@@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license "
         "AS license, @@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS "
         "max_allowed_packet, @@net_write_timeout AS net_write_timeout, @@performance_schema AS "
         "performance_schema, @@query_cache_size AS query_cache_size, @@query_cache_type AS "
         "query_cache_type, @@sql_mode AS sql_mode, @@system_time_zone AS system_time_zone, "
         "@@time_zone AS time_zone, @@transaction_isolation AS transaction_isolation, "
         "@@wait_timeout AS wait_timeout");
  ASSERT_EQ(jdbc.rows.size(), 1u);
  EXPECT_EQ(jdbc.columns.size(), 21u);
  EXPECT_EQ(jdbc.columns[20], "wait_timeout");
  EXPECT_EQ(jdbc.rows[0][20], "77");
  // SQLAlchemy and PyMySQL.
  EXPECT_EQ(Query("SHOW VARIABLES LIKE 'lower_case_table_names'"),
            (Rows{{"lower_case_table_names", "0"}}));
  EXPECT_EQ(Query("SELECT CAST('test plain returns' AS CHAR(60)) AS anon_1"),
            (Rows{{"test plain returns"}}));
  Ok("SET AUTOCOMMIT = 0");
  Ok("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
  EXPECT_EQ(Query("SELECT @@tx_isolation, @@collation_connection"),
            (Rows{{"REPEATABLE-READ", "utf8mb4_unicode_ci"}}));
}

TEST_F(RouterTest, MySqlLexicalFormsAreTranslatedForDuckDb) {
  Ok("CREATE TABLE `we\"ird` (`select` INTEGER)");
  Ok("INSERT INTO `we\"ird` VALUES (1) # a MySQL comment");
  EXPECT_EQ(Query("SELECT `select` FROM `we\"ird` WHERE '`' = '`' -- x"), (Rows{{"1"}}));
  // Not a session function when qualified or when it takes arguments.
  EXPECT_EQ(Query("SELECT length(version()) > 0, '@@version'"), (Rows{{"true", "@@version"}}));
  EXPECT_EQ(Query("SELECT * FROM range(10) LIMIT 2, 3"), (Rows{{"2"}, {"3"}, {"4"}}));
  EXPECT_EQ(Query("SELECT * FROM range(10) LIMIT 2"), (Rows{{"0"}, {"1"}}));
  // Backslashes are plain characters, as under MySQL's NO_BACKSLASH_ESCAPES.
  EXPECT_EQ(Query(R"(SELECT 'a\b''c' AS s)"), (Rows{{R"(a\b'c)"}}));
  // Charset introducers, as drivers that interpolate parameters write them; `_x` alone is a
  // name.
  EXPECT_EQ(Query("SELECT typeof(_binary'ab'), typeof(_utf8mb4 'c'), _latin1'd' = 'd'"),
            (Rows{{"BLOB", "VARCHAR", "true"}}));
  EXPECT_EQ(Query("SELECT _binary FROM (SELECT 1 AS _binary)"), (Rows{{"1"}}));
  // MySQL's integer casts and CONVERT(x, type), as Connector/J's metadata queries write them.
  EXPECT_EQ(Query("SELECT typeof(CAST('7' AS SIGNED INTEGER)), typeof(CAST(7 AS UNSIGNED)), "
                  "CONVERT(CONVERT('8', SIGNED) + 1, UNSIGNED INTEGER), locate('b', 'abc')"),
            (Rows{{"BIGINT", "UBIGINT", "9", "2"}}));
  // Not a cast: a column named signed; a list's commas; a qualified convert().
  EXPECT_EQ(Ok("SELECT 1 AS signed").columns, (std::vector<std::string>{"signed"}));
  EXPECT_EQ(Query("SELECT CONVERT([1, 2], VARCHAR[])"), (Rows{{"[1, 2]"}}));
  EXPECT_EQ(Query("SELECT CONVERT({'a': 1, 'b': 2}, VARCHAR)"), (Rows{{"{'a': 1, 'b': 2}"}}));
  // Literal columns are named as MySQL names them.
  const Table literals = Ok("SELECT 'abc', 'it''s' , TRUE, false, '', 'x' AS y, 'a' || 'b'");
  EXPECT_EQ(literals.columns,
            (std::vector<std::string>{"abc", "it's", "TRUE", "false", "''", "y", "('a' || 'b')"}));
}

TEST_F(RouterTest, ErrorsCarryMySqlCodes) {
  EXPECT_EQ(ErrorCode("SELEC 1"), kErParse);
  EXPECT_EQ(ErrorCode("SELECT * FROM nope"), kErNoSuchTable);
  EXPECT_EQ(ErrorCode("SELECT nope FROM (SELECT 1 AS a)"), kErBadField);
  EXPECT_EQ(ErrorCode("SELECT no_such_function(1)"), kErSpDoesNotExist);
  EXPECT_EQ(ErrorCode("  /* only a comment */ "), kErEmptyQuery);
  Ok("CREATE TABLE t (a INTEGER PRIMARY KEY, b INTEGER NOT NULL)");
  EXPECT_EQ(ErrorCode("CREATE TABLE t (a INTEGER)"), kErTableExists);
  Ok("INSERT INTO t VALUES (1, 1)");
  EXPECT_EQ(ErrorCode("INSERT INTO t VALUES (1, 2)"), kErDupEntry);
  EXPECT_EQ(ErrorCode("INSERT INTO t VALUES (3, 3), (3, 3)"), kErDupEntry);
  EXPECT_EQ(ErrorCode("INSERT INTO t VALUES (2, NULL)"), kErBadNull);
  EXPECT_EQ(ErrorCode("SELECT 'x'::INTEGER"), kErTruncatedWrongValue);
  // COMMIT/ROLLBACK without a transaction succeed as in MySQL; a real transaction works.
  EXPECT_EQ(ErrorCode("COMMIT"), 0);
  EXPECT_EQ(ErrorCode("ROLLBACK"), 0);
  Ok("START TRANSACTION");
  Ok("INSERT INTO t VALUES (5, 5)");
  Ok("ROLLBACK");
  EXPECT_EQ(Query("SELECT count(*) FROM t"), (Rows{{"1"}}));
}

TEST_F(RouterTest, ShowWarningsReportsThePreviousError) {
  EXPECT_EQ(Query("SHOW WARNINGS"), (Rows{}));
  EXPECT_EQ(ErrorCode("SELECT * FROM nope"), kErNoSuchTable);
  const Table warnings = Ok("SHOW WARNINGS");
  EXPECT_EQ(warnings.columns, (std::vector<std::string>{"Level", "Code", "Message"}));
  ASSERT_EQ(warnings.rows.size(), 1u);
  EXPECT_EQ(warnings.rows[0][0], "Error");
  EXPECT_EQ(warnings.rows[0][1], "1146");
  EXPECT_NE(warnings.rows[0][2].find("Table with name nope does not exist"), std::string::npos);
  EXPECT_EQ(Query("SHOW ERRORS").size(), 1u);  // still the same diagnostics
  // No mask over the text a client's statement echoes: it would confirm a guessed secret.
  Logger::Default().AddSecret("hunter2-secret");
  EXPECT_EQ(ErrorCode("SELECT * FROM \"hunter2-secret\""), kErNoSuchTable);
  const Rows echoed = Query("SHOW WARNINGS");
  ASSERT_EQ(echoed.size(), 1u);
  EXPECT_NE(echoed[0][2].find("hunter2-secret"), std::string::npos) << echoed[0][2];
  EXPECT_EQ(echoed[0][2].find("****"), std::string::npos) << echoed[0][2];
  Ok("SELECT 1");
  EXPECT_EQ(Query("SHOW WARNINGS"), (Rows{}));
}

// A job-like statement handler, registered by leading keywords.
class RecordingHandler final : public StatementHandler {
 public:
  explicit RecordingHandler(std::string answer) : answer_(std::move(answer)) {}
  Result<StatementResult> Execute(const StatementContext& ctx) override {
    seen.emplace_back(ctx.sql);
    return ctx.session.ExecuteDuckDb("SELECT " + engine::QuoteLiteral(answer_) + " AS handled");
  }
  std::vector<std::string> seen;

 private:
  std::string answer_;
};

TEST_F(RouterTest, RegisteredHandlersWinByLongestKeywordMatch) {
  auto create_job = std::make_shared<RecordingHandler>("create job");
  auto pause = std::make_shared<RecordingHandler>("pause");
  router_->RegisterStatement({"create", "job"}, create_job);
  router_->RegisterStatement({"PAUSE"}, pause);
  const std::string job =
      "/* c */ Create  JOB j ON STREAMING DO INSERT INTO t SELECT * FROM S3(\"uri\" = \"x\")";
  EXPECT_EQ(Query(job), (Rows{{"create job"}}));
  EXPECT_EQ(create_job->seen, (std::vector<std::string>{job}));  // raw text, nothing expanded
  EXPECT_EQ(Query("pause job where jobname = 'j'"), (Rows{{"pause"}}));
  // CREATE DATABASE still reaches the built-in; other CREATEs reach DuckDB.
  EXPECT_EQ(ErrorCode("CREATE DATABASE x"), 0);
  EXPECT_EQ(ErrorCode("CREATE TABLE x.t (a INTEGER)"), 0);
  EXPECT_EQ(create_job->seen.size(), 1u);
}

TEST_F(RouterTest, DorisTableFunctionsExpandInsideStatements) {
  router_->table_functions().Register("gen", std::make_shared<NamedParameterExpander>("range"));
  // range() takes no named parameters: DuckDB's binder reports the expanded call.
  auto result = RunStatement(*session_, "SELECT * FROM gen(\"step\" = 1)");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("\"step\""), std::string::npos)
      << result.status().message();
  // A syntax error in the Doris arguments is reported before DuckDB sees anything.
  auto bad = RunStatement(*session_, "SELECT * FROM gen(\"step\" 1)");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("gen(): expected '='"), std::string::npos);
}

// A statement's bound is taken from its session when it starts and measured on the router's
// clock: past it, InterruptOverdue interrupts it and it fails with 3024 naming the variable.
TEST(RouterBoundsTest, StatementsPastTheirBoundAreInterrupted) {
  auto db = engine::OpenOrDie({});
  ManualClock clock;
  RouterOptions options;
  options.clock = &clock;
  Router router(db.get(), options);
  auto session = router.NewSession(SessionInfo{7, "root", "127.0.0.1"});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_TRUE(RunStatement(**session, "SET query_timeout = 5").ok());
  EXPECT_EQ(router.InterruptOverdue(), 0);  // nothing runs

  Status ended;
  std::thread query([&] {
    ended = RunStatement(**session, "SELECT count(*) FROM range(100000000000) a").status();
  });
  ASSERT_TRUE(testing::WaitFor([&] {
    auto processes = router.Processes();
    return !processes.empty() && processes[0].running;
  }));
  clock.Advance(std::chrono::seconds(4));
  EXPECT_EQ(router.InterruptOverdue(), 0);  // not yet
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(router.InterruptOverdue(), 1);
  query.join();
  EXPECT_EQ(ClassifyError(ended).code, kErQueryTimeout) << ended.ToString();
  EXPECT_NE(ended.message().find("query_timeout is 5 s"), std::string::npos) << ended.ToString();
  // SHOW WARNINGS tells the same, and the session goes on.
  auto warnings = RunStatement(**session, "SHOW WARNINGS");
  ASSERT_TRUE(warnings.ok());
  ASSERT_EQ(warnings->rows.size(), 1u);
  EXPECT_EQ(warnings->rows[0][1], "3024");
  auto next = RunStatement(**session, "SELECT 1");
  ASSERT_TRUE(next.ok()) << next.status().ToString();

  // 0 is no bound: a statement runs however long the clock says it took.
  ASSERT_TRUE(RunStatement(**session, "SET query_timeout = 0").ok());
  std::thread unbounded([&] {
    ended = RunStatement(**session, "SELECT count(*) FROM range(100000000000) a").status();
  });
  ASSERT_TRUE(testing::WaitFor([&] {
    auto processes = router.Processes();
    return !processes.empty() && processes[0].running;
  }));
  clock.Advance(std::chrono::hours(24 * 365));
  EXPECT_EQ(router.InterruptOverdue(), 0);
  ASSERT_TRUE(router.Kill(7, /*end_session=*/false).ok());
  unbounded.join();
  EXPECT_EQ(ClassifyError(ended).code, kErQueryInterrupted) << ended.ToString();
}

}  // namespace
}  // namespace millrace::sql
