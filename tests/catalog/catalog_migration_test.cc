// Upgrades of the job catalog (catalog_version.h, DuckDbCatalog::Open): a data directory
// the first release wrote (tests/catalog/catalog_v1.sql) opens under this build and its jobs carry
// on where they were; a version 2 catalog gains the users' tables and keeps everything else; a
// catalog newer than this build is refused untouched; a migration that fails leaves the catalog
// at the version it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "access/password.h"
#include "catalog/catalog_version.h"
#include "catalog/duckdb_catalog.h"
#include "job/job_test_util.h"
#include "source/local_file_system.h"
#include "source/local_source.h"
#include "testing/test_paths.h"

namespace millrace::job {
namespace {

using Rows = std::vector<std::vector<std::string>>;

const std::string kVersion = std::to_string(catalog::kCatalogVersion);
const std::string kNextVersion = std::to_string(catalog::kCatalogVersion + 1);

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The ETag the local source gives the file now (see local_source.h).
std::string EtagOf(const std::string& path) {
  auto stat = source::LocalFileSystem::Posix()->Stat(path);
  EXPECT_TRUE(stat.ok()) << stat.status().ToString();
  return stat.ok() ? source::LocalEtag(*stat) : std::string();
}

std::string FileNameJson(const std::string& key) {
  return "{\"fileName\":\"" + key + "\"}";
}

// The tables and columns of schema __millrace, in column order.
Rows CatalogColumns(engine::Connection& conn) {
  return engine::QueryRows(conn,
                           "SELECT table_name, column_index, column_name, data_type, is_nullable "
                           "FROM duckdb_columns() WHERE schema_name = '__millrace' "
                           "ORDER BY table_name, column_index");
}

// Every table, column, index and row of the database, as text: to check that nothing changed.
Rows Everything(engine::Connection& conn) {
  Rows all = engine::QueryRows(conn,
                               "SELECT schema_name, table_name, column_index, column_name, "
                               "data_type FROM duckdb_columns() WHERE NOT internal "
                               "ORDER BY ALL");
  for (auto& row :
       engine::QueryRows(conn,
                         "SELECT schema_name, table_name, index_name, sql FROM duckdb_indexes() "
                         "ORDER BY ALL")) {
    all.push_back(row);
  }
  const Rows tables = engine::QueryRows(
      conn, "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT internal ORDER BY ALL");
  for (const auto& table : tables) {
    const std::string name = table[0] + "." + table[1];
    for (auto& row : engine::QueryRows(conn, "SELECT * FROM " + name + " ORDER BY ALL")) {
      row.insert(row.begin(), name);
      all.push_back(std::move(row));
    }
  }
  return all;
}

bool HasVersionTable(engine::Connection& conn) {
  return engine::QueryValue(conn,
                            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                            "'__millrace' AND table_name = 'catalog_version'") == "1";
}

bool HasDefinitionColumn(engine::Connection& conn) {
  return engine::QueryValue(conn,
                            "SELECT count(*) FROM duckdb_columns() WHERE schema_name = "
                            "'__millrace' AND table_name = 'jobs' AND column_name = "
                            "'definition'") == "1";
}

class CatalogMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = dir_.Join("in");
    std::filesystem::create_directories(in_);
    // The files the first release loaded, still in the watched directory.
    WriteFile(in_ + "/a.csv", "1,a\n2,a\n");
    WriteFile(in_ + "/b.csv", "3,b\n4,b\n5,b\n");
  }

