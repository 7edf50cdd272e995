// `millrace serve --cluster postgresql://...` with one server (issue 41, step 1), through the
// real binary and a real PostgreSQL 15: the catalog (jobs, task history, ledger, users,
// grants, audit, external catalogs) lives in PostgreSQL, a job writes a PostgreSQL table, its
// ledger reads through job_files(), a job into the embedded database is refused saying why, and
// after a kill -9 the job carries on from the catalog with each file loaded once.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "access/access_e2e_util.h"
#include "access/server_on_postgres_suite.h"
#include "catalog/catalog_version.h"
#include "job/job_model.h"
#include "testing/fault_proxy.h"
#include "testing/s3rver.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::pgcatalog {
namespace {

class ClusterE2ETest : public access::ServerOnPostgresSuite {
 protected:
  void SetUp() override {
    const std::string n = std::to_string(++counter_);
    catalog_db_ = "cluster_" + n;
    table_ = "events_" + n;
    Psql("CREATE DATABASE " + catalog_db_);
    Psql("CREATE TABLE public." + table_ + " (id bigint PRIMARY KEY, name text)");
    NewDataDir();
  }

  // The catalog's URI: given through the environment, which keeps its password off the
  // command line.
  std::string ClusterEnv() const {
    return "MILLRACE_CLUSTER=postgresql://" + pg_->user() + ":" + pg_->password() + "@" +
           pg_->host() + ":" + std::to_string(pg_->port()) + "/" + catalog_db_;
  }
  // Leases of 2 s: a server started again after a kill -9 takes its jobs back soon.
  void StartClustered(std::vector<std::string> args = {}) {
    args.insert(args.end(), {"--lease-timeout", "2"});
    Start({ClusterEnv()}, std::move(args));
  }
  // psql on the catalog's database.
  std::string Catalog(const std::string& sql) { return Psql(sql, catalog_db_); }
  void WriteFile(int n) {
    std::string text;
    for (int i = 0; i < 3; ++i)
      text += std::to_string(n * 100 + i) + ",name " + std::to_string(i) + "\n";
    std::ofstream(inbox_ + "/f" + std::to_string(n) + ".csv") << text;
  }
  bool PgHas(int rows) { return ServerOnPostgresSuite::PgHas(table_, rows); }
  std::string JobInto(const std::string& name, const std::string& target) const {
    return "CREATE JOB " + name +
           " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO " + target +
           " SELECT CAST(c1 AS BIGINT), c2 FROM local(\"file_path\" = \"" + inbox_ +
           "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")";
  }

  // From the sink's commit records (millrace.files: each file's commit stamped with its epoch
  // and server) of file job `job`, whose files commit in key order: every commit was made under
  // a lease (an epoch of a lease's step), each lease's step by one server, and no commit at an
  // older epoch came after one at a newer (a server that lost its lease committed nothing).
  void ExpectCommitsUnderLeases(const std::string& job) {
    const std::string key = Catalog(
        "SELECT name || '#' || id || '@' || create_time_us FROM __millrace.jobs WHERE name = '" +
        job + "'");
    const std::string files = "millrace.files WHERE job_key = '" + key + "'";
    EXPECT_NE(Psql("SELECT count(*) FROM " + files), "0") << key;
    const std::string step = std::to_string(job::kEpochsPerLease);
    EXPECT_EQ(Psql("SELECT count(*) FROM " + files + " AND epoch < " + step), "0");
    EXPECT_EQ(Psql("SELECT count(*) FROM (SELECT epoch / " + step +
                   ", count(DISTINCT server) AS servers FROM " + files +
                   " GROUP BY 1) s WHERE servers > 1"),
              "0");
    EXPECT_EQ(Psql("SELECT count(*) FROM (SELECT epoch, lag(epoch) OVER (ORDER BY file_key) AS "
                   "before FROM " +
                   files + ") s WHERE epoch < before"),
              "0")
        << Psql("SELECT file_key, epoch, server FROM " + files + " ORDER BY file_key");
  }

  static int counter_;
  std::string catalog_db_;
  std::string table_;
};

int ClusterE2ETest::counter_ = 0;

