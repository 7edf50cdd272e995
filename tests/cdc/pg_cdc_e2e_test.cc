// Change data capture from a real PostgreSQL 15 end to end: the real `millrace serve` binary,
// Connector/C, and a PostgreSQL server started for this binary (testing/postgres_server.h).
// Targets are compared with their sources by checksums over a canonical text of each value
// (cdc_checksum.h), not by counts alone.
//
// MILLRACE_CDC_ROWS (default 10000) sizes the snapshot tables; e.g. 100000 for a manual run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <thread>

#include "cdc/cdc_test_env.h"
#include "testing/wait_for.h"

namespace millrace::cdc {
namespace {

using testing::WaitFor;

class PgCdcTest : public CdcEnvTest {
 protected:
  static std::string Pg(const std::string& sql) { return env_->Pg(sql); }
};

TEST_F(PgCdcTest, SnapshotOfThreeTablesWhileAnotherConnectionWritesThenTheStream) {
  const int rows = EnvInt("MILLRACE_CDC_ROWS", 10000);
  for (const std::string t : {"snap_a", "snap_b", "snap_c"}) {
    Pg("CREATE TABLE " + t + " (id int PRIMARY KEY, name text, qty int); INSERT INTO " + t +
       " SELECT g, 'name ' || g, g % 97 FROM generate_series(1, " + std::to_string(rows) + ") g");
    ASSERT_TRUE(Mr("CREATE TABLE cdc." + t +
                   " (id INT, name VARCHAR(100), qty INT) UNIQUE KEY(id) "
                   "DISTRIBUTED BY HASH(id) BUCKETS 1")
                    .ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::thread writer([&] {
    // Inserts above, updates and deletes inside the snapshot's range, in all three tables.
    for (int i = 0; !stop && i < 200; ++i) {
      std::string sql;
      for (const std::string t : {"snap_a", "snap_b", "snap_c"}) {
        const std::string k = std::to_string(1 + (i * 37) % rows);
        sql += "INSERT INTO " + t + " VALUES (" + std::to_string(rows + 1 + i) + ", 'new', " +
               std::to_string(i) + "); UPDATE " + t +
               " SET qty = qty + 1000, name = 'upd' WHERE id = " + k + "; DELETE FROM " + t +
               " WHERE id = " + std::to_string(1 + (i * 53 + 7) % rows) + ";";
      }
      Pg(sql);
      ++rounds;
    }
  });
  for (const std::string t : {"snap_a", "snap_b", "snap_c"}) {
    // snap_c reads four splits at once, in one snapshot on four connections.
    const std::string parallel = t == "snap_c" ? ", \"snapshot_parallelism\" = \"4\"" : "";
    ASSERT_TRUE(
        CreateJob("job_" + t, "INSERT INTO cdc." + t + " SELECT * FROM " +
                                  Stream(t, ", \"snapshot_split_size\" = \"1000\"" + parallel))
            .ok());
  }
  WaitFor([&] { return rounds >= 200; }, std::chrono::seconds(120));
  stop = true;
  writer.join();
  for (const std::string t : {"snap_a", "snap_b", "snap_c"}) {
    auto [want, got] = Converge(t, "cdc." + t, kItemColumns, std::chrono::seconds(120));
    EXPECT_EQ(want, got) << t;
    EXPECT_NE(want.find(':'), std::string::npos);
  }
  // The job's offset is a WAL position once the snapshot is done.
  EXPECT_NE(MrValue("SELECT CurrentOffset FROM jobs(type := 'insert') WHERE Name = 'job_snap_a'")
                .find("\"lsn\""),
            std::string::npos);
}

TEST_F(PgCdcTest, EveryKindOfChangeIsAppliedAndARolledBackTransactionIsNot) {
  Pg("CREATE TABLE ops (id int PRIMARY KEY, name text, qty int)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.ops (id INT, name VARCHAR(100), qty INT) UNIQUE KEY(id) "
                 "DISTRIBUTED BY HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_TRUE(CreateJob("job_ops", "INSERT INTO cdc.ops SELECT * FROM " + Stream("ops")).ok());
  auto converged = [&] {
    auto [want, got] = Converge("ops", "cdc.ops", kItemColumns);
    EXPECT_EQ(want, got);
    return want;
  };
  Pg("INSERT INTO ops SELECT g, 'n' || g, g FROM generate_series(1, 50) g");
  EXPECT_EQ(converged().substr(0, 3), "50:");
  Pg("UPDATE ops SET qty = qty * 10 WHERE id <= 10");  // non-key
  Pg("UPDATE ops SET id = id + 1000 WHERE id > 45");   // key
  Pg("DELETE FROM ops WHERE id BETWEEN 20 AND 24");
  converged();
  // One transaction of several statements, touching the same key more than once.
  Pg("BEGIN; INSERT INTO ops VALUES (500, 'a', 1); UPDATE ops SET qty = 2 WHERE id = 500; "
     "DELETE FROM ops WHERE id = 1; INSERT INTO ops VALUES (1, 'again', 3); "
     "UPDATE ops SET name = 'x' WHERE id = 500; COMMIT");
  converged();
  // Upserts only, one key three times: the newest row of the key is the one written.
  Pg("BEGIN; INSERT INTO ops VALUES (600, 'first', 1); UPDATE ops SET name = 'second', qty = 2 "
     "WHERE id = 600; UPDATE ops SET qty = 3 WHERE id = 600; INSERT INTO ops VALUES (601, 'b', 4); "
     "COMMIT");
  converged();
  EXPECT_EQ(MrValue("SELECT name || ':' || qty FROM cdc.ops WHERE id = 600"), "second:3");
  Pg("BEGIN; INSERT INTO ops VALUES (900, 'never', 0); DELETE FROM ops WHERE id = 2; ROLLBACK");
  Pg("INSERT INTO ops VALUES (901, 'after rollback', 0)");
  converged();
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.ops WHERE id = 900"), "0");
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.ops WHERE id = 2"), "1");
  Pg("BEGIN; INSERT INTO ops VALUES (950, 'before truncate', 0); TRUNCATE ops; "
     "INSERT INTO ops VALUES (7, 'after truncate', 7); COMMIT");
  EXPECT_EQ(converged(), Pg(PgChecksumSql("ops", kItemColumns)));
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.ops"), "1");
}

TEST_F(PgCdcTest, EveryCommonTypeKeepsItsValue) {
  Pg("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');"
     "CREATE TABLE typed (id int8 PRIMARY KEY, i2 int2, i4 int4, num numeric(12,3), "
     "r real, d double precision, b bool, t text, vc varchar(20), ch char(5), by bytea, "
     "dt date, tm time, ts timestamp, tz timestamptz, iv interval, u uuid, j json, jb jsonb, "
     "ia int[], ta text[], m mood)");
  ASSERT_TRUE(
      Mr("CREATE TABLE cdc.typed (id BIGINT, i2 SMALLINT, i4 INT, num DECIMAL(12,3), r FLOAT, "
         "d DOUBLE, b BOOLEAN, t STRING, vc VARCHAR(20), ch CHAR(5), `by` STRING, dt DATE, "
         "tm STRING, ts DATETIME(6), tz DATETIME(6), iv STRING, u STRING, j JSON, jb JSON, "
         "ia ARRAY<INT>, ta ARRAY<STRING>, m STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) "
         "BUCKETS 1")
          .ok());
  // The SELECT converts what Doris has no type for into the target's columns.
  ASSERT_EQ(CreateJob("job_typed",
                      "INSERT INTO cdc.typed SELECT id, i2, i4, num, r, d, b, t, vc, ch, "
                      "CAST(\"by\" AS VARCHAR), dt, CAST(tm AS VARCHAR), ts, tz, "
                      "CAST(iv AS VARCHAR), CAST(u AS VARCHAR), j, jb, ia, ta, m FROM " +
                          Stream("typed")),
            Status::Ok());
  Pg("INSERT INTO typed VALUES (1, -32768, 2147483647, 123456789.125, 1.5, -2.25e100, true, "
     "'tab\there\nnewline \\ back', 'héllo', 'ab', '\\x00ff10', '2024-02-29', '23:59:59.5', "
     "'1999-12-31 23:59:59.123456', '2024-06-01 12:00:00+02', '1 day 02:03:04.5', "
     "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"a\": [1, 2]}', '{\"b\": {\"c\": null}}', "
     "'{1,NULL,3}', '{\"x y\",\"q\\\"uote\",NULL,\"{}\"}', 'happy'),"
     "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
     "NULL, NULL, NULL, NULL, NULL, NULL, NULL)");
  Pg("UPDATE typed SET t = repeat('long ', 2000), ia = '{}' WHERE id = 2");
  const std::vector<CanonColumn> columns = {{"id"},
                                            {"i2"},
                                            {"i4"},
                                            {"num"},
                                            {"r", Canon::kFloat},
                                            {"d"},
                                            {"b", Canon::kBool},
                                            {"t"},
                                            {"vc"},
                                            {"ch", Canon::kChar},
                                            {"dt"},
                                            {"ts"},
                                            {"tz", Canon::kTimeTz},
                                            {"j"},
                                            {"jb"},
                                            {"ia", Canon::kArray},
                                            {"ta", Canon::kArray},
                                            {"m"}};
  auto [want, got] = Converge("typed", "cdc.typed", columns, std::chrono::seconds(20));
  EXPECT_EQ(want, got);
  EXPECT_EQ(MrValue("SELECT `by` FROM cdc.typed WHERE id = 1"), "\\x00\\xFF\\x10");
  EXPECT_EQ(MrValue("SELECT iv FROM cdc.typed WHERE id = 1"), "1 day 02:03:04.5");
  EXPECT_EQ(MrValue("SELECT tm FROM cdc.typed WHERE id = 1"), "23:59:59.5");
  EXPECT_EQ(MrValue("SELECT u FROM cdc.typed WHERE id = 1"),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  // An UPDATE that leaves the TOASTed text alone keeps it.
  Pg("UPDATE typed SET i4 = 7 WHERE id = 2");
  auto [want2, got2] = Converge("typed", "cdc.typed", columns);
  EXPECT_EQ(want2, got2);
  EXPECT_EQ(MrValue("SELECT length(t) FROM cdc.typed WHERE id = 2"), "10000");
}

TEST_F(PgCdcTest, TheSelectProjectsRenamesAndFiltersExactly) {
  Pg("CREATE TABLE proj (id int PRIMARY KEY, name text, qty int)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.proj (k INT, label VARCHAR(100), twice INT) UNIQUE KEY(k) "
                 "DISTRIBUTED BY HASH(k) BUCKETS 1")
                  .ok());
  ASSERT_TRUE(CreateJob("job_proj",
                        "INSERT INTO cdc.proj SELECT id AS k, upper(name), qty * 2 "
                        "FROM " +
                            Stream("proj") + " WHERE qty > 10")
                  .ok());
  Pg("INSERT INTO proj SELECT g, 'n' || g, g FROM generate_series(1, 30) g");
  Pg("UPDATE proj SET qty = 0 WHERE id = 25");  // leaves the filter: gone from the target
  Pg("UPDATE proj SET qty = 50 WHERE id = 3");  // enters it
  Pg("DELETE FROM proj WHERE id IN (4, 26)");
  const std::vector<CanonColumn> pg_columns = {{"k"}, {"label"}, {"twice"}};
  auto [want, got] = Converge(
      "(SELECT id AS k, upper(name) AS label, qty * 2 AS twice FROM proj WHERE qty > 10) p",
      "cdc.proj", pg_columns);
  EXPECT_EQ(want, got);
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.proj WHERE k = 25"), "0");
  EXPECT_EQ(MrValue("SELECT twice FROM cdc.proj WHERE k = 3"), "100");
}

TEST_F(PgCdcTest, AQuietSlotStillAdvancesAndDropJobRemovesTheSlot) {
  Pg("CREATE TABLE quiet (id int PRIMARY KEY, v text); CREATE TABLE busy (id int PRIMARY KEY)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.quiet (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  const std::string known =
      Pg("SELECT coalesce(string_agg(quote_literal(slot_name), ','), "
         "'''''') FROM pg_replication_slots");
  ASSERT_TRUE(CreateJob("job_quiet", "INSERT INTO cdc.quiet SELECT * FROM " +
                                         Stream("quiet", ", \"offset\" = \"latest\""))
                  .ok());
  std::string slot;
  ASSERT_TRUE(WaitFor(
      [&] {
        slot = Pg("SELECT slot_name FROM pg_replication_slots WHERE active AND slot_name NOT IN (" +
                  known + ")");
        return !slot.empty();
      },
      std::chrono::seconds(30)));
  const std::string before = Pg("SELECT pg_current_wal_lsn()");
  Pg("INSERT INTO busy SELECT generate_series(1, 1000)");
  // Other tables' writes and keepalives move the job, and it confirms what it committed.
  EXPECT_TRUE(WaitFor(
      [&] {
        return Pg("SELECT confirmed_flush_lsn > '" + before +
                  "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'") == "t";
      },
      std::chrono::seconds(60)))
      << before << " " << Pg("SELECT slot_name, confirmed_flush_lsn FROM pg_replication_slots");
  EXPECT_NE(MrValue("SELECT CurrentOffset FROM jobs(type := 'insert') WHERE Name = 'job_quiet'"),
            "");
  const std::string slots_before = Pg("SELECT count(*) FROM pg_replication_slots");
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_quiet'").ok());
  EXPECT_EQ(std::stoi(Pg("SELECT count(*) FROM pg_replication_slots")),
            std::stoi(slots_before) - 1);
  EXPECT_EQ(Pg("SELECT count(*) FROM pg_publication WHERE pubname LIKE 'millrace_%' AND "
               "pubname NOT IN (SELECT slot_name FROM pg_replication_slots)"),
            "0");
}

TEST_F(PgCdcTest, BadDefinitionsAreRefusedWithAClearError) {
  Pg("CREATE TABLE nokey (id int, v text); CREATE TABLE good (id int PRIMARY KEY, v text)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.dup (id INT, v STRING) DUPLICATE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_TRUE(Mr("CREATE TABLE cdc.uniq (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  auto error = [&](const std::string& insert) {
    Status s = CreateJob("bad_job", insert);
    return s.ok() ? std::string("created") : s.message();
  };
  EXPECT_NE(error("INSERT INTO cdc.dup SELECT * FROM " + Stream("good")).find("UNIQUE KEY"),
            std::string::npos);
  EXPECT_NE(error("INSERT INTO cdc.uniq SELECT * FROM " + Stream("nokey")).find("primary key"),
            std::string::npos);
  EXPECT_NE(error("INSERT INTO cdc.uniq SELECT * FROM " + Stream("missing")).find("does not exist"),
            std::string::npos);
  EXPECT_NE(error("INSERT INTO cdc.uniq SELECT * FROM " + Stream("good", "", "wrong-password"))
                .find("password authentication failed"),
            std::string::npos);
  EXPECT_NE(error("INSERT INTO cdc.uniq SELECT * FROM " + Stream("good", ", \"colour\" = \"red\""))
                .find("unknown parameter \"colour\""),
            std::string::npos);
  EXPECT_NE(
      error("INSERT INTO cdc.uniq SELECT id, count(*) FROM " + Stream("good") + " GROUP BY id")
          .find("group rows"),
      std::string::npos);
  const std::string unreachable =
      "cdc_stream(\"type\" = \"postgres\", \"jdbc_url\" = \"jdbc:postgresql://127.0.0.1:1/x\", "
      "\"user\" = \"u\", \"table\" = \"good\")";
  EXPECT_NE(error("INSERT INTO cdc.uniq SELECT * FROM " + unreachable).find("127.0.0.1:1"),
            std::string::npos);
  // The password never shows.
  ASSERT_TRUE(CreateJob("shown_job", "INSERT INTO cdc.uniq SELECT * FROM " + Stream("good")).ok());
  const std::string sql =
      MrValue("SELECT ExecuteSql FROM jobs(type := 'insert') WHERE Name = 'shown_job'");
  EXPECT_EQ(sql.find(env_->pg().password()), std::string::npos) << sql;
  EXPECT_NE(sql.find("***"), std::string::npos) << sql;
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'shown_job'").ok());
}

// FROM POSTGRES (...) of the test server with `extra` parameters.
std::string FromPostgres(const std::string& extra) {
  const testing::PostgresServer& pg = PgCdcTest::env().pg();
  return "FROM POSTGRES (\"jdbc_url\" = \"" + pg.JdbcUrl("postgres") + "\", \"user\" = \"" +
         pg.user() + "\", \"password\" = \"" + pg.password() +
         "\", \"driver_url\" = \"postgresql-42.7.8.jar\", \"driver_class\" = "
         "\"org.postgresql.Driver\"" +
         extra + ")";
}

TEST_F(PgCdcTest, ADatabaseJobMakesMissingTablesAndFollowsEveryTable) {
  Pg("CREATE SCHEMA shop;"
     "CREATE TABLE shop.customers (id int PRIMARY KEY, name text NOT NULL, since date);"
     "CREATE TABLE shop.orders (order_id bigint, line int, amount numeric(10,2), "
     "note varchar(30), tags text[], PRIMARY KEY (order_id, line));"
     "CREATE TABLE shop.ignored (id int PRIMARY KEY);"
     "INSERT INTO shop.customers SELECT g, 'c' || g, date '2026-01-01' + g FROM "
     "generate_series(1, 40) g;"
     "INSERT INTO shop.orders SELECT g / 4, g % 4, g * 1.25, 'n' || g, ARRAY['a', 'b'] FROM "
     "generate_series(1, 100) g;");
  ASSERT_TRUE(Mr("CREATE DATABASE shopdb").ok());
  // One target exists already (a UNIQUE KEY table of the user's); the others are made.
  ASSERT_TRUE(Mr("CREATE TABLE shopdb.customers (id INT, name VARCHAR(50), since DATE) UNIQUE "
                 "KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
                  .ok());
  const std::string job =
      "CREATE JOB shop_job ON STREAMING PROPERTIES (\"max_interval\" = \"1\") " +
      FromPostgres(
          ", \"schema\" = \"shop\", \"exclude_tables\" = "
          "\"ignored\", \"snapshot_split_size\" = \"7\"") +
      " TO DATABASE shopdb (\"table.create.properties.replication_num\" = "
      "\"1\", \"load.strict_mode\" = \"true\")";
  auto created = Mr(job);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // One transaction over both tables, during or after the snapshot.
  Pg("BEGIN; UPDATE shop.customers SET name = 'renamed' WHERE id = 3; "
     "DELETE FROM shop.orders WHERE order_id = 2; "
     "INSERT INTO shop.orders VALUES (99, 1, 10.5, NULL, '{}'); "
     "UPDATE shop.orders SET line = 9 WHERE order_id = 5 AND line = 0; COMMIT;"
     "INSERT INTO shop.ignored VALUES (1)");
  const std::vector<CanonColumn> customer_columns = {{"id"}, {"name"}, {"since"}};
  const std::vector<CanonColumn> order_columns = {
      {"order_id"}, {"line"}, {"amount"}, {"note"}, {"tags", Canon::kArray}};
  auto [want_c, got_c] = Converge("shop.customers", "shopdb.customers", customer_columns);
  EXPECT_EQ(want_c, got_c);
  auto [want_o, got_o] = Converge("shop.orders", "shopdb.orders", order_columns);
  EXPECT_EQ(want_o, got_o);
  // The made table is a UNIQUE KEY table keyed as the source, with mapped types.
  auto shown = Mr("SHOW CREATE TABLE shopdb.orders");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  const std::string ddl = (*shown)[0][1];
  EXPECT_NE(ddl.find("UNIQUE KEY(`order_id`, `line`)"), std::string::npos) << ddl;
  EXPECT_NE(ddl.find("decimal(10,2)"), std::string::npos) << ddl;
  EXPECT_NE(ddl.find("varchar(30)"), std::string::npos) << ddl;
  EXPECT_NE(ddl.find("array<"), std::string::npos) << ddl;
  EXPECT_NE(ddl.find("replication_num"), std::string::npos) << ddl;
  EXPECT_EQ(MrValue("SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                    "'shopdb' AND table_name = 'ignored'"),
            "0");
  const std::string sql =
      MrValue("SELECT ExecuteSql FROM jobs(type := 'insert') WHERE Name = 'shop_job'");
  EXPECT_EQ(sql.find(env().pg().password()), std::string::npos) << sql;
  EXPECT_NE(sql.find("TO DATABASE shopdb"), std::string::npos) << sql;

  // VERIFY JOB counts each table at the source (the job's connection parameters) and in its
  // target: equal once converged; a row written while the job is paused shows.
  const auto table_rows = [&]() {
    std::map<std::string, std::string> out;
    auto verified = Mr("VERIFY JOB shop_job");
    EXPECT_TRUE(verified.ok()) << verified.status().ToString();
    if (!verified.ok()) return out;
    for (const auto& row : *verified) {
      if (row.size() == 4 && row[0] == "TABLE_ROWS") out[row[2]] = row[3];
    }
    EXPECT_EQ(verified->front().front(), "SOURCE");
    return out;
  };
  EXPECT_EQ(table_rows(),
            (std::map<std::string, std::string>{{"shop.customers",
                                                 "source 40 rows; target shopdb.customers 40 "
                                                 "rows (equal)"},
                                                {"shop.orders",
                                                 "source 97 rows; target shopdb.orders 97 rows "
                                                 "(equal)"}}));
  EXPECT_TRUE(Mr("VERIFY JOB shop_job LIMIT 0").ok());
  auto unknown = Mr("VERIFY JOB nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("job nope does not exist"), std::string::npos)
      << unknown.status().ToString();
  EXPECT_FALSE(Mr("VERIFY JOB shop_job LIMIT").ok());  // a parse error
  ASSERT_TRUE(Mr("PAUSE JOB WHERE jobname = 'shop_job'").ok());
  Pg("INSERT INTO shop.customers VALUES (41, 'c41', NULL)");
  EXPECT_EQ(table_rows()["shop.customers"],
            "source 41 rows; target shopdb.customers 40 rows (1 fewer in the target)");
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'shop_job'").ok());
}

TEST_F(PgCdcTest, ADatabaseJobUsesTheNamedPublicationAndSlotAndKeepsTheUsersPublication) {
  Pg("CREATE SCHEMA named; CREATE TABLE named.a (id int PRIMARY KEY, v text);"
     "CREATE TABLE named.b (id int PRIMARY KEY, v text);"
     "CREATE PUBLICATION users_pub FOR TABLE named.a, named.b");
  ASSERT_TRUE(Mr("CREATE DATABASE nameddb").ok());
  auto created = Mr("CREATE JOB named_job ON STREAMING PROPERTIES (\"max_interval\" = \"1\") " +
                    FromPostgres(", \"schema\" = \"named\", \"include_tables\" = \"a, b\", "
                                 "\"offset\" = \"latest\", \"publication_name\" = "
                                 "\"users_pub\", \"slot_name\" = \"users_slot\"") +
                    " TO DATABASE nameddb");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(WaitFor(
      [&] {
        return Pg("SELECT count(*) FROM pg_replication_slots WHERE slot_name = "
                  "'users_slot' AND active") == "1";
      },
      std::chrono::seconds(30)));
  Pg("INSERT INTO named.a VALUES (1, 'x'); INSERT INTO named.b VALUES (2, 'y')");
  auto [want, got] = Converge("named.b", "nameddb.b", {{"id"}, {"v"}});
  EXPECT_EQ(want, got);
  EXPECT_EQ(MrValue("SELECT v FROM nameddb.a WHERE id = 1"), "x");
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'named_job'").ok());
  EXPECT_EQ(Pg("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'users_slot'"), "0");
  EXPECT_EQ(Pg("SELECT count(*) FROM pg_publication WHERE pubname = 'users_pub'"), "1");
}

TEST_F(PgCdcTest, BadDatabaseJobsAreRefusedWithAClearError) {
  Pg("CREATE SCHEMA badshop; CREATE TABLE badshop.keyless (id int, v text);"
     "CREATE TABLE badshop.fine (id int PRIMARY KEY, v text)");
  ASSERT_TRUE(Mr("CREATE DATABASE baddb").ok());
  ASSERT_TRUE(Mr("CREATE TABLE baddb.fine (id INT, v STRING) DUPLICATE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  auto error = [&](const std::string& from, const std::string& to) {
    auto r = Mr("CREATE JOB bad_db_job ON STREAMING " + FromPostgres(from) + " TO DATABASE " + to);
    return r.ok() ? std::string("created") : r.status().message();
  };
  EXPECT_NE(error(", \"schema\" = \"badshop\", \"include_tables\" = \"fine\"", "nosuchdb")
                .find("nosuchdb"),
            std::string::npos);
  EXPECT_NE(error(", \"schema\" = \"badshop\", \"include_tables\" = \"keyless\"", "baddb")
                .find("primary key"),
            std::string::npos);
  EXPECT_NE(error(", \"schema\" = \"badshop\", \"include_tables\" = \"fine\"", "baddb")
                .find("UNIQUE KEY"),
            std::string::npos);
  EXPECT_NE(error(", \"schema\" = \"badshop\", \"table\" = \"fine\"", "baddb")
                .find("unknown parameter \"table\""),
            std::string::npos);
  EXPECT_NE(error(", \"schema\" = \"nosuchschema\"", "baddb").find("no table to follow"),
            std::string::npos);
  // An existing target with other columns than its source: refused, nothing made.
  Pg("CREATE TABLE badshop.wider (id int PRIMARY KEY, v text)");
  ASSERT_TRUE(Mr("CREATE TABLE baddb.wider (id INT, v STRING, mine INT) UNIQUE KEY(id) "
                 "DISTRIBUTED BY HASH(id) BUCKETS 1")
                  .ok());
  EXPECT_NE(error(", \"schema\" = \"badshop\", \"include_tables\" = \"wider\"", "baddb")
                .find("also has mine"),
            std::string::npos);
  EXPECT_NE(error(", \"schema\" = \"badshop\", \"include_tables\" = \"fine\"",
                  "baddb (\"load.max_filter_ratio\" = \"2\")")
                .find("load.max_filter_ratio"),
            std::string::npos);
  EXPECT_NE(error(", \"schema\" = \"badshop\", \"include_tables\" = \"fine\"",
                  "baddb (\"colour\" = \"red\")")
                .find("unknown parameter \"colour\""),
            std::string::npos);
}

TEST_F(PgCdcTest, ADatabaseJobFollowsAddedAndDroppedColumns) {
  Pg("CREATE SCHEMA evo; CREATE TABLE evo.items (id int PRIMARY KEY, name text, qty int);"
     "INSERT INTO evo.items SELECT g, 'n' || g, g FROM generate_series(1, 20) g");
  ASSERT_TRUE(Mr("CREATE DATABASE evodb").ok());
  auto created = Mr("CREATE JOB evo_job ON STREAMING PROPERTIES (\"max_interval\" = \"1\") " +
                    FromPostgres(", \"schema\" = \"evo\"") + " TO DATABASE evodb");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto [want, got] = Converge("evo.items", "evodb.items", {{"id"}, {"name"}, {"qty"}});
  ASSERT_EQ(want, got);
  // ADD COLUMN ... DEFAULT writes no WAL for the rows that exist: they are backfilled from the
  // catalog's missing value when the next change brings the new columns.
  Pg("ALTER TABLE evo.items ADD COLUMN color text DEFAULT 'red';"
     "INSERT INTO evo.items VALUES (21, 'n21', 21, 'blue');"
     "UPDATE evo.items SET qty = 100 WHERE id = 2");
  const std::vector<CanonColumn> with_color = {{"id"}, {"name"}, {"qty"}, {"color"}};
  auto [want2, got2] = Converge("evo.items", "evodb.items", with_color);
  EXPECT_EQ(want2, got2);
  EXPECT_EQ(MrValue("SELECT color FROM evodb.items WHERE id = 5"), "red");
  // A column without a default, a dropped column, and one transaction that writes, alters and
  // writes again.
  Pg("ALTER TABLE evo.items ADD COLUMN note text; ALTER TABLE evo.items DROP COLUMN qty;"
     "INSERT INTO evo.items VALUES (22, 'n22', 'green', 'a note');"
     "BEGIN; UPDATE evo.items SET name = 'before' WHERE id = 3;"
     "ALTER TABLE evo.items ADD COLUMN weight int DEFAULT 7;"
     "INSERT INTO evo.items VALUES (23, 'n23', 'black', NULL, 8); COMMIT");
  const std::vector<CanonColumn> now = {{"id"}, {"name"}, {"color"}, {"note"}, {"weight"}};
  auto [want3, got3] = Converge("evo.items", "evodb.items", now);
  EXPECT_EQ(want3, got3);
  EXPECT_EQ(MrValue("SELECT count(*) FROM information_schema.columns WHERE table_schema = "
                    "'evodb' AND table_name = 'items' AND column_name = 'qty'"),
            "0");
  EXPECT_EQ(MrValue("SELECT weight FROM evodb.items WHERE id = 1"), "7");
  // DESC shows the columns as Doris would (the definition follows the table).
  auto desc = Mr("DESC evodb.items");
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  EXPECT_EQ(desc->size(), 5u);
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'evo_job'").ok());
}

TEST_F(PgCdcTest, ATableJobGoesOnWhileItsSelectFitsAndPausesWhenItNoLongerDoes) {
  Pg("CREATE TABLE narrow (id int PRIMARY KEY, name text, qty int)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.narrow (id INT, name STRING) UNIQUE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_EQ(CreateJob("job_narrow", "INSERT INTO cdc.narrow SELECT id, name FROM " +
                                        Stream("narrow", ", \"offset\" = \"latest\"")),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("job_narrow"));
  Pg("INSERT INTO narrow VALUES (1, 'a', 1); ALTER TABLE narrow ADD COLUMN extra int;"
     "INSERT INTO narrow VALUES (2, 'b', 2, 3)");
  auto [want, got] = Converge("narrow", "cdc.narrow", {{"id"}, {"name"}});
  EXPECT_EQ(want, got);
  Pg("ALTER TABLE narrow DROP COLUMN name; INSERT INTO narrow VALUES (3, 3, 3)");
  const std::string error = WaitUntilPaused("job_narrow");
  EXPECT_NE(error.find("no longer fits"), std::string::npos) << error;
  EXPECT_NE(error.find("narrow"), std::string::npos) << error;
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_narrow'").ok());
}

TEST_F(PgCdcTest, AlterJobChangesCredentialsButNotWhatTheJobReads) {
  Pg("CREATE TABLE altered (id int PRIMARY KEY, v text); CREATE TABLE other (id int PRIMARY KEY, "
     "v text); INSERT INTO altered VALUES (1, 'a')");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.altered (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_EQ(CreateJob("job_altered", "INSERT INTO cdc.altered SELECT * FROM " + Stream("altered")),
            Status::Ok());
  auto [want, got] = Converge("altered", "cdc.altered", {{"id"}, {"v"}});
  ASSERT_EQ(want, got);
  ASSERT_TRUE(Mr("PAUSE JOB WHERE jobname = 'job_altered'").ok());
  auto alter = [&](const std::string& stream) {
    auto r = Mr("ALTER JOB job_altered INSERT INTO cdc.altered SELECT * FROM " + stream);
    return r.ok() ? std::string("altered") : r.status().message();
  };
  EXPECT_NE(alter(Stream("altered", "", "wrong")).find("password authentication failed"),
            std::string::npos);
  EXPECT_NE(alter(Stream("other")).find("cannot change"), std::string::npos);
  // The same credentials written anew and another split size: accepted, and the job goes on
  // from its offset.
  EXPECT_EQ(alter(Stream("altered", ", \"snapshot_split_size\" = \"100\"")), "altered");
  ASSERT_TRUE(Mr("RESUME JOB WHERE jobname = 'job_altered'").ok());
  Pg("INSERT INTO altered VALUES (2, 'b')");
  auto [want2, got2] = Converge("altered", "cdc.altered", {{"id"}, {"v"}});
  EXPECT_EQ(want2, got2);
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_altered'").ok());
}

TEST_F(PgCdcTest, APausedJobWarnsWhenItsSlotRetainsTooMuchWalAndShowsItsLag) {
  Pg("CREATE TABLE held (id int PRIMARY KEY, v text); CREATE TABLE churn (id int, v text)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.held (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_TRUE(Mr("CREATE JOB job_held ON STREAMING PROPERTIES (\"max_interval\" = \"1\", "
                 "\"cdc.wal_retention_warning\" = \"64K\") DO INSERT INTO cdc.held SELECT * "
                 "FROM " +
                 Stream("held", ", \"offset\" = \"latest\""))
                  .ok());
  auto job_value = [&](const std::string& column) { return JobValue("job_held", column); };
  ASSERT_TRUE(WaitUntilStreaming("job_held"));
  EXPECT_NE(job_value("Lag").find("\"changes\""), std::string::npos) << job_value("Lag");
  ASSERT_TRUE(Mr("PAUSE JOB WHERE jobname = 'job_held'").ok());
  // Other tables' writes make WAL the paused job's slot keeps.
  Pg("INSERT INTO churn SELECT g, repeat('x', 100) FROM generate_series(1, 5000) g");
  std::string message;
  EXPECT_TRUE(WaitFor(
      [&] {
        message = job_value("JobRuntimeMsg");
        return message.find("retains") != std::string::npos;
      },
      std::chrono::seconds(30)))
      << message;
  EXPECT_NE(message.find("cdc.wal_retention_warning"), std::string::npos) << message;
  ASSERT_TRUE(Mr("RESUME JOB WHERE jobname = 'job_held'").ok());
  EXPECT_EQ(job_value("JobRuntimeMsg"), "NULL");  // cleared by RESUME
  Pg("INSERT INTO held VALUES (1, 'after resume')");
  auto [want, got] = Converge("held", "cdc.held", {{"id"}, {"v"}});
  EXPECT_EQ(want, got);
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_held'").ok());
}

TEST_F(PgCdcTest, ATableJobStopsRightBeforeASchemaChangeItsSelectDoesNotFitAndGoesOnAfterAlter) {
  Pg("CREATE TABLE wide (id int PRIMARY KEY, v text)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.wide (id INT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY "
                 "HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_EQ(CreateJob("job_wide", "INSERT INTO cdc.wide SELECT * FROM " +
                                      Stream("wide", ", \"offset\" = \"latest\"")),
            Status::Ok());
  auto job_value = [&](const std::string& column) { return JobValue("job_wide", column); };
  ASSERT_TRUE(WaitUntilStreaming("job_wide"));
  // One poll may read all three; the job applies the insert before the change it cannot.
  Pg("INSERT INTO wide VALUES (1, 'a'); ALTER TABLE wide ADD COLUMN w int;"
     "INSERT INTO wide VALUES (2, 'b', 5)");
  ASSERT_TRUE(WaitFor([&] { return job_value("Status") == "PAUSED"; }, std::chrono::seconds(60)))
      << job_value("ErrorMsg");
  EXPECT_EQ(MrValue("SELECT v FROM cdc.wide WHERE id = 1"), "a");
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.wide WHERE id = 2"), "0");
  // A SELECT that fits the new columns takes it from there.
  ASSERT_TRUE(Mr("ALTER JOB job_wide INSERT INTO cdc.wide SELECT id, v FROM " +
                 Stream("wide", ", \"offset\" = \"latest\""))
                  .ok());
  ASSERT_TRUE(Mr("RESUME JOB WHERE jobname = 'job_wide'").ok());
  auto [want, got] = Converge("wide", "cdc.wide", {{"id"}, {"v"}});
  EXPECT_EQ(want, got);
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_wide'").ok());
}

TEST_F(PgCdcTest, APublicationThatLeavesChangesOutIsRefused) {
  Pg("CREATE SCHEMA partial; CREATE TABLE partial.t (id int PRIMARY KEY, v text);"
     "CREATE PUBLICATION inserts_only FOR TABLE partial.t WITH (publish = 'insert')");
  ASSERT_TRUE(Mr("CREATE DATABASE partialdb").ok());
  auto created = Mr("CREATE JOB partial_job ON STREAMING " +
                    FromPostgres(", \"schema\" = \"partial\", \"publication_name\" = "
                                 "\"inserts_only\"") +
                    " TO DATABASE partialdb");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string error = WaitUntilPaused("partial_job");
  EXPECT_NE(error.find("every kind of change"), std::string::npos) << error;
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'partial_job'").ok());
}

TEST_F(PgCdcTest, ReorderedColumnsUnderSelectStarAndARenamedTablePauseTheJob) {
  // Columns reordered (dropped and added again): SELECT * still binds but would fill the
  // target's columns from other source columns.
  Pg("CREATE TABLE reord (id int PRIMARY KEY, a text, b text)");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.reord (id INT, a STRING, b STRING) UNIQUE KEY(id) "
                 "DISTRIBUTED BY HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_EQ(CreateJob("job_reord", "INSERT INTO cdc.reord SELECT * FROM " +
                                       Stream("reord", ", \"offset\" = \"latest\"")),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("job_reord"));
  Pg("INSERT INTO reord VALUES (1, 'x', 'y'); ALTER TABLE reord DROP COLUMN a;"
     "ALTER TABLE reord ADD COLUMN a text; INSERT INTO reord VALUES (2, 'B', 'A')");
  std::string error = WaitUntilPaused("job_reord");
  EXPECT_NE(error.find("instead of"), std::string::npos) << error;
  EXPECT_EQ(MrValue("SELECT a FROM cdc.reord WHERE id = 1"), "x");
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.reord WHERE id = 2"), "0");
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_reord'").ok());

  // A table renamed under a database job: its changes keep coming (the publication holds the
  // table, not its name) but under another name; the job stops saying so.
  Pg("CREATE SCHEMA ren; CREATE TABLE ren.t (id int PRIMARY KEY, v text)");
  ASSERT_TRUE(Mr("CREATE DATABASE rendb").ok());
  ASSERT_TRUE(Mr("CREATE JOB ren_job ON STREAMING PROPERTIES (\"max_interval\" = \"1\") " +
                 FromPostgres(", \"schema\" = \"ren\"") + " TO DATABASE rendb")
                  .ok());
  Pg("INSERT INTO ren.t VALUES (1, 'a')");
  auto [want, got] = Converge("ren.t", "rendb.t", {{"id"}, {"v"}});
  EXPECT_EQ(want, got);
  Pg("ALTER TABLE ren.t RENAME TO t2; INSERT INTO ren.t2 VALUES (2, 'b')");
  error = WaitUntilPaused("ren_job");
  EXPECT_NE(error.find("was renamed to ren.t2"), std::string::npos) << error;
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'ren_job'").ok());
}

}  // namespace
}  // namespace millrace::cdc
