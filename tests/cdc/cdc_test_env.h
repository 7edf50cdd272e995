// Test support of the change-data-capture tests: one real source database (PostgreSQL 15 or
// MariaDB 10.11) and one `millrace serve` for a test binary, and what the tests do with them
// (statements on either side, cdc_stream calls, checksum comparison, a kill -9 and restart of
// the server).
//
// Contract
// - Start starts the source (testing/postgres_server.h, testing/mariadb_server.h; on MariaDB
//   the database kMysqlDatabase is made) and the server (as root, no password,
//   --paused-check-interval 1) and creates the Millrace database `cdc`.
// - Src runs a script on the source (Pg on PostgreSQL; on MariaDB in kMysqlDatabase) and
//   records a test failure when it fails (the result is "" then). Mr returns the rows or the
//   MySQL error as a value; MrValue the one value of a query (or its error text, or "?" when
//   the result is not one value).
// - Converge waits until the target's checksum equals the source's, and returns both; when
//   they still differ at the deadline, the second holds what helps to find out why: the
//   columns that differ, the jobs' state and offset, the tail of the server log. A target
//   named kSinkCatalog.schema.table is a table of the PostgreSQL sink, read on the source.
// - MakeSinkCatalog (PostgreSQL source) creates the external catalog kSinkCatalog over the
//   source's server, and its schema kSinkSchema: jobs write tables there through the sink.
// - KillMillrace kills the server with SIGKILL (as a crash would) and waits for it to exit;
//   RestartMillrace starts it again on the same data directory and logs in again. Between the
//   two the database file may be opened by the test (QueryDatabaseFile).
// - Not thread-safe, except Pg (PostgresServer::Sql is), which a writer thread may call.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "access/access_e2e_util.h"
#include "cdc/cdc_checksum.h"
#include "common/result.h"
#include "testing/mariadb_server.h"
#include "testing/postgres_server.h"
#include "testing/wait_for.h"

namespace millrace::cdc {

enum class CdcSource { kPostgres, kMariadb };

// The MariaDB database the tests' source tables live in.
inline constexpr char kMysqlDatabase[] = "src";

// The external catalog over the PostgreSQL source's server (MakeSinkCatalog), and the schema
// of its tables that jobs write.
inline constexpr char kSinkCatalog[] = "pg";
inline constexpr char kSinkSchema[] = "sink";

// Where the crash scenario's jobs write: UNIQUE KEY tables of Millrace's database cdc, or
// tables with the same primary keys in kSinkSchema of the PostgreSQL source, through the sink.
enum class CrashTargets { kDuckdb, kPostgresSink };

// The columns of the tests' item tables (id, name, qty).
inline const std::vector<CanonColumn> kItemColumns = {{"id"}, {"name"}, {"qty"}};

// The integer in environment variable `name` (a test's size), or `fallback`.
int EnvInt(const char* name, int fallback);

class CdcTestEnv {
 public:
  static Result<std::unique_ptr<CdcTestEnv>> Start(CdcSource source);

  testing::PostgresServer& pg() { return *pg_; }
  testing::MariadbServer& mariadb() { return *mariadb_; }
  access::E2EServer& mr() { return *mr_; }
  // The source's password (for tests that look for it where it must not be).
  const std::string& source_password() const;

  std::string Src(const std::string& sql) const;
  std::string Pg(const std::string& sql) const { return Src(sql); }
  // Src without the test failure: a writer's statement may fail while the source restarts.
  Status TrySrc(const std::string& sql) const;
  // Kills the source and starts it again (crash recovery).
  Status CrashRestartSource();

  // A transaction of one to six random changes, in the source's SQL, to the crash tests'
  // tables crash_a (id, name, qty) and crash_b (a, b, v; key a, b) of `rows` rows: inserts
  // (ids from *next_id on), updates of values and of keys, deletes.
  std::string RandomTransaction(std::mt19937& rng, int rows, int* next_id) const;
  // Makes those tables on the source, `rows` rows each.
  void MakeCrashTables(int rows) const;
  Status MakeSinkCatalog() const;
  Result<access::Rows> Mr(const std::string& sql) const;
  std::string MrValue(const std::string& sql) const;

  // cdc_stream(...) for <table> of the source (PostgreSQL: in public; MariaDB: in
  // kMysqlDatabase); `extra` is appended to the parameters (", \"offset\" = \"latest\""),
  // `password` replaces the right one.
  std::string Stream(const std::string& table, const std::string& extra = "",
                     const std::string& password = "") const;
  // CREATE JOB <name> ON STREAMING PROPERTIES (<properties>) DO <insert>.
  Status CreateJob(const std::string& name, const std::string& insert,
                   const std::string& properties = "\"max_interval\" = \"1\"") const;