TEST_F(ClusterE2ETest, TheCatalogLivesInPostgresqlAndTheJobCarriesOnAfterAKill) {
  ASSERT_NO_FATAL_FAILURE(StartClustered());
  EXPECT_EQ(Catalog("SELECT version FROM __millrace.catalog_version"),
            std::to_string(catalog::kCatalogVersion));
  CreatePgCatalog();
  Exec("CREATE USER 'ann'@'%' IDENTIFIED BY 'ann-password'");
  Exec("GRANT SELECT_PRIV ON *.* TO 'ann'@'%'");
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.external_catalogs WHERE name = 'pg'"), "1");
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.users WHERE name = 'ann'"), "1");
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.grants WHERE user_name = 'ann'"), "1");

  WriteFile(1);
  WriteFile(2);
  Exec(JobInto("ev", "pg.public." + table_));
  ASSERT_TRUE(PgHas(6)) << mr_->server->Log();
  EXPECT_EQ(Catalog("SELECT state FROM __millrace.jobs WHERE name = 'ev'"), "RUNNING");
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return Catalog("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'") == "2";
      },
      std::chrono::seconds(30)));
  EXPECT_NE(Catalog("SELECT count(*) FROM __millrace.tasks"), "0");
  EXPECT_NE(Catalog("SELECT count(*) FROM __millrace.audit WHERE action = 'CREATE JOB'"), "0");

  // A job into the embedded database is refused, saying why.
  Exec("CREATE DATABASE local_db");
  Exec(
      "CREATE TABLE local_db.t (id BIGINT, name VARCHAR(20)) DUPLICATE KEY(id) "
      "DISTRIBUTED BY HASH(id) BUCKETS 1");
  auto refused = access::Query(mr_->root.get(), JobInto("into_local", "local_db.t"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("external catalog"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.jobs WHERE name = 'into_local'"), "0");
  // The ledger's views read the catalog's pages.
  EXPECT_EQ(Exec("SELECT regexp_replace(FileName, '.*/', ''), State, Rows FROM "
                 "job_files(\"job\" = \"ev\") ORDER BY FileName"),
            (access::Rows{{"f1.csv", "LOADED", "3"}, {"f2.csv", "LOADED", "3"}}));
  EXPECT_EQ(Exec("SELECT count(*) FROM filtered_rows(\"job\" = \"ev\")"), (access::Rows{{"0"}}));

  // kill -9, a file more, a restart: the job comes back from the catalog, each file once.
  Kill();
  WriteFile(3);
  ASSERT_NO_FATAL_FAILURE(StartClustered());
  ASSERT_TRUE(PgHas(9)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table_), "9");
  const access::Rows jobs = Exec("SELECT Name, Status FROM jobs(\"type\" = \"insert\")");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0][1], "RUNNING");
  auto ann = access::ConnectAs(mr_->mysql_port(), "ann", "ann-password");
  EXPECT_TRUE(ann.ok()) << ann.status().ToString();
}

// A server lost with its disk is replaced by one on a new data directory, given a copy of the
// key: the job carries on from the catalog, each file once.
TEST_F(ClusterE2ETest, AServerOnANewDataDirectoryWithTheKeyCarriesTheJobsOn) {
  ASSERT_NO_FATAL_FAILURE(StartClustered());
  CreatePgCatalog();
  WriteFile(1);
  Exec(JobInto("ev", "pg.public." + table_));
  ASSERT_TRUE(PgHas(3)) << mr_->server->Log();
  Kill();
  // The old directory keeps the inbox; the key is copied out of it, as an operator would.
  const std::unique_ptr<testing::TempDir> old = std::move(dir_);
  dir_ = std::make_unique<testing::TempDir>();
  const std::string key = dir_->Join("key");
  std::filesystem::copy_file(old->Join("data/secret.key"), key);
  WriteFile(2);
  ASSERT_NO_FATAL_FAILURE(StartClustered({"--secret-key-file", key}));
  ASSERT_TRUE(PgHas(6)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table_), "6");
  const access::Rows jobs =
      Exec("SELECT Status FROM jobs(\"type\" = \"insert\") WHERE Name = 'ev'");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0][0], "RUNNING");
}