  // A data directory as the first release left it: the v1 fixture, then `extra` SQL.
  void WriteV1Directory(const std::string& extra = "") {
    std::ifstream in(testing::SourcePath("tests/catalog/catalog_v1.sql"));
    ASSERT_TRUE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    std::string script = ReplaceAll(text.str(), "@IN@", in_);
    script = ReplaceAll(script, "@ETAG_A@", EtagOf(in_ + "/a.csv"));
    script = ReplaceAll(script, "@ETAG_B@", EtagOf(in_ + "/b.csv"));
    auto db = engine::OpenOrDie({.path = db_path_});
    ASSERT_NE(db, nullptr);
    auto conn = engine::ConnectOrDie(*db);
    ASSERT_NE(conn, nullptr);
    Status s = conn->Execute(script + extra);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Opens the catalog and starts a JobService over `db` as the server does, and returns how
  // that went (the service, if it started, is stopped again).
  Status StartService(engine::Database* db) {
    JobServiceConfig config;
    std::unique_ptr<catalog::DuckDbCatalog> catalog;
    MR_RETURN_IF_ERROR(UseDuckDbCatalog(db, &catalog, &config));
    config.clock = Clock::Real();
    config.work_root = db_path_ + ".work";
    config.make_source = load::DefaultSourceFactory(Clock::Real(), std::chrono::milliseconds(100));
    return JobService::Start(std::move(config)).status();
  }

  // name -> count(*) of a user table.
  Rows PerName(const std::string& table) {
    return harness_.Query("SELECT name, count(*) FROM " + table + " GROUP BY name ORDER BY name");
  }
  int64_t RowsNamed(const std::string& table, const std::string& name) {
    return std::stoll(
        harness_.Value("SELECT count(*) FROM " + table + " WHERE name = '" + name + "'"));
  }
  Rows Ledger(const std::string& job) {
    return harness_.QueryExpanded("SELECT FileName, State, Rows FROM job_files(\"job\" = \"" + job +
                                  "\") ORDER BY FileName");
  }
  std::string File(const std::string& name) const { return in_ + "/" + name; }

  void ExpectFailedMigrationLeavesVersion1(const std::string& obstacle, const std::string& remove,
                                           const std::string& error);
  // Turns the catalog at db_path_ into a version 2 one, opens it (migrating it to the current
  // version) and checks what the migration did; the database is closed again.
  void MigrateVersion2();

  testing::TempDir dir_;
  std::string in_;
  const std::string db_path_ = dir_.Join("db.duckdb");
  JobServiceHarness harness_{db_path_};
};

TEST_F(CatalogMigrationTest, AVersion1DirectoryOpensAndItsJobsCarryOn) {
  ASSERT_NO_FATAL_FAILURE(WriteV1Directory());
  // A file that arrived while the old release was stopped.
  WriteFile(File("c.csv"), "6,c\n7,c\n");
  ASSERT_NO_FATAL_FAILURE(harness_.Start());

  // The catalog is at the current version, with the same tables and columns as a new one.
  EXPECT_EQ(harness_.Query("SELECT version FROM __millrace.catalog_version"), (Rows{{kVersion}}));
  // Every job's statement is sealed (version 7).
  EXPECT_EQ(harness_.Query("SELECT count(*) FROM __millrace.jobs WHERE insert_sql LIKE 'mrsec1:%' "
                           "AND insert_sql NOT LIKE '%file_path%'"),
            (Rows{{"3"}}));
  EXPECT_FALSE(HasDefinitionColumn(harness_.conn()));
  {
    testing::TempDir fresh_dir;
    auto fresh = engine::OpenOrDie({.path = fresh_dir.Join("fresh.duckdb")});
    catalog::DuckDbCatalog store(fresh.get(), "fresh", TestSecrets().get());
    ASSERT_TRUE(store.Open().ok());
    auto fresh_conn = engine::ConnectOrDie(*fresh);
    EXPECT_EQ(CatalogColumns(harness_.conn()), CatalogColumns(*fresh_conn));
  }

  // The paused job does not move: its offsets are JSON now, the rest is as v1 left it.
  EXPECT_EQ(harness_.JobColumn("archive", "Status"), "PAUSED");
  EXPECT_EQ(harness_.JobColumn("archive", "CurrentOffset"), FileNameJson(File("b.csv")));
  EXPECT_EQ(harness_.JobColumn("archive", "EndOffset"), FileNameJson(File("b.csv")));
  EXPECT_EQ(harness_.JobColumn("archive", "ErrorMsg"),
            "{\"code\":\"MANUAL_PAUSE_ERR\",\"msg\":\"paused by user\"}");
  EXPECT_EQ(harness_.JobColumn("archive", "Comment"), "cold copy");
  EXPECT_EQ(harness_.JobColumn("archive", "SucceedTaskCount"), "1");
  EXPECT_EQ(harness_.JobColumn("archive", "LoadStatistic"),
            "{\"scannedRows\":5,\"loadBytes\":20,\"fileNumber\":2,\"fileSize\":20,"
            "\"filteredRows\":0}");
  EXPECT_EQ(harness_.JobColumn("archive", "ExecuteSql"),
            "INSERT INTO u SELECT CAST(c1 AS INTEGER), c2 FROM local(\"file_path\" = \"" + in_ +
                "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  EXPECT_EQ(harness_.JobColumn("latecomers", "Properties"),
            "{\"late_files\":\"ignore\",\"max_interval\":\"1\"}");

  // The task history v1 recorded is in tasks().
  EXPECT_EQ(
      harness_.Query("SELECT JobName, TaskId, Label, Status, LoadStatistic, RunningOffset FROM "
                     "tasks(type := 'insert') WHERE (JobName = 'people' AND TaskId <= 2) OR "
                     "(JobName <> 'people' AND TaskId = 1) ORDER BY JobId, TaskId"),
      (Rows{{"people", "1", "1_1", "SUCCESS",
             "{\"scannedRows\":2,\"loadBytes\":8,\"fileNumber\":1,\"fileSize\":8,"
             "\"filteredRows\":0}",
             "{\"startFileName\":\"" + File("a.csv") + "\",\"endFileName\":\"" + File("a.csv") +
                 "\"}"},
            {"people", "2", "1_2", "SUCCESS",
             "{\"scannedRows\":3,\"loadBytes\":12,\"fileNumber\":1,\"fileSize\":12,"
             "\"filteredRows\":0}",
             "{\"startFileName\":\"" + File("b.csv") + "\",\"endFileName\":\"" + File("b.csv") +
                 "\"}"},
            {"archive", "1", "2_1", "SUCCESS",
             "{\"scannedRows\":5,\"loadBytes\":20,\"fileNumber\":2,\"fileSize\":20,"
             "\"filteredRows\":0}",
             "{\"startFileName\":\"" + File("a.csv") + "\",\"endFileName\":\"" + File("b.csv") +
                 "\"}"},
            {"latecomers", "1", "3_1", "SUCCESS",
             "{\"scannedRows\":3,\"loadBytes\":12,\"fileNumber\":1,\"fileSize\":12,"
             "\"filteredRows\":0}",
             "{\"startFileName\":\"" + File("b.csv") + "\",\"endFileName\":\"" + File("b.csv") +
                 "\"}"}}));
  EXPECT_NE(harness_.Value("SELECT CreateTime FROM tasks(type := 'insert') WHERE JobName = "
                           "'people' AND TaskId = 1"),
            "NULL");

  // The running jobs carry on after b.csv: c.csv once, a.csv and b.csv not again.
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.JobColumn("people", "CurrentOffset") == FileNameJson(File("c.csv")) &&
           harness_.JobColumn("latecomers", "CurrentOffset") == FileNameJson(File("c.csv"));
  })) << harness_.JobColumn("people", "CurrentOffset")
      << " " << harness_.JobColumn("latecomers", "CurrentOffset");
  EXPECT_EQ(PerName("t"), (Rows{{"a", "2"}, {"b", "3"}, {"c", "2"}}));
  // latecomers skipped a.csv as a late file under v1: it stays skipped.
  EXPECT_EQ(PerName("w"), (Rows{{"b", "3"}, {"c", "2"}}));
  EXPECT_EQ(harness_.JobColumn("people", "Status"), "RUNNING");
  EXPECT_EQ(harness_.JobColumn("people", "SucceedTaskCount"), "3");
  EXPECT_EQ(harness_.JobColumn("people", "LoadStatistic"),
            "{\"scannedRows\":7,\"loadBytes\":28,\"fileNumber\":3,\"fileSize\":28,"
            "\"filteredRows\":0}");
  // The ledger v1 wrote matched the files: nothing is reported changed or late.
  EXPECT_EQ(harness_.JobColumn("people", "JobRuntimeMsg"), "NULL");
  EXPECT_EQ(Ledger("people"), (Rows{{File("a.csv"), "LOADED", "2"},
                                    {File("b.csv"), "LOADED", "3"},
                                    {File("c.csv"), "LOADED", "2"}}));
  EXPECT_EQ(Ledger("latecomers"), (Rows{{File("a.csv"), "SKIPPED", "0"},
                                        {File("b.csv"), "LOADED", "3"},
                                        {File("c.csv"), "LOADED", "2"}}));
  EXPECT_EQ(
      harness_.Value("SELECT RunningOffset FROM tasks(type := 'insert') WHERE JobName = "
                     "'people' AND TaskId = 3"),
      "{\"startFileName\":\"" + File("c.csv") + "\",\"endFileName\":\"" + File("c.csv") + "\"}");

  // The paused job stays paused: c.csv waits for it.
  EXPECT_FALSE(harness_.WaitFor([&] { return RowsNamed("u", "c") != 0; }, std::chrono::seconds(2)));
  EXPECT_EQ(harness_.JobColumn("archive", "Status"), "PAUSED");
  EXPECT_EQ(harness_.JobColumn("archive", "CurrentOffset"), FileNameJson(File("b.csv")));

  // Resumed, it loads c.csv exactly once, and nothing it had loaded.
  auto resumed = harness_.Run("RESUME JOB WHERE jobname = 'archive'");
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.JobColumn("archive", "CurrentOffset") == FileNameJson(File("c.csv"));
  })) << harness_.JobColumn("archive", "CurrentOffset");
  EXPECT_EQ(PerName("u"), (Rows{{"a", "2"}, {"b", "3"}, {"c", "2"}}));
  EXPECT_EQ(harness_.JobColumn("archive", "Status"), "RUNNING");
  EXPECT_EQ(harness_.JobColumn("archive", "ErrorMsg"), "NULL");
  EXPECT_EQ(harness_.JobColumn("archive", "SucceedTaskCount"), "2");
  EXPECT_EQ(Ledger("archive"), (Rows{{File("a.csv"), "LOADED", "2"},
                                     {File("b.csv"), "LOADED", "3"},
                                     {File("c.csv"), "LOADED", "2"}}));

  // Started once more: the catalog is already at the current version and is not migrated again
  // (a second migration would wrap the JSON offsets once more).
  harness_.Stop();
  ASSERT_NO_FATAL_FAILURE(harness_.Start());
  EXPECT_EQ(harness_.Query("SELECT version FROM __millrace.catalog_version"), (Rows{{kVersion}}));
  EXPECT_EQ(harness_.Query("SELECT name, current_offset, end_offset FROM __millrace.jobs ORDER "
                           "BY id"),
            (Rows{{"people", FileNameJson(File("c.csv")), FileNameJson(File("c.csv"))},
                  {"archive", FileNameJson(File("c.csv")), FileNameJson(File("c.csv"))},
                  {"latecomers", FileNameJson(File("c.csv")), FileNameJson(File("c.csv"))}}));
  for (const std::string job : {"people", "archive", "latecomers"}) {
    EXPECT_EQ(harness_.JobColumn(job, "Status"), "RUNNING") << job;
    EXPECT_EQ(harness_.JobColumn(job, "CurrentOffset"), FileNameJson(File("c.csv"))) << job;
  }
  EXPECT_EQ(harness_.JobColumn("people", "SucceedTaskCount"), "3");
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM tasks(type := 'insert') WHERE JobName = "
                           "'people'"),
            "3");
  // ... and the jobs still load each new file once.
  WriteFile(File("d.csv"), "8,d\n");
  ASSERT_TRUE(harness_.WaitFor([&] {
    return RowsNamed("t", "d") == 1 && RowsNamed("u", "d") == 1 && RowsNamed("w", "d") == 1;
  }));
  ASSERT_TRUE(harness_.WaitFor([&] {
    return harness_.JobColumn("people", "CurrentOffset") == FileNameJson(File("d.csv")) &&
           harness_.JobColumn("archive", "CurrentOffset") == FileNameJson(File("d.csv")) &&
           harness_.JobColumn("latecomers", "CurrentOffset") == FileNameJson(File("d.csv"));
  }));
  EXPECT_EQ(PerName("t"), (Rows{{"a", "2"}, {"b", "3"}, {"c", "2"}, {"d", "1"}}));
  EXPECT_EQ(PerName("u"), (Rows{{"a", "2"}, {"b", "3"}, {"c", "2"}, {"d", "1"}}));
  EXPECT_EQ(PerName("w"), (Rows{{"b", "3"}, {"c", "2"}, {"d", "1"}}));
}

