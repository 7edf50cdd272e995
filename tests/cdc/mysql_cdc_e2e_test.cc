// Change data capture from a real MariaDB 10.11 end to end: the real `millrace serve` binary,
// Connector/C, and a MariaDB server started for this binary (testing/mariadb_server.h) with
// log_bin, binlog_format ROW, binlog_row_image FULL and binlog_row_metadata FULL. Targets are
// compared with their sources by checksums over a canonical text of each value
// (cdc_checksum.h), not by counts alone.
//
// MILLRACE_CDC_ROWS (default 10000) sizes the snapshot tables; e.g. 100000 for a manual run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "cdc/cdc_test_env.h"
#include "testing/wait_for.h"

namespace millrace::cdc {
namespace {

using testing::WaitFor;

class MysqlCdcTest : public MysqlCdcEnvTest {
 protected:
  static std::string My(const std::string& sql) { return env_->Src(sql); }
};

TEST_F(MysqlCdcTest, SnapshotOfThreeTablesWhileAnotherConnectionWritesThenTheStream) {
  const int rows = EnvInt("MILLRACE_CDC_ROWS", 10000);
  for (const std::string t : {"snap_a", "snap_b", "snap_c"}) {
    My("CREATE TABLE " + t + " (id INT PRIMARY KEY, name TEXT, qty INT); INSERT INTO " + t +
       " SELECT seq, CONCAT('name ', seq), seq % 97 FROM seq_1_to_" + std::to_string(rows));
    ItemsTarget(t);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      const std::string n = std::to_string(i);
      const std::string id = std::to_string(1 + (i * 7919) % rows);
      My("INSERT INTO snap_a VALUES (" + std::to_string(rows + 1 + i) + ", 'new', " + n +
         "); UPDATE snap_b SET qty = qty + 1, name = 'upd " + n + "' WHERE id = " + id +
         "; DELETE FROM snap_c WHERE id = " + id + "; UPDATE snap_a SET id = id + " +
         std::to_string(10 * rows) + " WHERE id = " + id);
      ++rounds;
    }
  });
  // Each table by a job of its own, and two splits read at once for one of them.
  ASSERT_EQ(CreateJob("job_snap_a", "INSERT INTO cdc.snap_a SELECT * FROM " +
                                        Stream("snap_a", ", \"snapshot_split_size\" = \"3000\"")),
            Status::Ok());
  ASSERT_EQ(CreateJob("job_snap_b", "INSERT INTO cdc.snap_b SELECT * FROM " +
                                        Stream("snap_b",
                                               ", \"snapshot_split_size\" = \"2000\", "
                                               "\"snapshot_parallelism\" = \"2\"")),
            Status::Ok());
  ASSERT_EQ(CreateJob("job_snap_c",
                      "INSERT INTO cdc.snap_c SELECT id, name, qty FROM " + Stream("snap_c")),
            Status::Ok());
  WaitFor([&] { return rounds >= 200; }, std::chrono::seconds(120));
  stop = true;
  writer.join();
  for (const std::string t : {"snap_a", "snap_b", "snap_c"})
    Converged(t, "cdc." + t, kItemColumns);
  const std::string offset = JobValue("job_snap_a", "CurrentOffset");
  EXPECT_NE(offset.find("\"file\""), std::string::npos) << offset;
  EXPECT_NE(offset.find("\"pos\""), std::string::npos) << offset;
  EXPECT_NE(offset.find("\"gtids\""), std::string::npos) << offset;
  EXPECT_EQ(offset.find("snapshot"), std::string::npos) << offset;
}

