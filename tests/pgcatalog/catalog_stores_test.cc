// The catalog's stores, one code over two engines (catalog/sql_db.h): every test runs against
// the embedded DuckDB catalog and against the cluster's catalog in a real PostgreSQL 15 (a
// database of its own per test), and must see the same answers. Then what only the
// PostgreSQL catalog does: its creation, a newer one refused, servers creating it at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "access/password.h"
#include "catalog/bookkeeping.h"
#include "catalog/catalog_version.h"
#include "catalog/duckdb_catalog.h"
#include "catalog/duckdb_sql.h"
#include "common/thread_annotations.h"
#include "engine/engine_test_util.h"
#include "job/job_test_util.h"
#include "pgcatalog/pg_bookkeeping_sink.h"
#include "pgcatalog/pg_catalog.h"
#include "testing/postgres_server.h"

namespace millrace::pgcatalog {
namespace {

using job::FileState;
using job::JobRecord;
using job::LedgerEntry;

enum class Engine { kDuckDb, kPostgres };

std::string EngineName(const ::testing::TestParamInfo<Engine>& info) {
  return info.param == Engine::kDuckDb ? "DuckDb" : "Postgres";
}

// One PostgreSQL for the binary; a fresh database per call, whose default collation is a
// language's (ICU's root locale), as a production database's usually is, not bytewise.
class Postgres {
 public:
  static Postgres& Get() {
    static Postgres* const kServer = new Postgres();
    return *kServer;
  }
  testing::PostgresServer& server() { return *server_; }
  // Params of a new, empty database.
  pg::ConnectParams NewDatabase() {
    const std::string name = "catalog_" + std::to_string(++databases_);
    auto created = server_->Sql("CREATE DATABASE " + name +
                                " TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und'");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return {.host = server_->host(),
            .port = server_->port(),
            .database = name,
            .user = server_->user(),
            .password = server_->password()};
  }

 private:
  Postgres() {
    auto started = testing::PostgresServer::Start();
    if (!started.ok()) {
      ADD_FAILURE() << started.status().ToString();
      std::abort();
    }
    server_ = std::move(started).value();
  }
  std::unique_ptr<testing::PostgresServer> server_;
  int databases_ = 0;
};

// The stores of one catalog, whichever engine holds it.
struct Stores {
  job::JobStore* jobs = nullptr;
  access::UserStore* users = nullptr;
  access::AuditStore* audit = nullptr;
  external::CatalogStore* catalogs = nullptr;
};

class CatalogStoresTest : public ::testing::TestWithParam<Engine> {
 public:
  void SetUp() override {
    if (GetParam() == Engine::kDuckDb) {
      db_ = engine::OpenOrDie({.path = dir_.Join("db.duckdb")});
      duckdb_ = std::make_unique<catalog::DuckDbCatalog>(db_.get(), "db.duckdb",
                                                         job::TestSecrets().get());
      ASSERT_TRUE(duckdb_->Open().ok());
      stores_ = {duckdb_->jobs(), duckdb_->users(), duckdb_->audit(), duckdb_->external_catalogs()};
      sql_ = std::make_unique<catalog::DuckDbSqlDatabase>(db_.get());
    } else {
      params_ = Postgres::Get().NewDatabase();
      pg_ = std::make_unique<PgCatalog>(params_, job::TestSecrets().get());
      Status opened = pg_->Open();
      ASSERT_TRUE(opened.ok()) << opened.ToString();
      stores_ = {pg_->jobs(), pg_->users(), pg_->audit(), pg_->external_catalogs()};
      sql_ = std::make_unique<PgSqlDatabase>(params_);
    }
  }

  static JobRecord Job(int64_t id, const std::string& name);
  static LedgerEntry File(int64_t job_id, const std::string& key, FileState state,
                          const std::string& reason = "");

 protected:
  // The first value of `sql` on the catalog's own database, as text.
  std::string Value(const std::string& sql) {
    if (GetParam() == Engine::kDuckDb) {
      auto conn = engine::ConnectOrDie(*db_);
      auto rows = engine::QueryRows(*conn, sql);
      return rows.empty() || rows[0].empty() ? "" : rows[0][0];
    }
    auto got = Postgres::Get().server().Sql(sql, params_.database);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : "";
  }