TEST_F(CatalogMigrationTest, ANewerCatalogIsRefusedAndLeftAlone) {
  ASSERT_NO_FATAL_FAILURE(WriteV1Directory());
  WriteFile(File("c.csv"), "6,c\n7,c\n");
  Rows before;
  {
    // A catalog a later release wrote: this version's tables, the next version recorded.
    auto db = engine::OpenOrDie({.path = db_path_});
    catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
    ASSERT_TRUE(store.Open().ok());
    auto conn = engine::ConnectOrDie(*db);
    ASSERT_TRUE(
        conn->Execute("UPDATE __millrace.catalog_version SET version = " + kNextVersion).ok());
    before = Everything(*conn);
  }
  auto db = engine::OpenOrDie({.path = db_path_});
  ASSERT_NE(db, nullptr);
  const Status started = StartService(db.get());
  EXPECT_EQ(started.code(), StatusCode::kFailedPrecondition) << started.ToString();
  EXPECT_NE(started.message().find("version " + kNextVersion), std::string::npos)
      << started.message();
  EXPECT_NE(started.message().find("version " + kVersion), std::string::npos) << started.message();
  EXPECT_NE(started.message().find(db_path_), std::string::npos) << started.message();
  auto conn = engine::ConnectOrDie(*db);
  EXPECT_EQ(Everything(*conn), before);
  EXPECT_EQ(engine::QueryRows(*conn, "SELECT version FROM __millrace.catalog_version"),
            (Rows{{kNextVersion}}));
  // What `before` held, reopened: the migrated catalog (JSON offsets) and the users' rows.
  EXPECT_EQ(
      engine::QueryRows(*conn, "SELECT name, current_offset FROM __millrace.jobs ORDER BY id"),
      (Rows{{"people", FileNameJson(File("b.csv"))},
            {"archive", FileNameJson(File("b.csv"))},
            {"latecomers", FileNameJson(File("b.csv"))}}));
  EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM t"), "5");
}