TEST_F(MysqlCdcTest, EveryKindOfChangeIsAppliedAndARolledBackTransactionIsNot) {
  My("CREATE TABLE ops (id INT PRIMARY KEY, name VARCHAR(100), qty INT)");
  ItemsTarget("ops");
  ASSERT_EQ(CreateJob("job_ops", "INSERT INTO cdc.ops SELECT * FROM " + Stream("ops")),
            Status::Ok());
  My("INSERT INTO ops SELECT seq, CONCAT('n', seq), seq FROM seq_1_to_50");
  EXPECT_EQ(Converged("ops", "cdc.ops", kItemColumns).substr(0, 3), "50:");
  My("UPDATE ops SET qty = qty * 10 WHERE id <= 10");  // non-key
  My("UPDATE ops SET id = id + 1000 WHERE id > 45");   // key
  My("DELETE FROM ops WHERE id BETWEEN 20 AND 24");
  Converged("ops", "cdc.ops", kItemColumns);
  // One transaction of several statements, touching the same key more than once.
  My("BEGIN; INSERT INTO ops VALUES (500, 'a', 1); UPDATE ops SET qty = 2 WHERE id = 500; "
     "DELETE FROM ops WHERE id = 1; INSERT INTO ops VALUES (1, 'again', 3); "
     "UPDATE ops SET name = 'x' WHERE id = 500; COMMIT");
  Converged("ops", "cdc.ops", kItemColumns);
  My("BEGIN; INSERT INTO ops VALUES (900, 'never', 0); DELETE FROM ops WHERE id = 2; ROLLBACK");
  My("INSERT INTO ops VALUES (901, 'after rollback', 0)");
  Converged("ops", "cdc.ops", kItemColumns);
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.ops WHERE id = 900"), "0");
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.ops WHERE id = 2"), "1");
  // TRUNCATE commits on its own in MySQL: the rows before it go, the ones after it stay.
  My("INSERT INTO ops VALUES (950, 'before truncate', 0); TRUNCATE TABLE ops; "
     "INSERT INTO ops VALUES (7, 'after truncate', 7)");
  EXPECT_EQ(Converged("ops", "cdc.ops", kItemColumns).substr(0, 2), "1:");
  EXPECT_EQ(MrValue("SELECT name FROM cdc.ops"), "after truncate");
  // VERIFY JOB counts the table at the source (the job's connection parameters) and the target.
  auto verified = Mr("VERIFY JOB job_ops");
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  ASSERT_EQ(verified->size(), 2u);
  EXPECT_EQ((*verified)[1], (std::vector<std::string>{"TABLE_ROWS", "NULL", "src.ops",
                                                      "source 1 rows; target cdc.ops 1 rows "
                                                      "(equal)"}));
}

// FROM MYSQL (...) of the test server; `extra` is appended to its parameters.
std::string FromMysql(const std::string& extra) {
  const testing::MariadbServer& db = MysqlCdcTest::env().mariadb();
  return "FROM MYSQL (\"jdbc_url\" = \"" + db.JdbcUrl() + "\", \"user\" = \"" + db.user() +
         "\", \"password\" = \"" + db.password() + "\", \"database\" = \"" + kMysqlDatabase +
         "\", \"driver_url\" = \"mysql-connector-j-8.4.0.jar\", \"driver_class\" = "
         "\"com.mysql.cj.jdbc.Driver\"" +
         extra + ")";
}

Status CreateDatabaseJob(const std::string& name, const std::string& from_extra,
                         const std::string& database) {
  return MysqlCdcTest::env()
      .Mr("CREATE JOB " + name + " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") " +
          FromMysql(from_extra) + " TO DATABASE " + database +
          " (\"table.create.properties.replication_num\" = \"1\")")
      .status();
}