// The crash window of a cluster's commit: the sink's transaction committed, the catalog's not.
// The job takes the sink's offset and ledger into the catalog; nothing is lost or doubled.
TEST_F(ClusterE2ETest, ACrashBetweenTheSinksCommitAndTheCatalogsLosesAndDoublesNothing) {
  Start({ClusterEnv(), "MILLRACE_FAIL_POINTS=pgsink.between_commits=crash"},
        {"--lease-timeout", "2"});
  ASSERT_FALSE(HasFatalFailure());
  CreatePgCatalog();
  WriteFile(1);
  Exec(JobInto("crashed", "pg.public." + table_));
  ASSERT_NO_FATAL_FAILURE(WaitForCrash("pgsink.between_commits"));
  EXPECT_EQ(Psql("SELECT count(*) FROM public." + table_), "3");
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.files"), "0");
  WriteFile(2);
  ASSERT_NO_FATAL_FAILURE(StartClustered());
  ASSERT_TRUE(PgHas(6)) << mr_->server->Log();
  EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table_), "6");
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return Catalog("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'") == "2";
      },
      std::chrono::seconds(30)));
  EXPECT_EQ(Catalog("SELECT current_offset FROM __millrace.jobs WHERE name = 'crashed'"),
            Psql("SELECT job_offset FROM millrace.jobs WHERE job_key LIKE 'crashed#%'"));
}

// Two servers on one catalog (issue 41, step 2), leases of 2 s: the job runs on the server
// holding its lease; a PAUSE and a RESUME given to the other server are obeyed by the holder;
// a kill -9 of the holder hands the job to the other after the lease timeout, from the
// committed offset at a newer epoch; a holder frozen past its lease (SIGSTOP) loses the job
// and, thawed, loads nothing twice. Each file lands once.
TEST_F(ClusterE2ETest, TwoServersRunAJobOnOneAtATimeAndHandItOverWhenOneDiesOrFreezes) {
  ASSERT_NO_FATAL_FAILURE(StartClustered({"--lease-timeout", "2"}));
  CreatePgCatalog();
  const std::string key = mr_->dir->Join("data/secret.key");
  auto start_other = [&]() -> std::unique_ptr<access::E2EServer> {
    auto other = access::E2EServer::Start(
        "", {"--local-root", inbox_, "--secret-key-file", key, "--lease-timeout", "2"}, nullptr,
        {ClusterEnv()});
    EXPECT_TRUE(other.ok()) << other.status().ToString();
    return other.ok() ? std::move(other).value() : nullptr;
  };
  const auto holder = [&] {
    return Catalog(
        "SELECT owner FROM __millrace.leases l JOIN __millrace.jobs j ON j.id = l.job_id "
        "WHERE j.name = 'ev' AND l.expires_at > now()");
  };
  const auto held_by = [&](const access::E2EServer& server) {
    return testing::WaitFor(
        [&] {
          return holder().find(":" + std::to_string(server.server->pid()) + "/") !=
                 std::string::npos;
        },
        std::chrono::seconds(30));
  };
  WriteFile(1);
  Exec(JobInto("ev", "pg.public." + table_));
  ASSERT_TRUE(PgHas(3)) << mr_->server->Log();
  std::unique_ptr<access::E2EServer> b = start_other();
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(held_by(*mr_)) << holder();
  // Both show the job; a statement given to the server that does not run it is obeyed.
  EXPECT_EQ(access::Query(b->root.get(), "SELECT Name FROM jobs(\"type\" = \"insert\")").value(),
            (access::Rows{{"ev"}}));
  auto paused = access::Query(b->root.get(), "PAUSE JOB WHERE jobname = 'ev'");
  ASSERT_TRUE(paused.ok()) << paused.status().ToString();
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return Exec("SELECT Status FROM jobs(\"type\" = \"insert\")") == access::Rows{{"PAUSED"}};
      },
      std::chrono::seconds(30)));
  WriteFile(2);
  ASSERT_TRUE(access::Query(b->root.get(), "RESUME JOB WHERE jobname = 'ev'").ok());
  ASSERT_TRUE(PgHas(6)) << mr_->server->Log() << b->server->Log();

  // kill -9 of the holder: the other server carries the job on at a newer epoch.
  const std::string epoch_before = Catalog("SELECT epoch FROM __millrace.jobs WHERE name = 'ev'");
  Kill();
  WriteFile(3);
  ASSERT_TRUE(PgHas(9)) << b->server->Log();
  EXPECT_TRUE(held_by(*b)) << holder();
  EXPECT_GT(std::stoll(Catalog("SELECT epoch FROM __millrace.jobs WHERE name = 'ev'")),
            std::stoll(epoch_before));

  // The holder frozen past its lease: a new server takes the job over; the thawed one gives it
  // up (its renewal fails) and doubles nothing.
  ASSERT_EQ(kill(b->server->pid(), SIGSTOP), 0);
  ASSERT_NO_FATAL_FAILURE(
      Start({ClusterEnv()}, {"--secret-key-file", key, "--lease-timeout", "2"}));
  ASSERT_TRUE(held_by(*mr_)) << holder();
  WriteFile(4);
  ASSERT_TRUE(PgHas(12)) << mr_->server->Log();
  ASSERT_EQ(kill(b->server->pid(), SIGCONT), 0);
  WriteFile(5);
  ASSERT_TRUE(PgHas(15)) << mr_->server->Log() << b->server->Log();
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return b->server->Log().find("job 1 no longer runs here: its lease was taken over") !=
               std::string::npos;
      },
      std::chrono::seconds(30)))
      << b->server->Log();
  EXPECT_TRUE(held_by(*mr_)) << holder();
  EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table_), "15");
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.files WHERE state = 'LOADED'"), "5");
  ExpectCommitsUnderLeases("ev");
}