  testing::TempDir dir_;
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<catalog::DuckDbCatalog> duckdb_;
  pg::ConnectParams params_;
  std::unique_ptr<PgCatalog> pg_;
  Stores stores_;
  std::unique_ptr<catalog::SqlDatabase> sql_;  // the catalog's database, for the bookkeeping
};

JobRecord CatalogStoresTest::Job(int64_t id, const std::string& name) {
  JobRecord job;
  job.id = id;
  job.name = name;
  job.insert_sql =
      "INSERT INTO t SELECT * FROM S3('uri' = 's3://b/*', 's3.secret_key' = 'secret-key-8c1f')";
  job.masked_sql = "INSERT INTO t SELECT * FROM S3(...)";
  job.database = "d";
  job.create_time_us = 1000 + id;
  job.state = job::JobState::kRunning;
  job.properties = job::JobProperties::Parse({{"max_interval", "7"}}).value();
  return job;
}

LedgerEntry CatalogStoresTest::File(int64_t job_id, const std::string& key, FileState state,
                                    const std::string& reason) {
  LedgerEntry e;
  e.job_id = job_id;
  e.key = key;
  e.etag = "e-" + key;
  e.size = static_cast<int64_t>(key.size());
  e.state = state;
  e.task_id = 3;
  e.rows = 10;
  e.reason = reason;
  return e;
}

TEST_P(CatalogStoresTest, UsersAndGrantsRoundTrip) {
  access::UserRecord ann{"ann", "localhost", access::NativePasswordHash("pw"), true, 4, 77};
  ASSERT_TRUE(stores_.users->InsertUser(ann).ok());
  ASSERT_TRUE(stores_.users->InsertUser({"bob", "%", "", false, 0, 78}).ok());
  EXPECT_EQ(stores_.users->InsertUser(ann).code(), StatusCode::kAlreadyExists);
  ann.max_user_connections = 9;
  ASSERT_TRUE(stores_.users->UpdateUser(ann).ok());
  EXPECT_EQ(stores_.users->UpdateUser({"cy", "%", "", false, 0, 1}).code(), StatusCode::kNotFound);
  const access::Grant grant{"ann", {"Sales", "*", ""}, access::PrivilegeSet::All()};
  ASSERT_TRUE(stores_.users->AddGrant(grant).ok());
  ASSERT_TRUE(stores_.users->AddGrant(grant).ok());  // each privilege once
  ASSERT_TRUE(
      stores_.users->RemoveGrant({"ann", {"sales", "*", ""}, *access::ParsePrivilegeName("DROP")})
          .ok());  // names compare without regard to case

  auto loaded = stores_.users->LoadUsers();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->users.size(), 2u);
  EXPECT_EQ(loaded->users[0].name, "ann");
  EXPECT_EQ(loaded->users[0].max_user_connections, 9);
  EXPECT_TRUE(loaded->users[0].require_ssl);
  EXPECT_EQ(loaded->users[0].password_hash, access::NativePasswordHash("pw"));
  access::PrivilegeSet held;
  for (const access::Grant& g : loaded->grants) {
    EXPECT_EQ(g.user, "ann");
    held.Add(g.privileges);
  }
  EXPECT_FALSE(held.Has(access::Privilege::kDrop));
  EXPECT_TRUE(held.Has(access::Privilege::kSelect));

  ASSERT_TRUE(stores_.users->DeleteUser("ann").ok());
  EXPECT_EQ(stores_.users->DeleteUser("ann").code(), StatusCode::kNotFound);
  EXPECT_TRUE(stores_.users->LoadUsers()->grants.empty());
}

TEST_P(CatalogStoresTest, TheAuditLogKeepsTheNewestInOrder) {
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(stores_.audit
                    ->AppendAudit({.time_us = i,
                                   .user = "u" + std::to_string(i),
                                   .host = "h",
                                   .kind = "DDL",
                                   .action = "CREATE TABLE",
                                   .statement = "CREATE TABLE 'q?'",
                                   .error = ""},
                                  3)
                    .ok());
  }
  auto events = stores_.audit->LoadAudit(10, access::AuditStore::kFromNewest);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].user, "u5");
  EXPECT_EQ((*events)[2].user, "u3");
  EXPECT_EQ((*events)[0].statement, "CREATE TABLE 'q?'");
  EXPECT_GT((*events)[0].seq, (*events)[1].seq);
  auto older = stores_.audit->LoadAudit(10, (*events)[1].seq);
  ASSERT_EQ(older->size(), 1u);
  EXPECT_EQ((*older)[0].user, "u3");
}