// Starts the service on the v1 fixture plus `obstacle`, which must make the migration fail
// with a message holding `error`, and checks that the catalog is still exactly at version 1;
// then removes the obstacle with `remove` and checks that the same catalog migrates.
void CatalogMigrationTest::ExpectFailedMigrationLeavesVersion1(const std::string& obstacle,
                                                               const std::string& remove,
                                                               const std::string& error) {
  ASSERT_NO_FATAL_FAILURE(WriteV1Directory(obstacle));
  auto db = engine::OpenOrDie({.path = db_path_});
  ASSERT_NE(db, nullptr);
  auto conn = engine::ConnectOrDie(*db);
  const Rows before = Everything(*conn);

  const Status started = StartService(db.get());
  EXPECT_FALSE(started.ok());
  EXPECT_NE(started.message().find(error), std::string::npos) << started.ToString();

  // Nothing of the migration stayed: no version, offsets still bare keys, definition still
  // there.
  EXPECT_EQ(Everything(*conn), before);
  EXPECT_FALSE(HasVersionTable(*conn));
  EXPECT_TRUE(HasDefinitionColumn(*conn));
  EXPECT_EQ(engine::QueryRows(*conn,
                              "SELECT current_offset, end_offset FROM __millrace.jobs "
                              "WHERE name = 'people'"),
            (Rows{{File("b.csv"), File("b.csv")}}));
  catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
  auto stored = store.StoredVersion();
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(*stored, 1);

  // Without the obstacle the same catalog migrates.
  ASSERT_TRUE(conn->Execute(remove).ok());
  Status opened = store.Open();
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  EXPECT_EQ(engine::QueryRows(*conn, "SELECT version FROM __millrace.catalog_version"),
            (Rows{{kVersion}}));
  EXPECT_FALSE(HasDefinitionColumn(*conn));
  EXPECT_EQ(engine::QueryRows(*conn,
                              "SELECT current_offset, end_offset FROM __millrace.jobs "
                              "WHERE name = 'people'"),
            (Rows{{FileNameJson(File("b.csv")), FileNameJson(File("b.csv"))}}));
}

