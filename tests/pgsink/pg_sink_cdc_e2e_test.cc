// Change streams into the PostgreSQL sink, end to end: a real PostgreSQL 15 is both the source
// (logical replication from schema public) and the sink (catalog pg, tables in schema sink),
// with the real `millrace serve` between them. Targets are compared with their sources by
// checksums over a canonical text of each value (cdc_checksum.h).
#include <gtest/gtest.h>

#include "cdc/cdc_test_env.h"
#include "testing/wait_for.h"

namespace millrace::cdc {
namespace {

class PgSinkCdcTest : public CdcEnvTest {
 protected:
  static void SetUpTestSuite() {
    CdcEnvTest::SetUpTestSuite();
    ASSERT_EQ(env().MakeSinkCatalog(), Status::Ok());
  }
  static std::string Pg(const std::string& sql) { return env_->Pg(sql); }
  // The items table `name` on the source (public) and in the sink's schema.
  static void ItemsTables(const std::string& name) {
    Pg("CREATE TABLE public." + name + " (id int PRIMARY KEY, name text, qty int); CREATE TABLE " +
       kSinkSchema + "." + name + " (id int PRIMARY KEY, name text, qty int)");
  }
  static std::string SinkTable(const std::string& name) {
    return std::string(kSinkCatalog) + "." + kSinkSchema + "." + name;
  }
};

TEST_F(PgSinkCdcTest, EveryKindOfChangeReachesThePostgresqlTable) {
  ItemsTables("ops");
  // Rows before the job: its snapshot copies them; the sink's table held a stale row.
  Pg("INSERT INTO public.ops SELECT g, 'n' || g, g FROM generate_series(1, 20) g");
  Pg("INSERT INTO sink.ops VALUES (999, 'stale', 0)");
  ASSERT_EQ(CreateJob("sink_ops", "INSERT INTO " + SinkTable("ops") + " SELECT * FROM " +
                                      Stream("ops", ", \"snapshot_split_size\" = \"8\"")),
            Status::Ok());
  auto converged = [&] {
    auto [want, got] = Converge("public.ops", SinkTable("ops"), kItemColumns);
    EXPECT_EQ(want, got);
    return want;
  };
  EXPECT_EQ(converged().substr(0, 3), "20:");
  Pg("INSERT INTO public.ops SELECT g, 'n' || g, g FROM generate_series(21, 50) g");
  EXPECT_EQ(converged().substr(0, 3), "50:");
  Pg("UPDATE public.ops SET qty = qty * 10 WHERE id <= 10");  // non-key
  Pg("UPDATE public.ops SET id = id + 1000 WHERE id > 45");   // key
  Pg("DELETE FROM public.ops WHERE id BETWEEN 11 AND 15");
  // One transaction that inserts, updates and deletes the same key.
  Pg("BEGIN; INSERT INTO public.ops VALUES (500, 'a', 1); UPDATE public.ops SET name = 'b' WHERE "
     "id = 500; DELETE FROM public.ops WHERE id = 500; INSERT INTO public.ops VALUES (500, 'c', "
     "3); COMMIT");
  EXPECT_EQ(converged().substr(0, 3), "46:");
  Pg("BEGIN; INSERT INTO public.ops VALUES (600, 'rolled back', 0); ROLLBACK");
  // A truncate between changes of one transaction: the rows before it go, those after stay.
  Pg("BEGIN; INSERT INTO public.ops VALUES (950, 'before truncate', 0); TRUNCATE public.ops; "
     "INSERT INTO public.ops VALUES (951, 'after truncate', 1); COMMIT");
  EXPECT_EQ(converged().substr(0, 2), "1:");
  EXPECT_EQ(Pg("SELECT name FROM sink.ops"), "after truncate");
  // The job's offset in the sink's schema is the job's WAL position.
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return Pg("SELECT job_offset FROM millrace.jobs WHERE job_key LIKE 'sink_ops#%'") ==
               JobValue("sink_ops", "CurrentOffset");
      },
      std::chrono::seconds(10)))
      << JobValue("sink_ops", "CurrentOffset");
  EXPECT_NE(Pg("SELECT job_offset FROM millrace.jobs WHERE job_key LIKE 'sink_ops#%'").find("lsn"),
            std::string::npos);
}