  std::pair<std::string, std::string> Converge(
      const std::string& source_table, const std::string& mr_table,
      const std::vector<CanonColumn>& columns,
      std::chrono::seconds timeout = std::chrono::seconds(60)) const;

  void KillMillrace();
  Status RestartMillrace();
  // The rows of `sql` run on the database file of the killed server (NULL as ""): what
  // it had committed when it died.
  Result<access::Rows> QueryDatabaseFile(const std::string& sql) const;

 private:
  // The checksum query, and the expression of a row's text, on the source.
  std::string SourceChecksumSql(const std::string& table,
                                const std::vector<CanonColumn>& columns) const;
  std::string SourceRowText(const std::vector<CanonColumn>& columns) const;

  CdcSource source_ = CdcSource::kPostgres;
  std::unique_ptr<testing::PostgresServer> pg_;
  std::unique_ptr<testing::MariadbServer> mariadb_;
  std::unique_ptr<access::E2EServer> mr_;
  std::unique_ptr<testing::TempDir> mr_dir_;  // the server's, while it is down
};

// A fixture whose tests share one CdcTestEnv of `kSource`, started once per suite (a binary has
// one suite), and the waits the tests share.
template <CdcSource kSource>
class CdcEnvTestOf : public ::testing::Test {
 public:
  static CdcTestEnv& env() { return *env_; }

 protected:
  static void SetUpTestSuite() {
    auto env = CdcTestEnv::Start(kSource);
    ASSERT_TRUE(env.ok()) << env.status().ToString();
    env_ = std::move(env).value();
  }
  static void TearDownTestSuite() { env_.reset(); }