// The migration drops jobs.definition first; an index on it (say, added by hand) makes that
// DROP fail.
TEST_F(CatalogMigrationTest, AMigrationFailingAtItsFirstStepLeavesVersion1) {
  ExpectFailedMigrationLeavesVersion1(
      "CREATE INDEX jobs_by_definition ON __millrace.jobs (definition);",
      "DROP INDEX __millrace.jobs_by_definition",
      "migrating the job catalog in " + db_path_ + " from version 1");
}

// A view named catalog_version (not a table, so the catalog still reads as version 1) makes
// the migration fail at its last step, recording the version: by then the column is dropped
// and every offset rewritten, all in the transaction that must roll back.
TEST_F(CatalogMigrationTest, AMigrationFailingAtItsLastStepLeavesVersion1) {
  ExpectFailedMigrationLeavesVersion1(
      "CREATE VIEW __millrace.catalog_version AS SELECT 2 AS version;",
      "DROP VIEW __millrace.catalog_version", "Can only delete from base table");
}

// A version 2 catalog: what this build creates, without the users' tables (the one change
// of version 3), recorded as version 2.
void WriteVersion2Catalog(engine::Database* db, const std::string& where) {
  catalog::DuckDbCatalog store(db, where, TestSecrets().get());
  ASSERT_TRUE(store.Open().ok());
  auto conn = engine::ConnectOrDie(*db);
  ASSERT_TRUE(conn->Execute("DROP TABLE __millrace.users; DROP TABLE __millrace.grants; "
                            "DROP TABLE __millrace.audit; DROP SEQUENCE __millrace.audit_seq; "
                            "DROP TABLE __millrace.table_models; DROP TABLE "
                            "__millrace.load_labels; DROP TABLE __millrace.reading; "
                            "DROP TABLE __millrace.external_catalogs; "
                            "ALTER TABLE __millrace.files DROP COLUMN reason; "
                            "UPDATE __millrace.catalog_version SET version = 2")
                  .ok());
}