TEST_P(CatalogStoresTest, ExternalCatalogsKeepTheirPasswordSealed) {
  external::ExternalCatalog pg{
      .name = "Pg",
      .comment = "the warehouse",
      .properties = {{"type", "postgresql"}, {"password", "hunter2-password"}},
      .create_time_us = 5,
      .update_time_us = 5};
  ASSERT_TRUE(stores_.catalogs->InsertCatalog(pg).ok());
  EXPECT_EQ(stores_.catalogs->InsertCatalog(pg).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Value("SELECT count(*) FROM __millrace.external_catalogs WHERE properties LIKE "
                  "'%hunter2-password%'"),
            "0");
  pg.comment = "moved";
  pg.properties["password"] = "swordfish";
  ASSERT_TRUE(stores_.catalogs->UpdateCatalog("pg", pg).ok());
  auto loaded = stores_.catalogs->LoadCatalogs();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].comment, "moved");
  EXPECT_EQ((*loaded)[0].properties.at("password"), "swordfish");
  ASSERT_TRUE(stores_.catalogs->DeleteCatalog("PG").ok());
  EXPECT_EQ(stores_.catalogs->DeleteCatalog("pg").code(), StatusCode::kNotFound);
}

TEST_P(CatalogStoresTest, JobsRoundTripWithTheirStatementSealed) {
  JobRecord job = Job(1, "load_orders");
  ASSERT_TRUE(stores_.jobs->InsertJob(job).ok());
  ASSERT_TRUE(stores_.jobs->InsertJob(Job(2, "other")).ok());
  EXPECT_EQ(Value("SELECT count(*) FROM __millrace.jobs WHERE insert_sql LIKE '%secret-key-8c1f%'"),
            "0");

  job.state = job::JobState::kPaused;
  job.current_offset = job::Offset::FileName("b/2.csv");
  job.succeed_tasks = 4;
  job.stats.scanned_rows = 1234;
  job.error_msg = "it's broken";
  job.manual_pause = true;
  job.properties = job::JobProperties::Parse({{"max_interval", "9"}}).value();
  ASSERT_TRUE(stores_.jobs->SaveJob(job).ok());
  EXPECT_EQ(stores_.jobs->SaveJob(Job(3, "missing")).code(), StatusCode::kNotFound);

  auto jobs = stores_.jobs->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  const JobRecord& got = (*jobs)[0];
  EXPECT_EQ(got.name, "load_orders");
  EXPECT_EQ(got.insert_sql, job.insert_sql);
  EXPECT_EQ(got.state, job::JobState::kPaused);
  EXPECT_EQ(got.current_offset.ToJson(), job.current_offset.ToJson());
  EXPECT_EQ(got.succeed_tasks, 4);
  EXPECT_EQ(got.stats.scanned_rows, 1234);
  EXPECT_EQ(got.error_msg, "it's broken");
  EXPECT_TRUE(got.manual_pause);
  EXPECT_EQ(got.properties.given.at("max_interval"), "9");
  EXPECT_EQ(got.database, "d");

  ASSERT_TRUE(stores_.jobs->DeleteJob(2).ok());
  EXPECT_EQ(stores_.jobs->LoadJobs()->size(), 1u);
}