// A server frozen inside a commit (fail point "stop": SIGSTOP after its rows were copied, before
// the checks) past its lease: the other server takes the job over, and the frozen one, thawed,
// commits nothing; the file lands once, committed by the new holder.
TEST_F(ClusterE2ETest, AServerFrozenInsideACommitWakesToCommitNothing) {
  ASSERT_NO_FATAL_FAILURE(Start({ClusterEnv(), "MILLRACE_FAIL_POINTS=pgsink.before_checks/ev=stop"},
                                {"--lease-timeout", "2"}));
  CreatePgCatalog();
  const std::string key = mr_->dir->Join("data/secret.key");
  WriteFile(1);
  Exec(JobInto("ev", "pg.public." + table_));
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return mr_->server->Log().find("pgsink.before_checks/ev: stopping") != std::string::npos;
      },
      std::chrono::seconds(30)))
      << mr_->server->Log();
  auto b = access::E2EServer::Start(
      "", {"--local-root", inbox_, "--secret-key-file", key, "--lease-timeout", "2"}, nullptr,
      {ClusterEnv()});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return Catalog(
                   "SELECT count(*) FROM __millrace.leases WHERE expires_at > now() AND owner "
                   "LIKE '%:" +
                   std::to_string((*b)->server->pid()) + "/%'") == "1";
      },
      std::chrono::seconds(30)));
  // The new holder's copy of the same keys waits for the frozen transaction: it goes on once
  // the thawed server has rolled back.
  ASSERT_EQ(kill(mr_->server->pid(), SIGCONT), 0);
  ASSERT_TRUE(PgHas(3)) << mr_->server->Log() << (*b)->server->Log();
  EXPECT_TRUE(testing::WaitFor(
      [&] { return mr_->server->Log().find("job 1 no longer runs here") != std::string::npos; },
      std::chrono::seconds(30)))
      << mr_->server->Log();
  WriteFile(2);
  ASSERT_TRUE(PgHas(6)) << (*b)->server->Log();
  EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table_), "6");
  // Every file committed by the new holder.
  EXPECT_EQ(Psql("SELECT count(*) FROM millrace.files WHERE job_key = '" +
                 Catalog("SELECT name || '#' || id || '@' || create_time_us FROM "
                         "__millrace.jobs") +
                 "' AND server NOT LIKE '%:" + std::to_string((*b)->server->pid()) + "/%'"),
            "0");
  ExpectCommitsUnderLeases("ev");
}