bool HasUserTables(engine::Connection& conn) {
  return engine::QueryValue(conn,
                            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                            "'__millrace' AND table_name IN ('users', 'grants')") == "2";
}

TEST_F(CatalogMigrationTest, AVersion2CatalogGainsTheUsersTablesAndKeepsTheRest) {
  ASSERT_NO_FATAL_FAILURE(WriteV1Directory());
  ASSERT_NO_FATAL_FAILURE(MigrateVersion2());
  // And the jobs carry on under the service.
  ASSERT_NO_FATAL_FAILURE(harness_.Start());
  EXPECT_EQ(harness_.JobColumn("archive", "Status"), "PAUSED");
  EXPECT_EQ(harness_.JobColumn("people", "CurrentOffset"), FileNameJson(File("b.csv")));
  EXPECT_EQ(harness_.Value("SELECT count(*) FROM __millrace.grants"), "1");
}

void CatalogMigrationTest::MigrateVersion2() {
  auto db = engine::OpenOrDie({.path = db_path_});
  ASSERT_NE(db, nullptr);
  ASSERT_NO_FATAL_FAILURE(WriteVersion2Catalog(db.get(), db_path_));
  auto conn = engine::ConnectOrDie(*db);
  ASSERT_FALSE(HasUserTables(*conn));
  const Rows before = Everything(*conn);

  catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
  ASSERT_EQ(store.StoredVersion().value(), 2);
  Status opened = store.Open();
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  EXPECT_EQ(store.StoredVersion().value(), catalog::kCatalogVersion);
  EXPECT_TRUE(HasUserTables(*conn));
  {
    testing::TempDir fresh_dir;
    auto fresh = engine::OpenOrDie({.path = fresh_dir.Join("fresh.duckdb")});
    catalog::DuckDbCatalog fresh_store(fresh.get(), "fresh", TestSecrets().get());
    ASSERT_TRUE(fresh_store.Open().ok());
    auto fresh_conn = engine::ConnectOrDie(*fresh);
    EXPECT_EQ(CatalogColumns(*conn), CatalogColumns(*fresh_conn));
  }
  // Everything else is as it was: the new tables are empty, only the version moved.
  Rows after = Everything(*conn);
  std::erase_if(after, [](const std::vector<std::string>& row) {
    return row.size() > 1 && row[0] == "__millrace" &&
           (row[1] == "users" || row[1] == "grants" || row[1] == "audit" ||
            row[1] == "table_models" || row[1] == "load_labels" || row[1] == "reading" ||
            row[1] == "external_catalogs" ||
            (row[1] == "files" && row.size() > 3 && row[3] == "reason"));
  });
  // The ledger's new last column (the reason of a bad file) is empty in every row.
  for (std::vector<std::string>& row : after) {
    if (!row.empty() && row[0] == "__millrace.files") {
      EXPECT_EQ(row.back(), "NULL");
      row.pop_back();
    }
  }
  Rows expected = before;
  for (Rows* rows : {&expected, &after}) {
    std::erase_if(*rows, [](const std::vector<std::string>& row) {
      return !row.empty() && row[0] == "__millrace.catalog_version";
    });
  }
  EXPECT_EQ(after, expected);
  EXPECT_EQ(engine::QueryValue(*conn, "SELECT count(*) FROM __millrace.users"), "0");

  // The migrated store keeps users and grants.
  access::UserRecord user{"ann", "%", access::NativePasswordHash("pw"), false, 0, 1};
  ASSERT_TRUE(store.users()->InsertUser(user).ok());
  ASSERT_TRUE(store.users()
                  ->AddGrant({"ann", {"shop", ""}, access::ParsePrivilegeName("SELECT").value()})
                  .ok());
  auto users = store.users()->LoadUsers();
  ASSERT_TRUE(users.ok()) << users.status().ToString();
  ASSERT_EQ(users->users.size(), 1u);
  EXPECT_EQ(users->users[0].password_hash, user.password_hash);
  ASSERT_EQ(users->grants.size(), 1u);
}