// A stored epoch never goes back: a row written at an older epoch (a server that lost the job)
// is refused whole, at the same or a newer one it lands.
TEST_P(CatalogStoresTest, AJobRowIsNotWrittenBackToAnOlderEpoch) {
  JobRecord job = Job(1, "j");
  job.epoch = 5;
  ASSERT_TRUE(stores_.jobs->InsertJob(job).ok());
  JobRecord stale = job;
  stale.epoch = 4;
  stale.state = job::JobState::kPaused;
  stale.current_offset = job::Offset::FileName("z.csv");
  const Status refused = stores_.jobs->SaveJob(stale);
  EXPECT_EQ(refused.code(), StatusCode::kAborted) << refused.ToString();
  EXPECT_NE(refused.message().find("stored epoch 5 is newer than this server's 4"),
            std::string::npos)
      << refused.ToString();
  EXPECT_EQ(stores_.jobs->SaveJobFromOffset(stale).code(), StatusCode::kAborted);
  JobRecord got = stores_.jobs->LoadJobs().value()[0];
  EXPECT_EQ(got.state, job::JobState::kRunning);
  EXPECT_EQ(got.current_offset.ToJson(), job.current_offset.ToJson());

  job.state = job::JobState::kPaused;
  ASSERT_TRUE(stores_.jobs->SaveJob(job).ok());  // the same epoch
  job.epoch = 6;
  ASSERT_TRUE(stores_.jobs->SaveJob(job).ok());
  EXPECT_EQ(stores_.jobs->LoadJobs().value()[0].epoch, 6);
}

TEST_P(CatalogStoresTest, TheLedgerPagesInByteOrderAndCounts) {
  ASSERT_TRUE(stores_.jobs->InsertJob(Job(1, "j")).ok());
  // Byte order: upper case before lower, '/' before letters; a locale's order would differ.
  ASSERT_TRUE(stores_.jobs
                  ->RecordFiles(
                      {File(1, "a/b", FileState::kLoaded), File(1, "A", FileState::kLoaded),
                       File(1, "a/a", FileState::kQuarantined, "JSON_TOO_DEEP"),
                       File(1, "a/B", FileState::kQuarantined), File(1, "ab", FileState::kLoaded)})
                  .ok());
  // A file recorded again replaces its row.
  ASSERT_TRUE(stores_.jobs->RecordFiles({File(1, "ab", FileState::kSkipped)}).ok());

  auto all = stores_.jobs->LedgerEntries(1, std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> keys;
  for (const LedgerEntry& e : *all)
    keys.push_back(e.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"A", "a/B", "a/a", "a/b", "ab"}));
  EXPECT_EQ((*all)[4].state, FileState::kSkipped);
  EXPECT_EQ((*all)[2].reason, "JSON_TOO_DEEP");

  auto page = stores_.jobs->LedgerPage(1, "a/B", 2, std::nullopt, "");
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].key, "a/a");
  auto searched = stores_.jobs->LedgerPage(1, "", 10, FileState::kLoaded, "/");
  ASSERT_TRUE(searched.ok());
  ASSERT_EQ(searched->size(), 1u);
  EXPECT_EQ((*searched)[0].key, "a/b");

  auto counts = stores_.jobs->CountFiles(FileState::kQuarantined);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->at(1), 2);
  auto reasons = stores_.jobs->CountQuarantinedByReason();
  ASSERT_TRUE(reasons.ok()) << reasons.status().ToString();
  EXPECT_EQ(reasons->at(1).at("JSON_TOO_DEEP"), 1);
  EXPECT_EQ(reasons->at(1).at("UNKNOWN"), 1);

  // An offset moved back: the files after it are loaded again.
  JobRecord moved = Job(1, "j");
  moved.current_offset = job::Offset::FileName("a/a");
  ASSERT_TRUE(stores_.jobs->SaveJobFromOffset(moved).ok());
  auto retrying = stores_.jobs->LedgerEntries(1, FileState::kRetrying);
  ASSERT_TRUE(retrying.ok());
  ASSERT_EQ(retrying->size(), 2u);
  EXPECT_EQ((*retrying)[0].key, "a/b");
  EXPECT_EQ((*retrying)[1].key, "ab");
}

TEST_P(CatalogStoresTest, ReadingMarksAreReplacedAndCleared) {
  ASSERT_TRUE(stores_.jobs->MarkReading(1, {{"x", 5, 2, 0, 10}, {"y", 5, 2, 0, 10}}).ok());
  ASSERT_TRUE(stores_.jobs->MarkReading(1, {{"y", 6, 1, 1, 11}}).ok());
  ASSERT_TRUE(stores_.jobs->MarkReading(2, {{"z", 1, 1, 0, 12}}).ok());
  auto marks = stores_.jobs->ReadingMarks(1);
  ASSERT_TRUE(marks.ok()) << marks.status().ToString();
  ASSERT_EQ(marks->size(), 2u);
  EXPECT_EQ((*marks)[1].key, "y");
  EXPECT_EQ((*marks)[1].task_id, 6);
  EXPECT_EQ((*marks)[1].alone_crashes, 1);
  ASSERT_TRUE(stores_.jobs->ClearReading(1, 5).ok());
  EXPECT_EQ(stores_.jobs->ReadingMarks(1)->size(), 1u);
  EXPECT_EQ(stores_.jobs->ReadingMarks(2)->size(), 1u);
}