// What one server makes in the catalog, the others follow within a period: an external catalog
// (B runs a job into it, though it was made after B started) and a user (who logs into B).
TEST_F(ClusterE2ETest, AServerFollowsTheCatalogsAndUsersMadeOnAnother) {
  ASSERT_NO_FATAL_FAILURE(StartClustered());
  const std::string key = mr_->dir->Join("data/secret.key");
  auto b = access::E2EServer::Start(
      "", {"--local-root", inbox_, "--secret-key-file", key, "--lease-timeout", "2"}, nullptr,
      {ClusterEnv()});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  CreatePgCatalog();
  Exec("CREATE USER 'ann'@'%' IDENTIFIED BY 'ann-password'");
  Psql("CREATE TABLE public." + table_ + "_2 (id bigint PRIMARY KEY, name text)");
  WriteFile(1);
  Exec(JobInto("one", "pg.public." + table_));
  Exec(JobInto("two", "pg.public." + table_ + "_2"));
  // One job each (a share of ceil(2 / 2)), both loading.
  ASSERT_TRUE(PgHas(3)) << mr_->server->Log() << (*b)->server->Log();
  ASSERT_TRUE(ServerOnPostgresSuite::PgHas(table_ + "_2", 3))
      << mr_->server->Log() << (*b)->server->Log();
  EXPECT_EQ(Catalog("SELECT count(DISTINCT owner) FROM __millrace.leases WHERE expires_at > "
                    "now()"),
            "2");
  EXPECT_TRUE(testing::WaitFor(
      [&] { return access::ConnectAs((*b)->mysql_port(), "ann", "ann-password").ok(); },
      std::chrono::seconds(30)));
  // A job of the same name created on B before B has read A's: the catalog refuses it.
  Exec(JobInto("three", "pg.public." + table_ + "_2"));
  auto twice = access::Query((*b)->root.get(), JobInto("three", "pg.public." + table_ + "_2"));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("already exists"), std::string::npos)
      << twice.status().message();
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.jobs WHERE name = 'three'"), "1");
  Exec("DROP JOB WHERE jobname = 'three'");
  // A job dropped on B, whichever runs it: gone from A's views, its lease given up.
  ASSERT_TRUE(access::Query((*b)->root.get(), "DROP JOB WHERE jobname = 'one'").ok());
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return Exec("SELECT Name FROM jobs(\"type\" = \"insert\")") == access::Rows{{"two"}} &&
               Catalog("SELECT count(*) FROM __millrace.leases WHERE expires_at > now()") == "1";
      },
      std::chrono::seconds(30)))
      << mr_->server->Log();
}

// Jobs spread over the servers and move when one joins or leaves, each at most once per event
// (counted by the lease steps of its epoch: one per take), and none moves while the servers
// stay as they are.
TEST_F(ClusterE2ETest, JobsSpreadWhenAServerJoinsAndComeBackWhenItLeavesMovingOnce) {
  ASSERT_NO_FATAL_FAILURE(StartClustered());
  CreatePgCatalog();
  constexpr int kJobs = 4;
  const auto dir = [&](int j) { return inbox_ + "/j" + std::to_string(j); };
  const auto table = [&](int j) { return table_ + "_" + std::to_string(j); };
  const auto write = [&](int j, int n) {
    std::ofstream(dir(j) + "/f" + std::to_string(n) + ".csv") << n << ",x\n";
  };
  const auto all_have = [&](int rows) {
    for (int j = 1; j <= kJobs; ++j) {
      if (!ServerOnPostgresSuite::PgHas(table(j), rows)) return false;
    }
    return true;
  };
  for (int j = 1; j <= kJobs; ++j) {
    std::filesystem::create_directories(dir(j));
    Psql("CREATE TABLE public." + table(j) + " (id bigint PRIMARY KEY, name text)");
    write(j, 1);
    Exec("CREATE JOB j" + std::to_string(j) +
         " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO pg.public." +
         table(j) + " SELECT CAST(c1 AS BIGINT), c2 FROM local(\"file_path\" = \"" + dir(j) +
         "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")");
  }
  ASSERT_TRUE(all_have(1)) << mr_->server->Log();
  // How many jobs each server holds, and how many times each job was taken.
  const auto held_by = [&](pid_t pid) {
    return std::stoi(
        Catalog("SELECT count(*) FROM __millrace.leases WHERE expires_at > now() "
                "AND owner LIKE '%:" +
                std::to_string(pid) + "/%'"));
  };
  const auto takes = [&] {
    return Catalog("SELECT string_agg(CAST(epoch / " + std::to_string(job::kEpochsPerLease) +
                   " AS text), ',' ORDER BY id) FROM __millrace.jobs");
  };
  const pid_t a = mr_->server->pid();
  ASSERT_TRUE(testing::WaitFor([&] { return held_by(a) == kJobs; }, std::chrono::seconds(30)));
  EXPECT_EQ(takes(), "1,1,1,1");

  const std::string key = mr_->dir->Join("data/secret.key");
  auto b = access::E2EServer::Start(
      "", {"--local-root", inbox_, "--secret-key-file", key, "--lease-timeout", "2"}, nullptr,
      {ClusterEnv()});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const pid_t b_pid = (*b)->server->pid();
  ASSERT_TRUE(testing::WaitFor([&] { return held_by(a) == 2 && held_by(b_pid) == 2; },
                               std::chrono::seconds(30)))
      << held_by(a) << " " << held_by(b_pid);
  // The two newest moved, once each; then nothing moves.
  EXPECT_EQ(takes(), "1,1,2,2");
  // Three more ticks of both servers (each heartbeat moves its expiry on by a third of the
  // lease), and still nothing moved.
  const auto beats = [&] {
    return std::stod(Catalog("SELECT extract(epoch FROM min(expires_at)) FROM __millrace.servers"));
  };
  const double seen = beats();
  ASSERT_TRUE(testing::WaitFor([&] { return beats() >= seen + 1.9; }, std::chrono::seconds(30)));
  EXPECT_EQ(takes(), "1,1,2,2");
  for (int j = 1; j <= kJobs; ++j)
    write(j, 2);
  ASSERT_TRUE(all_have(2)) << mr_->server->Log() << (*b)->server->Log();

  // B stops (SIGTERM): it gives its jobs up and leaves; they come back to A, once each.
  ASSERT_TRUE((*b)->server->Terminate().ok());
  ASSERT_TRUE(testing::WaitFor([&] { return held_by(a) == kJobs; }, std::chrono::seconds(30)));
  EXPECT_EQ(takes(), "1,1,3,3");
  for (int j = 1; j <= kJobs; ++j)
    write(j, 3);
  ASSERT_TRUE(all_have(3)) << mr_->server->Log();
  for (int j = 1; j <= kJobs; ++j) {
    EXPECT_EQ(Psql("SELECT count(DISTINCT id) FROM public." + table(j)), "3");
    ExpectCommitsUnderLeases("j" + std::to_string(j));
  }
}