// Every common MySQL type, through a target the job makes: values from the snapshot and from
// the stream alike; the zero date arrives as NULL (DuckDB has no year 0).
TEST_F(MysqlCdcTest, EveryCommonTypeKeepsItsValue) {
  My("CREATE TABLE typed (id BIGINT PRIMARY KEY, ti TINYINT, si SMALLINT UNSIGNED, "
     "mi MEDIUMINT, ui INT UNSIGNED, bi BIGINT UNSIGNED, d DECIMAL(12,3), dw DECIMAL(50,20), "
     "f FLOAT, db DOUBLE, b BIT(5), dt DATE, dtm DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(2), "
     "y YEAR, c CHAR(5), vc VARCHAR(20), tx TEXT, bl BLOB, bn BINARY(4), vb VARBINARY(10), "
     "e ENUM('a','bb','c'), s SET('x','y','z'), j JSON, lat VARCHAR(10) CHARACTER SET latin1, "
     "emoji VARCHAR(10) CHARACTER SET utf8mb4)");
  const std::string row1 =
      "(1, -128, 65535, -8388608, 4294967295, 18446744073709551615, 123456789.125, "
      "'12345678901234567890.12345678901234567890', 1.5, -2.25e10, b'10101', '2024-02-29', "
      "'1999-12-31 23:59:59.123456', '2024-06-01 12:00:00.250', '-838:59:59.00', 2155, 'ab', "
      "'héllo', 'tab\\there\\nnewline \\\\ back', x'00ff10', x'01020304', x'', 'bb', 'x,z', "
      "'{\"a\": [1, 2]}', 'café €', '😀 ok')";
  const std::string nulls =
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";
  My("INSERT INTO typed VALUES " + row1 + ", (2, " + nulls + ")");
  ASSERT_TRUE(Mr("CREATE DATABASE typed_db").ok());
  ASSERT_EQ(CreateDatabaseJob("job_typed", ", \"include_tables\" = \"typed\"", "typed_db"),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("job_typed"));
  // The same values again through the binlog, and an update of every column.
  std::string row11 = row1;
  row11.replace(0, 2, "(11");
  My("INSERT INTO typed VALUES " + row11 + ", (12, " + nulls + "); " +
     "UPDATE typed SET ti = 127, si = 0, d = -0.5, f = -3.25, b = b'1', dt = '1970-01-01', "
     "dtm = '2038-01-19 03:14:08', ts = '1970-01-01 00:00:01', tm = '00:00:00.01', y = 1901, "
     "c = 'z', vc = '', e = 'c', s = '', j = '[]', lat = 'ÿ' WHERE id = 2");
  // The zero date: NULL in the target (the snapshot and the stream agree).
  My("INSERT INTO typed (id, dt, dtm) VALUES (100, '0000-00-00', '0000-00-00 00:00:00')");
  const std::vector<CanonColumn> columns = {{"id"},
                                            {"ti"},
                                            {"si"},
                                            {"mi"},
                                            {"ui"},
                                            {"bi"},
                                            {"d"},
                                            {"dw"},
                                            {"f", Canon::kFloat},
                                            {"db", Canon::kFloat},
                                            {"b", Canon::kBit},
                                            {"dt"},
                                            {"dtm", Canon::kTimestamp},
                                            {"ts", Canon::kTimeTz},
                                            {"tm"},
                                            {"y"},
                                            {"c", Canon::kChar},
                                            {"vc"},
                                            {"tx"},
                                            {"bl", Canon::kBytea},
                                            {"bn", Canon::kBytea},
                                            {"vb", Canon::kBytea},
                                            {"e"},
                                            {"s"},
                                            {"j"},
                                            {"lat"},
                                            {"emoji"}};
  Converged("(SELECT * FROM typed WHERE id < 100) t",
            "(SELECT * FROM typed_db.typed WHERE id < 100) t", columns);
  ASSERT_TRUE(WaitFor([] { return MrValue("SELECT count(*) FROM typed_db.typed") == "5"; }));
  EXPECT_EQ(MrValue("SELECT concat_ws(',', id, coalesce(CAST(dt AS VARCHAR), 'null'), "
                    "coalesce(CAST(dtm AS VARCHAR), 'null')) FROM typed_db.typed WHERE id = 100"),
            "100,null,null");
}