// A task's bookkeeping in one transaction of the catalog's database: the job's row moves only
// from where the task started, at its epoch, while RUNNING; a task split in two (concurrent
// tasks) checks without writing the row, then moves it.
TEST_P(CatalogStoresTest, BookkeepingMovesTheJobOnlyFromItsOffsetAtItsEpoch) {
  JobRecord job = Job(1, "j");
  job.epoch = 3;
  job.current_offset = job::Offset::FileName("a");
  ASSERT_TRUE(stores_.jobs->InsertJob(job).ok());
  auto write = [&](job::Progress::Part part, const std::string& from, const std::string& to,
                   int64_t epoch, int64_t task_id) -> Result<bool> {
    job::Progress p;
    p.part = part;
    p.job = job;
    p.job.current_offset = job::Offset::FileName(to);
    p.job.succeed_tasks = task_id;
    p.start = job::Offset::FileName(from);
    p.epoch = epoch;
    p.ledger = {File(1, to, FileState::kLoaded)};
    p.task.job_id = 1;
    p.task.task_id = task_id;
    p.task.state = job::TaskState::kSuccess;
    p.task.end_file = to;
    p.task_history = 2;
    p.filtered_rows_kept = 5;
    Result<bool> moved = false;
    Status txn = catalog::InTransaction(*sql_, [&](catalog::SqlConnection& conn) -> Status {
      moved = catalog::WriteBookkeeping(conn, p);
      if (!moved.ok()) return moved.status();
      // A refused move must leave nothing: roll back as a sink does.
      return *moved ? Status::Ok() : Status::Aborted("refused");
    });
    if (!txn.ok() && txn.code() != StatusCode::kAborted) return txn;
    return moved;
  };
  using Part = job::Progress::Part;
  EXPECT_EQ(write(Part::kAll, "a", "b", 3, 1).value(), true);
  EXPECT_EQ(write(Part::kAll, "a", "c", 3, 2).value(), false);  // not at "a" any more
  EXPECT_EQ(write(Part::kAll, "b", "c", 2, 2).value(), false);  // an older epoch
  EXPECT_EQ(write(Part::kFiles, "b", "c", 2, 2).value(), false);
  EXPECT_EQ(write(Part::kFiles, "b", "c", 3, 2).value(), true);
  EXPECT_EQ(write(Part::kJobRow, "b", "c", 3, 2).value(), true);
  EXPECT_EQ(write(Part::kAll, "c", "d", 3, 3).value(), true);

  auto jobs = stores_.jobs->LoadJobs();
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ((*jobs)[0].current_offset.ToJson(), job::Offset::FileName("d").ToJson());
  EXPECT_EQ((*jobs)[0].succeed_tasks, 3);
  auto ledger = stores_.jobs->LedgerEntries(1, std::nullopt);
  ASSERT_TRUE(ledger.ok());
  std::vector<std::string> keys;
  for (const LedgerEntry& e : *ledger)
    keys.push_back(e.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"b", "c", "d"}));
  auto tasks = stores_.jobs->LoadTasks(1, 10);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);  // task_history 2
  EXPECT_EQ((*tasks)[0].task_id, 2);
  EXPECT_EQ((*tasks)[1].end_file, "d");

  auto conn = sql_->Connect();
  ASSERT_TRUE(conn.ok());
  auto filtered = catalog::TaskFilteredRows(**conn, 1, 2, 10);
  ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
  EXPECT_TRUE(filtered->empty());

  job.state = job::JobState::kPaused;
  ASSERT_TRUE(stores_.jobs->SaveJob(job).ok());
  EXPECT_EQ(write(Part::kAll, "a", "e", 3, 4).value(), false);  // not RUNNING
}

INSTANTIATE_TEST_SUITE_P(Engines, CatalogStoresTest,
                         ::testing::Values(Engine::kDuckDb, Engine::kPostgres), EngineName);