TEST_F(PgSinkCdcTest, TheSelectProjectsRenamesAndFiltersExactly) {
  Pg("CREATE TABLE public.proj (id int PRIMARY KEY, name text, qty int); CREATE TABLE sink.proj "
     "(k int PRIMARY KEY, label text NOT NULL, twice bigint)");
  ASSERT_EQ(CreateJob("sink_proj", "INSERT INTO " + SinkTable("proj") +
                                       " SELECT id AS k, upper(name), qty * 2 FROM " +
                                       Stream("proj") + " WHERE qty > 10"),
            Status::Ok());
  Pg("INSERT INTO public.proj SELECT g, 'n' || g, g FROM generate_series(1, 30) g");
  Pg("UPDATE public.proj SET qty = 0 WHERE id = 25");  // leaves the filter: gone from the target
  Pg("UPDATE public.proj SET qty = 50 WHERE id = 3");  // enters it
  Pg("DELETE FROM public.proj WHERE id IN (4, 26)");
  auto [want, got] = Converge(
      "(SELECT id AS k, upper(name) AS label, qty * 2 AS twice FROM public.proj WHERE qty > 10) p",
      SinkTable("proj"), {{"k"}, {"label"}, {"twice"}});
  EXPECT_EQ(want, got);
  EXPECT_EQ(Pg("SELECT count(*) FROM sink.proj WHERE k = 25"), "0");
  EXPECT_EQ(Pg("SELECT twice FROM sink.proj WHERE k = 3"), "100");
}

TEST_F(PgSinkCdcTest, ATargetWithoutAPrimaryKeyIsRefused) {
  Pg("CREATE TABLE public.nokey (id int PRIMARY KEY, v text); CREATE TABLE sink.nokey (id int, v "
     "text)");
  Status created = CreateJob(
      "sink_nokey", "INSERT INTO " + SinkTable("nokey") + " SELECT * FROM " + Stream("nokey"));
  EXPECT_NE(created.message().find("a change stream applies its changes by key: the target "
                                   "pg.sink.nokey needs a primary key"),
            std::string::npos)
      << created.ToString();
  EXPECT_EQ(MrValue("SELECT count(*) FROM jobs(type := 'insert') WHERE Name = 'sink_nokey'"), "0");
}

// An UPDATE that leaves a TOASTed value out of the stream: the sink cannot take it from the
// target's row, so the job pauses saying what to do, and loads nothing wrong; with REPLICA
// IDENTITY FULL (the old row in the stream) it goes on.
TEST_F(PgSinkCdcTest, AnUnchangedToastedValueNeedsReplicaIdentityFull) {
  Pg("CREATE TABLE public.toast (id int PRIMARY KEY, big text, n int); CREATE TABLE sink.toast "
     "(id int PRIMARY KEY, big text, n int)");
  ASSERT_EQ(CreateJob("sink_toast",
                      "INSERT INTO " + SinkTable("toast") + " SELECT * FROM " + Stream("toast")),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("sink_toast"));
  // 12,800 characters of hex digits: stored out of line.
  Pg("INSERT INTO public.toast SELECT 1, string_agg(md5(g::text), ''), 0 FROM "
     "generate_series(1, 400) g");
  const std::vector<CanonColumn> columns = {{"id"}, {"big"}, {"n"}};
  auto [want, got] = Converge("public.toast", SinkTable("toast"), columns);
  EXPECT_EQ(want, got);
  Pg("UPDATE public.toast SET n = 1 WHERE id = 1");
  EXPECT_NE(WaitUntilPaused("sink_toast").find("set REPLICA IDENTITY FULL on the source table"),
            std::string::npos);
  EXPECT_EQ(Pg("SELECT n, length(big) FROM sink.toast"), "0|12800");
  Pg("ALTER TABLE public.toast REPLICA IDENTITY FULL; UPDATE public.toast SET n = 2 WHERE id = 1");
  // The paused job's change is still the first it reads: skip past it by making it again.
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'sink_toast'").ok());
  Pg("DROP TABLE sink.toast; CREATE TABLE sink.toast (id int PRIMARY KEY, big text, n int)");
  ASSERT_EQ(CreateJob("sink_toast2",
                      "INSERT INTO " + SinkTable("toast") + " SELECT * FROM " + Stream("toast")),
            Status::Ok());
  ASSERT_TRUE(WaitUntilStreaming("sink_toast2"));
  Pg("UPDATE public.toast SET n = 3 WHERE id = 1");
  auto [want2, got2] = Converge("public.toast", SinkTable("toast"), columns);
  EXPECT_EQ(want2, got2);
}