  static Result<access::Rows> Mr(const std::string& sql) { return env_->Mr(sql); }
  static std::string MrValue(const std::string& sql) { return env_->MrValue(sql); }
  static std::string Stream(const std::string& table, const std::string& extra = "",
                            const std::string& password = "") {
    return env_->Stream(table, extra, password);
  }
  static Status CreateJob(const std::string& name, const std::string& insert) {
    return env_->CreateJob(name, insert);
  }
  // A UNIQUE KEY target cdc.<name> (id INT, name VARCHAR(100), qty INT).
  static void ItemsTarget(const std::string& name) {
    ASSERT_TRUE(Mr("CREATE TABLE cdc." + name +
                   " (id INT, name VARCHAR(100), qty INT) UNIQUE KEY(id) "
                   "DISTRIBUTED BY HASH(id) BUCKETS 1")
                    .ok());
  }
  // Converge, with a test failure when they differ; returns the source's checksum.
  static std::string Converged(const std::string& source, const std::string& target,
                               const std::vector<CanonColumn>& columns) {
    auto [want, got] = Converge(source, target, columns);
    EXPECT_EQ(want, got);
    return want;
  }
  // Successful tasks of every job so far.
  static int64_t SucceededTasks() {
    auto rows = env_->Mr("SELECT coalesce(sum(SucceedTaskCount), 0) FROM jobs(type := 'insert')");
    return rows.ok() && rows->size() == 1 ? std::atoll((*rows)[0][0].c_str()) : -1;
  }
  // `kills` rounds of: a random amount of progress since the last restart (none, a kill while
  // the server starts, or a few tasks; more in the later rounds, which fall in the stream), a
  // crash of the source under the running server at the middle round, then a kill -9 of the
  // server, `after_kill(round)` while it is down, and its restart.
  static void KillRounds(int kills, std::mt19937& rng,
                         const std::function<void(int)>& after_kill = nullptr) {
    for (int round = 0; round < kills; ++round) {
      const int64_t base = SucceededTasks();
      const int64_t more = static_cast<int64_t>(rng() % (round < kills / 2 ? 4 : 12));
      EXPECT_TRUE(testing::WaitFor([&] { return SucceededTasks() >= base + more; },
                                   std::chrono::seconds(90)))
          << "round " << round << ": no progress from " << base;
      if (round == kills / 2) ASSERT_EQ(env_->CrashRestartSource(), Status::Ok());
      env_->KillMillrace();
      if (after_kill) after_kill(round);
      ASSERT_EQ(env_->RestartMillrace(), Status::Ok());
    }
  }
  static std::pair<std::string, std::string> Converge(
      const std::string& source_table, const std::string& mr_table,
      const std::vector<CanonColumn>& columns,
      std::chrono::seconds timeout = std::chrono::seconds(60)) {
    return env_->Converge(source_table, mr_table, columns, timeout);
  }
  // Column `column` of job `name`'s row in jobs().
  static std::string JobValue(const std::string& name, const std::string& column) {
    return MrValue("SELECT " + column + " FROM jobs(type := 'insert') WHERE Name = '" + name + "'");
  }
  // Waits until job `name` has an offset with a log position (PostgreSQL: its slot exists).
  static bool WaitUntilStreaming(const std::string& name) {
    const std::string part = kSource == CdcSource::kPostgres ? "lsn" : "file";
    return testing::WaitFor(
        [&] { return JobValue(name, "CurrentOffset").find(part) != std::string::npos; },
        std::chrono::seconds(30));
  }
  // Waits until job `name` is PAUSED; returns "Status ErrorMsg" as jobs() shows them (a test
  // failure when it does not pause within a minute).
  static std::string WaitUntilPaused(const std::string& name) {
    std::string state;
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          state = MrValue(
              "SELECT concat_ws(' ', Status, ErrorMsg) FROM jobs(type := 'insert') "
              "WHERE Name = '" +
              name + "'");
          return state.starts_with("PAUSED");
        },
        std::chrono::seconds(60)))
        << name << ": " << state;
    return state;
  }

  // The crash scenario (sized by MILLRACE_CDC_CRASH_ROWS, _KILLS and _SEED): the crash tables,
  // a job for each (crash_b reading three splits at once) into `targets`, a writer of random
  // transactions until the end, KillRounds(after_kill), then both targets converge to their
  // sources.
  static void CrashScenario(const std::function<void(int)>& after_kill = nullptr,
                            CrashTargets targets = CrashTargets::kDuckdb) {
    const int rows = EnvInt("MILLRACE_CDC_CRASH_ROWS", 10000);
    const int kills = EnvInt("MILLRACE_CDC_CRASH_KILLS", 8);
    const auto seed = static_cast<unsigned>(EnvInt("MILLRACE_CDC_CRASH_SEED", 20261203));
    SCOPED_TRACE("MILLRACE_CDC_CRASH_SEED=" + std::to_string(seed));
    env_->MakeCrashTables(rows);
    std::string into = "cdc.";
    if (targets == CrashTargets::kDuckdb) {
      ItemsTarget("crash_a");
      ASSERT_TRUE(Mr("CREATE TABLE cdc.crash_b (a INT, b STRING, v INT) UNIQUE KEY(a, b) "
                     "DISTRIBUTED BY HASH(a) BUCKETS 1")
                      .ok());
    } else {
      ASSERT_EQ(env_->MakeSinkCatalog(), Status::Ok());
      into = std::string(kSinkCatalog) + "." + kSinkSchema + ".";
      env_->Src(std::string("CREATE TABLE ") + kSinkSchema +
                ".crash_a (id int PRIMARY KEY, name text, qty int); CREATE TABLE " + kSinkSchema +
                ".crash_b (a int, b text, v int, PRIMARY KEY (a, b))");
    }
    const std::string split = ", \"snapshot_split_size\" = \"" + std::to_string(rows / 20) + "\"";
    ASSERT_EQ(CreateJob("crash_a", "INSERT INTO " + into + "crash_a SELECT * FROM " +
                                       Stream("crash_a", split)),
              Status::Ok());
    // crash_b reads three splits at once (split boundaries over a two-column key).
    ASSERT_EQ(
        CreateJob("crash_b", "INSERT INTO " + into + "crash_b SELECT * FROM " +
                                 Stream("crash_b", split + ", \"snapshot_parallelism\" = \"3\"")),
        Status::Ok());
    // Statements fail while the source restarts; the checksums compare whatever committed.
    std::atomic<bool> stop{false};
    std::atomic<int> written{0};
    std::atomic<int> refused{0};
    std::thread writer([&] {
      std::mt19937 rng(seed + 1);
      int next_id = rows + 1;
      while (!stop) {
        ++(env_->TrySrc(env_->RandomTransaction(rng, rows, &next_id)).ok() ? written : refused);
      }
    });
    std::mt19937 rng(seed);
    KillRounds(kills, rng, after_kill);
    EXPECT_TRUE(testing::WaitFor([&] { return written >= 50; }, std::chrono::seconds(60)));
    stop = true;
    writer.join();
    auto [want_a, got_a] =
        env_->Converge("crash_a", into + "crash_a", kItemColumns, std::chrono::seconds(240));
    EXPECT_EQ(want_a, got_a);
    auto [want_b, got_b] = env_->Converge("crash_b", into + "crash_b", {{"a"}, {"b"}, {"v"}},
                                          std::chrono::seconds(240));
    EXPECT_EQ(want_b, got_b);
    std::cout << "written transactions: " << written
              << ", refused while the source restarted: " << refused << "\n";
  }

  inline static std::unique_ptr<CdcTestEnv> env_;
};

using CdcEnvTest = CdcEnvTestOf<CdcSource::kPostgres>;
using MysqlCdcEnvTest = CdcEnvTestOf<CdcSource::kMariadb>;

}  // namespace millrace::cdc