TEST(PgCatalogTest, OpensAgainAndRefusesANewerCatalog) {
  const pg::ConnectParams params = Postgres::Get().NewDatabase();
  PgCatalog first(params, job::TestSecrets().get());
  ASSERT_TRUE(first.Open().ok());
  EXPECT_EQ(first.StoredVersion().value(), catalog::kCatalogVersion);
  PgCatalog again(params, job::TestSecrets().get());
  ASSERT_TRUE(again.Open().ok());

  ASSERT_TRUE(Postgres::Get()
                  .server()
                  .Sql("UPDATE __millrace.catalog_version SET version = 99", params.database)
                  .ok());
  PgCatalog newer(params, job::TestSecrets().get());
  const Status refused = newer.Open();
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("99"), std::string::npos) << refused.message();
}

TEST(PgCatalogTest, ServersCreatingTheCatalogAtOnceAllOpenIt) {
  const pg::ConnectParams params = Postgres::Get().NewDatabase();
  constexpr int kServers = 4;
  std::vector<Status> opened(kServers);
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kServers; ++i) {
      threads.emplace_back([&, i] {
        PgCatalog catalog(params, job::TestSecrets().get());
        opened[i] = catalog.Open();
      });
    }
    for (std::thread& t : threads)
      t.join();
  }
  for (const Status& s : opened)
    EXPECT_TRUE(s.ok()) << s.ToString();
  auto versions = Postgres::Get().server().Sql("SELECT count(*) FROM __millrace.catalog_version",
                                               params.database);
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  EXPECT_EQ(*versions, "1");
}