// Cluster chaos (issue 41): three servers (each with --memory-limit, leases of 2 s) share jobs
// that read an object store through a fault proxy (503s, resets, truncated bodies, stalls) into
// PostgreSQL tables. While the files arrive, servers are killed with kill -9 and restarted,
// stopped with SIGTERM and restarted, and frozen with SIGSTOP until their leases have run out,
// then thawed. At the end every table holds each file's rows exactly once, the sink's commit
// records show every commit made under a lease and none at an older epoch after a newer
// (ExpectCommitsUnderLeases), and every job runs on a live server. MILLRACE_CLUSTER_CHAOS_JOBS
// and MILLRACE_CLUSTER_CHAOS_FILES size it (default 5 and 300; make chaos: 20 and 2,000).
TEST_F(ClusterE2ETest, ChaosOfThreeServersLosesAndDoublesNothing) {
  const auto sized = [](const char* name, int fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::atoi(value) : fallback;
  };
  const int jobs = sized("MILLRACE_CLUSTER_CHAOS_JOBS", 5);
  const int files = sized("MILLRACE_CLUSTER_CHAOS_FILES", 300);
  constexpr int kRows = 4;
  constexpr int kServers = 3;
  constexpr int kEvents = 9;  // each kind three times, on servers drawn at random

  auto s3 = testing::S3rver::Start({"landing"});
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  testing::FaultProxy::Options proxy_options;
  proxy_options.upstream_port = (*s3)->port();
  proxy_options.seed = 41041;
  proxy_options.enforce_if_match = true;
  auto proxy = testing::FaultProxy::Start(proxy_options);
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  using testing::Fault;
  using testing::RequestKind;
  (*proxy)->AddRule({RequestKind::kList, "", -1, 0.10, Fault::SlowDown()});
  (*proxy)->AddRule({RequestKind::kGet, "", -1, 0.08, Fault::SlowDown()});
  (*proxy)->AddRule({RequestKind::kGet, "", -1, 0.05, Fault::ResetAfter(16)});
  (*proxy)->AddRule({RequestKind::kGet, "", -1, 0.05, Fault::TruncateAfter(16)});
  (*proxy)->AddRule(
      {RequestKind::kGet, "", -1, 0.02, Fault::StallAfter(16, std::chrono::milliseconds(1000))});

  // The three servers, each on a data directory of its own, sharing the catalog and its key.
  std::vector<std::unique_ptr<access::E2EServer>> servers(kServers);
  std::vector<std::unique_ptr<testing::TempDir>> dirs(kServers);
  std::string key;
  const auto start = [&](int i) {
    std::vector<std::string> args = {"--lease-timeout", "2", "--memory-limit", "512MB"};
    if (!key.empty()) args.insert(args.end(), {"--secret-key-file", key});
    auto started = access::E2EServer::Start("", args, std::move(dirs[i]), {ClusterEnv()});
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    servers[i] = std::move(started).value();
  };
  const auto stop = [&](int i) {  // after a kill or a SIGTERM: the directory is kept
    dirs[i] = std::move(servers[i]->dir);
    servers[i].reset();
  };
  ASSERT_NO_FATAL_FAILURE(start(0));
  key = servers[0]->dir->Join("data/secret.key");
  for (int i = 1; i < kServers; ++i)
    ASSERT_NO_FATAL_FAILURE(start(i));
  access::MysqlPtr& root = servers[0]->root;
  ASSERT_TRUE(
      access::Query(root.get(), "CREATE CATALOG pg PROPERTIES ('type' = 'postgresql', 'host' = '" +
                                    pg_->host() + "', 'port' = '" + std::to_string(pg_->port()) +
                                    "', 'database' = 'postgres', 'user' = '" + pg_->user() +
                                    "', 'password' = '" + pg_->password() + "')")
          .ok());
  const auto table = [&](int j) { return table_ + "_c" + std::to_string(j); };
  for (int j = 0; j < jobs; ++j) {
    Psql("CREATE TABLE public." + table(j) + " (file int, line int, payload text)");
    auto created = access::Query(
        root.get(),
        "CREATE JOB c" + std::to_string(j) +
            " ON STREAMING PROPERTIES (\"max_interval\" = \"1\", \"s3.max_batch_files\" = \"10\") "
            "DO INSERT INTO pg.public." +
            table(j) + " SELECT c1, c2, c3 FROM S3(\"uri\" = \"s3://landing/c" + std::to_string(j) +
            "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\", \"s3.endpoint\" = \"" +
            (*proxy)->endpoint() +
            "\", \"s3.access_key\" = \"S3RVER\", \"s3.secret_key\" = \"S3RVER\", "
            "\"use_path_style\" = \"true\")");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // The files: each job's in key order (so its commits go in key order), the jobs interleaved
  // at random; written while the servers come and go.
  std::mt19937 rng(20261207);
  std::vector<int> order;
  for (int f = 0; f < files; ++f)
    order.push_back(f % jobs);
  std::shuffle(order.begin(), order.end(), rng);
  std::atomic<int> written{0};
  std::atomic<bool> put_failed{false};
  std::atomic<bool> done{false};  // the chaos is over: the producer stops pacing itself
  std::thread producer([&] {
    std::mt19937 prng(7);
    std::vector<int> next(jobs, 0);
    int burst = 0;
    for (int j : order) {
      const int f = next[j]++;
      std::string body;
      for (int line = 0; line < kRows; ++line)
        body += std::to_string(f) + "," + std::to_string(line) + ",p" +
                std::to_string(f * 7 + line) + "\n";
      char name[48];
      std::snprintf(name, sizeof(name), "c%d/f%06d.csv", j, f);
      if (!(*s3)->PutObject("landing", name, body).ok()) put_failed = true;
      ++written;
      // Bursts of files, each after a listing by whichever servers run by then.
      if (--burst <= 0) {
        const uint64_t lists = (*proxy)->counts().list;
        EXPECT_TRUE(testing::WaitFor([&] { return done || (*proxy)->counts().list > lists; },
                                     std::chrono::seconds(60)))
            << "no listing";
        burst = 1 + static_cast<int>(prng() % 16);
      }
    }
  });

  const auto requests = [&] {
    const testing::ProxyCounts counts = (*proxy)->counts();
    return counts.list + counts.get + counts.head + counts.other;
  };
  const auto live_leases_of = [&](pid_t pid) {
    return Catalog(
        "SELECT count(*) FROM __millrace.leases WHERE expires_at > now() AND owner "
        "LIKE '%:" +
        std::to_string(pid) + "/%'");
  };
  int events = 0;
  int kills = 0, terms = 0, freezes = 0;
  while (written < files || events < kEvents) {
    // A random point of the servers' work: after a random number of object-store requests.
    const uint64_t before = requests();
    const uint64_t more = rng() % 60;
    ASSERT_TRUE(
        testing::WaitFor([&] { return requests() >= before + more; }, std::chrono::seconds(60)))
        << "the jobs went quiet";
    const int i = static_cast<int>(rng() % kServers);
    switch (events % 3) {
      case 0:  // kill -9, then a restart
        stop(i);
        ++kills;
        ASSERT_NO_FATAL_FAILURE(start(i));
        break;
      case 1:  // SIGTERM, then a restart
        ASSERT_TRUE(servers[i]->server->Terminate().ok());
        stop(i);
        ++terms;
        ASSERT_NO_FATAL_FAILURE(start(i));
        break;
      default: {  // frozen until its leases ran out, then thawed
        const pid_t pid = servers[i]->server->pid();
        ASSERT_EQ(kill(pid, SIGSTOP), 0);
        ++freezes;
        ASSERT_TRUE(
            testing::WaitFor([&] { return live_leases_of(pid) == "0"; }, std::chrono::seconds(30)));
        ASSERT_EQ(kill(pid, SIGCONT), 0);
        break;
      }
    }
    ++events;
  }
  done = true;
  producer.join();
  ASSERT_FALSE(put_failed);

  for (int j = 0; j < jobs; ++j) {
    const int job_files = files / jobs + (j < files % jobs ? 1 : 0);
    const std::string rows = std::to_string(job_files * kRows);
    EXPECT_TRUE(
        testing::WaitFor([&] { return Psql("SELECT count(*) FROM public." + table(j)) == rows; },
                         std::chrono::seconds(120)))
        << table(j) << ": " << Psql("SELECT count(*) FROM public." + table(j)) << " rows, not "
        << rows;
    EXPECT_EQ(Psql("SELECT count(*) FROM (SELECT file FROM public." + table(j) +
                   " GROUP BY file HAVING count(*) = " + std::to_string(kRows) +
                   " AND count(DISTINCT line) = " + std::to_string(kRows) +
                   " AND bool_and(payload = 'p' || (file * 7 + line))) s"),
              std::to_string(job_files));
    ExpectCommitsUnderLeases("c" + std::to_string(j));
  }
  // Every job runs, on a live server: a lease that lapsed in the last freeze is taken over by
  // another server's next scan, so the count is awaited (seen 4 of 5 at the instant the rows
  // were all in).
  std::string owners;
  for (const auto& server : servers)
    owners += (owners.empty() ? "'%:" : "', '%:") + std::to_string(server->server->pid()) + "/%";
  const std::string live_leases =
      "SELECT count(*) FROM __millrace.leases WHERE expires_at > now() AND owner LIKE ANY "
      "(ARRAY[" +
      owners + "'])";
  EXPECT_TRUE(testing::WaitFor([&] { return Catalog(live_leases) == std::to_string(jobs); },
                               std::chrono::seconds(60)))
      << Catalog(live_leases) << " of " << jobs << " jobs hold a live lease";
  EXPECT_EQ(Catalog("SELECT count(*) FROM __millrace.jobs WHERE state = 'RUNNING'"),
            std::to_string(jobs));
  const auto counts = (*proxy)->counts();
  std::printf(
      "cluster chaos: %d jobs, %d files, %d kills, %d SIGTERMs, %d freezes, %llu "
      "requests faulted\n",
      jobs, files, kills, terms, freezes, static_cast<unsigned long long>(counts.faulted));
  EXPECT_GT(counts.faulted, 0u);
}

TEST_F(ClusterE2ETest, AMalformedOrUnreachableCatalogStopsTheStartSayingWhy) {
  auto bad = access::E2EServer::Start("", {"--cluster", "mysql://h/d"}, nullptr, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--cluster: a PostgreSQL URI starts with postgresql://"),
            std::string::npos)
      << bad.status().message();
  auto unreachable =
      access::E2EServer::Start("", {"--cluster", "postgresql://u@127.0.0.1:1/d"}, nullptr, {});
  ASSERT_FALSE(unreachable.ok());
  EXPECT_NE(unreachable.status().message().find("--cluster: PostgreSQL 127.0.0.1:1/d"),
            std::string::npos)
      << unreachable.status().message();
}

}  // namespace
}  // namespace millrace::pgcatalog