TEST_F(MysqlCdcTest, ADatabaseJobMakesMissingTablesAndFollowsEveryTable) {
  My("CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, since DATE);"
     "CREATE TABLE orders (order_id BIGINT, line INT, amount DECIMAL(10,2), note VARCHAR(30), "
     "PRIMARY KEY (order_id, line));"
     "CREATE TABLE ignored (id INT PRIMARY KEY);"
     "INSERT INTO customers SELECT seq, CONCAT('c', seq), '2026-01-01' + INTERVAL seq DAY FROM "
     "seq_1_to_40;"
     "INSERT INTO orders SELECT seq DIV 4, seq % 4, seq * 1.25, CONCAT('n', seq) FROM "
     "seq_1_to_100;");
  ASSERT_TRUE(Mr("CREATE DATABASE shopdb").ok());
  // One target exists already (a UNIQUE KEY table of the user's); the other is made.
  ASSERT_TRUE(Mr("CREATE TABLE shopdb.customers (id INT, name VARCHAR(50), since DATE) UNIQUE "
                 "KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_EQ(CreateDatabaseJob("shop_job",
                              ", \"include_tables\" = \"customers,orders,ignored\", "
                              "\"exclude_tables\" = \"ignored\", \"snapshot_split_size\" = \"7\"",
                              "shopdb"),
            Status::Ok());
  // One transaction over both tables, during or after the snapshot.
  My("BEGIN; UPDATE customers SET name = 'renamed' WHERE id = 3; "
     "DELETE FROM orders WHERE order_id = 2; INSERT INTO orders VALUES (99, 1, 10.5, NULL); "
     "UPDATE orders SET line = 9 WHERE order_id = 5 AND line = 0; COMMIT;"
     "INSERT INTO ignored VALUES (1)");
  Converged("customers", "shopdb.customers", {{"id"}, {"name"}, {"since"}});
  Converged("orders", "shopdb.orders", {{"order_id"}, {"line"}, {"amount"}, {"note"}});
  auto shown = Mr("SHOW CREATE TABLE shopdb.orders");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  const std::string ddl = (*shown)[0][1];
  EXPECT_NE(ddl.find("UNIQUE KEY(`order_id`, `line`)"), std::string::npos) << ddl;
  EXPECT_NE(ddl.find("decimal(10,2)"), std::string::npos) << ddl;
  // Doris counts bytes: 30 characters of utf8mb4 take up to 120.
  EXPECT_NE(ddl.find("varchar(120)"), std::string::npos) << ddl;
  EXPECT_EQ(MrValue("SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                    "'shopdb' AND table_name = 'ignored'"),
            "0");
  const std::string sql = JobValue("shop_job", "ExecuteSql");
  EXPECT_EQ(sql.find(env().source_password()), std::string::npos) << sql;
  EXPECT_NE(sql.find("FROM MYSQL"), std::string::npos) << sql;
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'shop_job'").ok());
}

// ADD and DROP COLUMN mid-stream: the database form's targets follow them in the transaction of
// the changes after them; a table job goes on while its SELECT fits and pauses when it no
// longer does.
TEST_F(MysqlCdcTest, SchemaChangesMidStream) {
  My("CREATE TABLE evolving (id INT PRIMARY KEY, a VARCHAR(10), b INT);"
     "INSERT INTO evolving VALUES (1, 'one', 10), (2, 'two', 20);"
     "CREATE TABLE narrow (id INT PRIMARY KEY, v INT, w INT); INSERT INTO narrow VALUES (1, 1, 1)");
  ASSERT_TRUE(Mr("CREATE DATABASE evolve_db").ok());
  ASSERT_EQ(CreateDatabaseJob("job_evolve", ", \"include_tables\" = \"evolving\"", "evolve_db"),
            Status::Ok());
  ItemsTarget("narrow_t");
  ASSERT_EQ(CreateJob("job_narrow",
                      "INSERT INTO cdc.narrow_t (id, qty) SELECT id, v FROM " + Stream("narrow")),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("job_evolve"));
  ASSERT_TRUE(WaitUntilStreaming("job_narrow"));
  My("ALTER TABLE evolving ADD COLUMN c DATE; INSERT INTO evolving VALUES (3, 'three', 30, "
     "'2026-12-03'); UPDATE evolving SET c = '2020-01-01' WHERE id = 1;"
     "ALTER TABLE evolving DROP COLUMN b; INSERT INTO evolving VALUES (4, 'four', NULL)");
  Converged("evolving", "evolve_db.evolving", {{"id"}, {"a"}, {"c"}});
  // w is not read by the SELECT: dropping it changes nothing; dropping v stops the job.
  My("ALTER TABLE narrow DROP COLUMN w; INSERT INTO narrow VALUES (2, 2)");
  ASSERT_TRUE(WaitFor([] { return MrValue("SELECT count(*) FROM cdc.narrow_t") == "2"; }));
  My("ALTER TABLE narrow DROP COLUMN v; INSERT INTO narrow VALUES (3)");
  const std::string paused = WaitUntilPaused("job_narrow");
  EXPECT_NE(paused.find("no longer fits"), std::string::npos) << paused;
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.narrow_t"), "2");
}

TEST_F(MysqlCdcTest, ATableJobStopsRightBeforeASchemaChangeItsSelectDoesNotFitAndGoesOnAfterAlter) {
  My("CREATE TABLE wide (id INT PRIMARY KEY, v VARCHAR(10))");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.wide (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_EQ(CreateJob("job_wide", "INSERT INTO cdc.wide SELECT * FROM " +
                                      Stream("wide", ", \"offset\" = \"latest\"")),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("job_wide"));
  // One poll may read all three; the job applies the insert before the change it cannot.
  My("INSERT INTO wide VALUES (1, 'a'); ALTER TABLE wide ADD COLUMN w INT;"
     "INSERT INTO wide VALUES (2, 'b', 5)");
  const std::string paused = WaitUntilPaused("job_wide");
  EXPECT_NE(paused.find("no longer fits"), std::string::npos) << paused;
  EXPECT_EQ(MrValue("SELECT v FROM cdc.wide WHERE id = 1"), "a");
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.wide WHERE id = 2"), "0");
  // A SELECT that fits the new columns takes it from there.
  ASSERT_TRUE(Mr("ALTER JOB job_wide INSERT INTO cdc.wide SELECT id, v FROM " +
                 Stream("wide", ", \"offset\" = \"latest\""))
                  .ok());
  ASSERT_TRUE(Mr("RESUME JOB WHERE jobname = 'job_wide'").ok());
  Converged("wide", "cdc.wide", {{"id"}, {"v"}});
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_wide'").ok());
}

// A job dropped in the middle of its snapshot leaves nothing of it in the database file.
TEST_F(MysqlCdcTest, AJobDroppedMidSnapshotLeavesNoSnapshotState) {
  My("CREATE TABLE halfway (id INT PRIMARY KEY, name VARCHAR(100), qty INT);"
     "INSERT INTO halfway SELECT seq, 'n', seq FROM seq_1_to_3000");
  ItemsTarget("halfway");
  ASSERT_EQ(CreateJob("job_halfway", "INSERT INTO cdc.halfway SELECT * FROM " +
                                         Stream("halfway", ", \"snapshot_split_size\" = \"1\"")),
            Status::Ok());
  ASSERT_TRUE(WaitFor([] { return MrValue("SELECT count(*) FROM cdc.halfway") != "0"; }));
  ASSERT_TRUE(Mr("PAUSE JOB WHERE jobname = 'job_halfway'").ok());
  ASSERT_NE(JobValue("job_halfway", "CurrentOffset").find("snapshot"), std::string::npos);
  const std::string seen_tables =
      "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'cdc_seen_%'";
  // The paused snapshot has its state in the file (else the check after the drop proves
  // nothing).
  env().KillMillrace();
  auto before = env().QueryDatabaseFile(seen_tables);
  ASSERT_EQ(env().RestartMillrace(), Status::Ok());
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_NE((*before)[0][0], "0");
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_halfway'").ok());
  env().KillMillrace();
  auto left = env().QueryDatabaseFile(seen_tables);
  ASSERT_EQ(env().RestartMillrace(), Status::Ok());
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_EQ((*left)[0][0], "0");
}

// Other tables' writes move a quiet job's offset (an offset-only task at most every 5 s), so it
// stays in a binlog file the server keeps; jobs() shows where it is, its end and its lag.
TEST_F(MysqlCdcTest, AQuietJobStillAdvancesAndShowsItsPosition) {
  My("CREATE TABLE quiet (id INT PRIMARY KEY, name VARCHAR(100), qty INT);"
     "CREATE TABLE busy (id INT PRIMARY KEY)");
  ItemsTarget("quiet");
  ASSERT_EQ(CreateJob("job_quiet", "INSERT INTO cdc.quiet SELECT * FROM " +
                                       Stream("quiet", ", \"offset\" = \"latest\"")),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("job_quiet"));
  const std::string before = JobValue("job_quiet", "CurrentOffset");
  My("FLUSH BINARY LOGS; INSERT INTO busy SELECT seq FROM seq_1_to_1000");
  const std::string file = My("SHOW MASTER STATUS").substr(0, My("SHOW MASTER STATUS").find('\t'));
  EXPECT_TRUE(WaitFor(
      [&] { return JobValue("job_quiet", "CurrentOffset").find(file) != std::string::npos; },
      std::chrono::seconds(60)))
      << before << " -> " << JobValue("job_quiet", "CurrentOffset") << ", want " << file;
  EXPECT_NE(JobValue("job_quiet", "EndOffset").find("\"pos\""), std::string::npos);
  EXPECT_NE(JobValue("job_quiet", "Lag").find("\"changes\""), std::string::npos);
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.quiet"), "0");
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_quiet'").ok());
}

TEST_F(MysqlCdcTest, BadDefinitionsAreRefusedWithAClearError) {
  My("CREATE TABLE plain (id INT PRIMARY KEY, v INT); CREATE TABLE nokey (v INT);"
     "CREATE TABLE myisam (id INT PRIMARY KEY) ENGINE = MyISAM");
  ItemsTarget("bad_t");
  auto refused = [](const std::string& insert) {
    auto created = MysqlCdcTest::env().CreateJob("job_bad", insert);
    EXPECT_FALSE(created.ok()) << insert;
    return created.message();
  };
  const std::string insert = "INSERT INTO cdc.bad_t (id, qty) SELECT id, v FROM ";
  EXPECT_NE(refused(insert + Stream("nokey")).find("primary key"), std::string::npos);
  EXPECT_NE(refused(insert + Stream("missing")).find("does not exist"), std::string::npos);
  EXPECT_NE(refused("INSERT INTO cdc.bad_t (id) SELECT id FROM " + Stream("myisam")).find("InnoDB"),
            std::string::npos);
  EXPECT_NE(refused(insert + Stream("plain", ", \"server_id\" = \"0\"")).find("server_id"),
            std::string::npos);
  EXPECT_NE(refused(insert + Stream("plain", ", \"offset\" = \"binlog\"")).find("offset"),
            std::string::npos);
  EXPECT_NE(refused(insert + Stream("plain", ", \"slot_name\" = \"x\"")).find("slot_name"),
            std::string::npos);
  const std::string wrong_password = refused(insert + Stream("plain", "", "wrong"));
  EXPECT_NE(wrong_password.find("Access denied"), std::string::npos) << wrong_password;
  EXPECT_EQ(wrong_password.find("wrong"), std::string::npos) << wrong_password;
  // A user without the replication privileges.
  My("CREATE USER reader@'%' IDENTIFIED BY 'reader-pw'; GRANT SELECT ON *.* TO reader@'%'");
  std::string stream = Stream("plain", "", "reader-pw");
  stream.replace(stream.find(env().mariadb().user()), env().mariadb().user().size(), "reader");
  EXPECT_NE(refused(insert + stream).find("REPLICATION SLAVE"), std::string::npos);
  // A binlog without column names.
  My("SET GLOBAL binlog_row_metadata = 'MINIMAL'");
  const std::string minimal = refused(insert + Stream("plain"));
  My("SET GLOBAL binlog_row_metadata = 'FULL'");
  EXPECT_NE(minimal.find("binlog_row_metadata"), std::string::npos) << minimal;
  My("SET GLOBAL binlog_format = 'STATEMENT'");
  const std::string statement = refused(insert + Stream("plain"));
  My("SET GLOBAL binlog_format = 'ROW'");
  EXPECT_NE(statement.find("binlog_format"), std::string::npos) << statement;
}

}  // namespace
}  // namespace millrace::cdc