// A task of a cluster's job: its rows staged in DuckDB, its bookkeeping in the catalog's
// PostgreSQL database, both committed by the sink's transaction, or neither.
TEST(PgBookkeepingSinkTest, CommitsTheCatalogsBookkeepingWithTheStagedRowsOrNeither) {
  const pg::ConnectParams params = Postgres::Get().NewDatabase();
  PgCatalog catalog(params, job::TestSecrets().get());
  ASSERT_TRUE(catalog.Open().ok());
  JobRecord job = CatalogStoresTest::Job(1, "j");
  job.epoch = 2;
  job.current_offset = job::Offset::FileName("a");
  ASSERT_TRUE(catalog.jobs()->InsertJob(job).ok());
  testing::TempDir dir;
  auto db = engine::OpenOrDie({.path = dir.Join("db.duckdb")});
  PgSqlDatabase sql(params);
  auto sink = PgBookkeepingSink::Open(db.get(), &sql);
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();

  job::Progress p;
  p.job = job;
  p.job.current_offset = job::Offset::FileName("b");
  p.start = job::Offset::FileName("a");
  p.epoch = 2;
  p.ledger = {CatalogStoresTest::File(1, "b", FileState::kLoaded)};
  p.task.job_id = 1;
  p.task.task_id = 1;
  p.task.state = job::TaskState::kSuccess;
  {
    auto txn = (*sink)->Begin("");
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    ASSERT_TRUE((*txn)->connection().Execute("CREATE TABLE staged AS SELECT 1 AS x").ok());
    EXPECT_EQ((*txn)->WriteProgress(p).value(), true);
    ASSERT_TRUE((*txn)
                    ->RecordFilteredRows(1, 1, "b", 55,
                                         "SELECT 7::BIGINT AS line, 'qty' AS col, 'x''y' AS val, "
                                         "'not a number' AS why")
                    .ok());
    auto filtered = (*txn)->TaskFilteredRows(1, 1, 10);
    ASSERT_TRUE(filtered.ok()) << filtered.status().ToString();
    ASSERT_EQ(filtered->size(), 1u);
    EXPECT_EQ((*filtered)[0].line, 7);
    EXPECT_EQ((*filtered)[0].value, "x'y");
    EXPECT_EQ((*filtered)[0].time_us, 55);
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  EXPECT_EQ(catalog.jobs()->LoadJobs().value()[0].current_offset.ToJson(),
            job::Offset::FileName("b").ToJson());
  EXPECT_EQ(catalog.jobs()->LedgerEntries(1, std::nullopt).value().size(), 1u);
  auto conn = engine::ConnectOrDie(*db);
  EXPECT_EQ(engine::QueryRows(*conn, "SELECT count(*) FROM staged")[0][0], "1");

  // A task that started from where the job no longer is: nothing of it stays, on either side.
  p.job.current_offset = job::Offset::FileName("c");
  p.ledger = {CatalogStoresTest::File(1, "c", FileState::kLoaded)};
  p.task.task_id = 2;
  {
    auto txn = (*sink)->Begin("");
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE((*txn)->connection().Execute("CREATE TABLE staged_again AS SELECT 1 AS x").ok());
    EXPECT_EQ((*txn)->WriteProgress(p).value(), false);
    ASSERT_TRUE((*txn)->Rollback().ok());
  }
  EXPECT_EQ(catalog.jobs()->LedgerEntries(1, std::nullopt).value().size(), 1u);
  EXPECT_EQ(catalog.jobs()->LoadTasks(1, 10).value().size(), 1u);
  EXPECT_EQ(engine::QueryRows(*conn,
                              "SELECT count(*) FROM duckdb_tables() WHERE table_name = "
                              "'staged_again'")[0][0],
            "0");
}

// Which server runs a job: one holder at a time, expiry by the database's clock, and a new
// holder fences the one before with a newer epoch. Expiry is made by moving the lease's expiry
// into the past (the database's now() cannot be injected).
TEST(LeasesTest, OneHolderAtATimeAndEachNewHolderBumpsTheEpoch) {
  const pg::ConnectParams params = Postgres::Get().NewDatabase();
  PgCatalog catalog(params, job::TestSecrets().get());
  ASSERT_TRUE(catalog.Open().ok());
  ASSERT_TRUE(catalog.jobs()->InsertJob(CatalogStoresTest::Job(1, "j")).ok());
  Leases& leases = *catalog.leases();
  const std::chrono::milliseconds ttl(60'000);
  constexpr int64_t kStep = job::kEpochsPerLease;
  auto expire = [&] {
    ASSERT_TRUE(Postgres::Get()
                    .server()
                    .Sql("UPDATE __millrace.leases SET expires_at = now() - interval '1 second'",
                         params.database)
                    .ok());
  };

  auto a = leases.Take(1, "server-a", ttl);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->epoch, kStep);
  EXPECT_FALSE(leases.Take(1, "server-b", ttl).value().has_value());
  EXPECT_EQ(leases.Take(1, "server-a", ttl).value()->epoch, kStep);  // still a's: same epoch
  EXPECT_TRUE(leases.Renew(**a, ttl).value());

  expire();
  EXPECT_FALSE(leases.Renew(**a, ttl).value());  // run out: lost
  auto b = leases.Take(1, "server-b", ttl);
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->epoch, 2 * kStep);
  EXPECT_FALSE(leases.Renew(**a, ttl).value());
  EXPECT_TRUE(leases.Held("server-a").value().empty());
  ASSERT_EQ(leases.Held("server-b").value().size(), 1u);
  EXPECT_EQ(catalog.jobs()->LoadJobs().value()[0].epoch, 2 * kStep);

  ASSERT_TRUE(leases.Release(**b).ok());
  auto all = leases.All();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_TRUE((*all)[0].expired);
  EXPECT_EQ(leases.Take(1, "server-a", ttl).value()->epoch, 3 * kStep);
  EXPECT_EQ(catalog.jobs()->LoadJobs().value()[0].epoch, 3 * kStep);

  EXPECT_EQ(leases.Take(99, "server-a", ttl).status().code(), StatusCode::kNotFound);
}