// Privileges on a catalog's own objects, as Doris names them: LOAD_PRIV on pg.sink.granted lets
// a user make a job into it (none on another table, nor on sink.granted of the embedded catalog,
// does); the user sees the job once it may read the table, and the catalog once it holds a
// privilege in it.
TEST_F(PgSinkCdcTest, AGrantOnTheCatalogsTableLetsAUserLoadIt) {
  Pg("CREATE TABLE public.granted (id int PRIMARY KEY, v text); CREATE TABLE sink.granted (id int "
     "PRIMARY KEY, v text)");
  ASSERT_TRUE(Mr("CREATE USER loader IDENTIFIED BY 'loader-pw'").ok());
  ASSERT_TRUE(Mr("CREATE DATABASE sink").ok());
  ASSERT_TRUE(Mr("GRANT LOAD_PRIV ON sink.* TO loader").ok());
  ASSERT_TRUE(Mr("GRANT LOAD_PRIV ON pg.sink.other TO loader").ok());
  auto loader = access::ConnectAs(env().mr().mysql_port(), "loader", "loader-pw");
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  const std::string job =
      "CREATE JOB sink_granted ON STREAMING PROPERTIES (\"max_interval\" = "
      "\"1\") DO INSERT INTO " +
      SinkTable("granted") + " SELECT * FROM " + Stream("granted");
  auto denied = access::Query(loader->get(), job);
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.status().message().find("1142"), std::string::npos) << denied.status().message();
  EXPECT_NE(denied.status().message().find("granted"), std::string::npos);
  // SHOW CATALOGS lists pg: the user holds a privilege in it.
  auto catalogs = access::Query(loader->get(), "SHOW CATALOGS");
  ASSERT_TRUE(catalogs.ok()) << catalogs.status().ToString();
  ASSERT_EQ(catalogs->size(), 2u);
  EXPECT_EQ((*catalogs)[1][1], "pg");

  ASSERT_TRUE(Mr("GRANT LOAD_PRIV ON pg.sink.granted TO loader").ok());
  auto created = access::Query(loader->get(), job);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Pg("INSERT INTO public.granted VALUES (1, 'one')");
  auto [want, got] = Converge("public.granted", SinkTable("granted"), {{"id"}, {"v"}});
  EXPECT_EQ(want, got);
  // The job is the user's to see once it may read the table.
  const std::string mine =
      "SELECT count(*) FROM jobs(type := 'insert') WHERE Name = 'sink_granted'";
  EXPECT_EQ(access::Query(loader->get(), mine).value(), (access::Rows{{"0"}}));
  ASSERT_TRUE(Mr("GRANT SELECT_PRIV ON pg.sink.* TO loader").ok());
  EXPECT_EQ(access::Query(loader->get(), mine).value(), (access::Rows{{"1"}}));
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'sink_granted'").ok());
}

}  // namespace
}  // namespace millrace::cdc