// A view where the users table goes makes the 2 -> 3 step fail: the catalog stays at 2.
TEST_F(CatalogMigrationTest, AFailedMigrationFromVersion2LeavesVersion2) {
  auto db = engine::OpenOrDie({.path = db_path_});
  ASSERT_NE(db, nullptr);
  ASSERT_NO_FATAL_FAILURE(WriteVersion2Catalog(db.get(), db_path_));
  auto conn = engine::ConnectOrDie(*db);
  ASSERT_TRUE(conn->Execute("CREATE VIEW __millrace.users AS SELECT 1 AS name").ok());
  const Rows before = Everything(*conn);
  catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
  const Status opened = store.Open();
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(opened.message().find("from version 2"), std::string::npos) << opened.ToString();
  EXPECT_EQ(Everything(*conn), before);
  EXPECT_EQ(store.StoredVersion().value(), 2);
  ASSERT_TRUE(conn->Execute("DROP VIEW __millrace.users").ok());
  ASSERT_TRUE(store.Open().ok());
  EXPECT_TRUE(HasUserTables(*conn));
  EXPECT_EQ(store.StoredVersion().value(), catalog::kCatalogVersion);
}

// A version 6 catalog kept each job's statement, credentials included, in clear: the upgrade
// seals it, the job loads with the same statement, and a wrong key cannot open it.
TEST_F(CatalogMigrationTest, AVersion6CatalogHasItsCredentialsSealed) {
  const std::string secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY";
  const std::string insert =
      "INSERT INTO t SELECT * FROM S3(\"uri\" = \"s3://b/*.csv\", \"s3.access_key\" = \"AK\", "
      "\"s3.secret_key\" = \"" +
      secret + "\")";
  {
    auto db = engine::OpenOrDie({.path = db_path_});
    catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
    ASSERT_TRUE(store.Open().ok());
    JobRecord job;
    job.id = 1;
    job.name = "s3job";
    job.insert_sql = insert;
    ASSERT_TRUE(store.jobs()->InsertJob(job).ok());
    // As version 6 stored it.
    auto conn = engine::ConnectOrDie(*db);
    ASSERT_TRUE(
        conn->Execute("UPDATE __millrace.jobs SET insert_sql = " + engine::QuoteLiteral(insert) +
                      "; DROP TABLE __millrace.external_catalogs; "
                      "UPDATE __millrace.catalog_version SET version = 6")
            .ok());
  }
  auto db = engine::OpenOrDie({.path = db_path_});
  auto conn = engine::ConnectOrDie(*db);
  catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
  ASSERT_TRUE(store.Open().ok());
  EXPECT_EQ(store.StoredVersion().value(), catalog::kCatalogVersion);
  const std::string stored = engine::QueryValue(*conn, "SELECT insert_sql FROM __millrace.jobs");
  EXPECT_TRUE(SecretBox::IsSealed(stored)) << stored;
  EXPECT_EQ(stored.find(secret), std::string::npos);
  auto jobs = store.jobs()->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].insert_sql, insert);
  // Another key opens nothing, and says so; the job still loads, without its statement.
  auto other = SecretBox::WithKey(std::string(SecretBox::kKeyBytes, 'x'), "another key");
  catalog::DuckDbCatalog wrong(db.get(), db_path_, other.get());
  auto unopened = wrong.jobs()->LoadJobs();
  ASSERT_TRUE(unopened.ok()) << unopened.status().ToString();
  ASSERT_EQ(unopened->size(), 1u);
  EXPECT_EQ((*unopened)[0].insert_sql, "");
  EXPECT_NE((*unopened)[0].statement_error.find("cannot be opened with another key"),
            std::string::npos)
      << (*unopened)[0].statement_error;
  // Saving such a job keeps its sealed statement for the right key.
  JobRecord paused = (*unopened)[0];
  paused.state = JobState::kPaused;
  ASSERT_TRUE(wrong.jobs()->SaveJob(paused).ok());
  EXPECT_EQ(engine::QueryValue(*conn, "SELECT insert_sql FROM __millrace.jobs"), stored);
  EXPECT_EQ(store.jobs()->LoadJobs().value().at(0).insert_sql, insert);
  // Without a key, a catalog with jobs is not upgraded.
  ASSERT_TRUE(
      conn->Execute("UPDATE __millrace.jobs SET insert_sql = " + engine::QuoteLiteral(insert) +
                    "; DROP TABLE __millrace.external_catalogs; "
                    "UPDATE __millrace.catalog_version SET version = 6")
          .ok());
  catalog::DuckDbCatalog keyless(db.get(), db_path_);
  const Status opened = keyless.Open();
  EXPECT_EQ(opened.code(), StatusCode::kFailedPrecondition) << opened.ToString();
  EXPECT_EQ(keyless.StoredVersion().value(), 6);
}

}  // namespace
// A version 8 catalog's grants had no catalog: each stays a grant in the embedded catalog, and
// the migrated store keeps grants on an external catalog's objects apart from them.
TEST_F(CatalogMigrationTest, AVersion8CatalogsGrantsStayInTheEmbeddedCatalog) {
  const access::PrivilegeSet load = access::ParsePrivilegeName("LOAD").value();
  {
    auto db = engine::OpenOrDie({.path = db_path_});
    catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
    ASSERT_TRUE(store.Open().ok());
    access::UserRecord user{"ann", "%", access::NativePasswordHash("pw"), false, 0, 1};
    ASSERT_TRUE(store.users()->InsertUser(user).ok());
    ASSERT_TRUE(store.users()->AddGrant({"ann", {"shop", "orders"}, load}).ok());
    // As version 8 stored it.
    auto conn = engine::ConnectOrDie(*db);
    ASSERT_TRUE(conn->Execute("ALTER TABLE __millrace.grants DROP COLUMN catalog_name; "
                              "UPDATE __millrace.catalog_version SET version = 8")
                    .ok());
  }
  auto db = engine::OpenOrDie({.path = db_path_});
  catalog::DuckDbCatalog store(db.get(), db_path_, TestSecrets().get());
  ASSERT_TRUE(store.Open().ok());
  EXPECT_EQ(store.StoredVersion().value(), catalog::kCatalogVersion);
  // The same names in catalog pg are another object.
  ASSERT_TRUE(store.users()->AddGrant({"ann", {"shop", "orders", "pg"}, load}).ok());
  auto users = store.users()->LoadUsers();
  ASSERT_TRUE(users.ok()) << users.status().ToString();
  ASSERT_EQ(users->grants.size(), 2u);
  std::vector<std::string> objects;
  for (const access::Grant& grant : users->grants)
    objects.push_back(grant.object.ToString());
  std::sort(objects.begin(), objects.end());
  EXPECT_EQ(objects, (std::vector<std::string>{"pg.shop.orders", "shop.orders"}));
  // Removing one leaves the other.
  ASSERT_TRUE(store.users()->RemoveGrant({"ann", {"shop", "orders", "pg"}, load}).ok());
  users = store.users()->LoadUsers();
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->grants.size(), 1u);
  EXPECT_EQ(users->grants[0].object.ToString(), "shop.orders");
}

}  // namespace millrace::job