// The servers sharing a catalog: live while their heartbeats have not run out (the database's
// now()), gone at once when they leave.
TEST(LeasesTest, ServersAreLiveWhileTheirHeartbeatsLast) {
  const pg::ConnectParams params = Postgres::Get().NewDatabase();
  PgCatalog catalog(params, job::TestSecrets().get());
  ASSERT_TRUE(catalog.Open().ok());
  Leases& leases = *catalog.leases();
  const std::chrono::milliseconds ttl(60'000);
  EXPECT_EQ(leases.LiveServers().value(), 0);
  ASSERT_TRUE(leases.Heartbeat("a", ttl).ok());
  ASSERT_TRUE(leases.Heartbeat("b", ttl).ok());
  ASSERT_TRUE(leases.Heartbeat("a", ttl).ok());
  EXPECT_EQ(leases.LiveServers().value(), 2);
  ASSERT_TRUE(Postgres::Get()
                  .server()
                  .Sql("UPDATE __millrace.servers SET expires_at = now() - interval '1 second' "
                       "WHERE server = 'b'",
                       params.database)
                  .ok());
  EXPECT_EQ(leases.LiveServers().value(), 1);
  ASSERT_TRUE(leases.Leave("a").ok());
  EXPECT_EQ(leases.LiveServers().value(), 0);
}

TEST(LeasesTest, ServersTakingOneJobAtOnceOneGetsIt) {
  const pg::ConnectParams params = Postgres::Get().NewDatabase();
  PgCatalog catalog(params, job::TestSecrets().get());
  ASSERT_TRUE(catalog.Open().ok());
  constexpr int kJobs = 30;
  constexpr int kServers = 4;
  for (int j = 1; j <= kJobs; ++j)
    ASSERT_TRUE(catalog.jobs()->InsertJob(CatalogStoresTest::Job(j, "j" + std::to_string(j))).ok());
  // Each server's connection made before they all start, so that their takes overlap.
  std::vector<std::unique_ptr<PgCatalog>> servers;
  for (int i = 0; i < kServers; ++i) {
    servers.push_back(std::make_unique<PgCatalog>(params, job::TestSecrets().get()));
    ASSERT_TRUE(servers.back()->leases()->All().ok());
  }
  std::atomic<int> ready{0};
  std::vector<std::vector<int>> holders(kJobs + 1);
  std::vector<Status> failures(kServers);
  Mutex mu;
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kServers; ++i) {
      threads.emplace_back([&, i] {
        ++ready;
        while (ready < kServers) {
        }
        for (int j = 1; j <= kJobs; ++j) {
          auto got = servers[i]->leases()->Take(j, "server-" + std::to_string(i),
                                                std::chrono::milliseconds(60'000));
          if (!got.ok()) {
            failures[i] = got.status();
            return;
          }
          MutexLock lock(&mu);
          if (got->has_value()) holders[j].push_back(i);
        }
      });
    }
    for (std::thread& t : threads)
      t.join();
  }
  for (const Status& s : failures)
    ASSERT_TRUE(s.ok()) << s.ToString();
  auto jobs = catalog.jobs()->LoadJobs();
  ASSERT_TRUE(jobs.ok());
  for (int j = 1; j <= kJobs; ++j) {
    EXPECT_EQ(holders[j].size(), 1u) << "job " << j;
    EXPECT_EQ((*jobs)[j - 1].epoch, job::kEpochsPerLease) << "job " << j;
  }
}

// Servers sharing the catalog create jobs from what each has seen: the catalog takes a name
// once, and a second job of that name (another id) is ALREADY_EXISTS, as is a second job of
// one id.
TEST(PgCatalogTest, AJobNameAndIdAreTakenOnce) {
  const pg::ConnectParams params = Postgres::Get().NewDatabase();
  PgCatalog catalog(params, job::TestSecrets().get());
  ASSERT_TRUE(catalog.Open().ok());
  ASSERT_TRUE(catalog.jobs()->InsertJob(CatalogStoresTest::Job(1, "j")).ok());
  const Status same_name = catalog.jobs()->InsertJob(CatalogStoresTest::Job(2, "j"));
  EXPECT_EQ(same_name.code(), StatusCode::kAlreadyExists) << same_name.ToString();
  EXPECT_EQ(catalog.jobs()->InsertJob(CatalogStoresTest::Job(1, "k")).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(catalog.jobs()->LoadJobs().value().size(), 1u);
}

TEST(PgCatalogTest, AnUnreachableDatabaseIsUnavailable) {
  pg::ConnectParams params = Postgres::Get().NewDatabase();
  params.port = 1;  // nothing listens there
  params.connect_timeout = std::chrono::seconds(2);
  PgCatalog catalog(params, job::TestSecrets().get());
  const Status opened = catalog.Open();
  EXPECT_EQ(opened.code(), StatusCode::kUnavailable) << opened.ToString();
}

}  // namespace
}  // namespace millrace::pgcatalog
