// Crash tests of change data capture from PostgreSQL: the real server is killed with SIGKILL at
// random moments of the snapshot and of the stream, and PostgreSQL itself crashes and restarts,
// while another connection keeps inserting, updating (keys too) and deleting. After every kill
// the slot's confirmed LSN is at most the LSN the dead server had committed (nothing is ever
// confirmed that did not commit), and at the end each target equals its source by checksum.
//
// MILLRACE_CDC_CRASH_ROWS (default 10000) sizes the tables, MILLRACE_CDC_CRASH_KILLS (default 8)
// the number of kills, MILLRACE_CDC_CRASH_SEED the randomness; `make chaos` runs 100k rows.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include "cdc/cdc_test_env.h"
#include "testing/wait_for.h"

namespace millrace::cdc {
namespace {

using testing::WaitFor;

class PgCdcCrashTest : public CdcEnvTest {
 protected:
  // For each job that has a slot: the slot's confirmed LSN is at most `committed` (the job's
  // offset), compared by PostgreSQL's pg_lsn.
  static void ExpectConfirmedAtMostCommitted(const access::Rows& jobs, const std::string& when) {
    for (const auto& job : jobs) {
      const std::string& name = job[0];
      const std::string& offset = job[1];
      const std::string& slot = job[2];
      const std::string confirmed = env_->Pg(
          "SELECT coalesce(confirmed_flush_lsn::text, '') FROM pg_replication_slots WHERE "
          "slot_name = '" +
          slot + "'");
      // Killed before its slot existed, or before its first commit (the slot is made again).
      if (confirmed.empty() || offset.empty()) continue;
      const size_t at = offset.find("\"lsn\":\"");
      ASSERT_NE(at, std::string::npos)
          << when << ": job " << name << " has slot " << slot << " (confirmed " << confirmed
          << ") but its offset has no LSN: " << offset;
      const std::string committed = offset.substr(at + 7, offset.find('"', at + 7) - at - 7);
      EXPECT_EQ(env_->Pg("SELECT '" + confirmed + "'::pg_lsn <= '" + committed + "'::pg_lsn"), "t")
          << when << ": job " << name << " confirmed " << confirmed << " but committed "
          << committed;
    }
  }
};

TEST_F(PgCdcCrashTest, KillNineDuringSnapshotAndStreamAndAPostgresCrashLoseAndDoubleNothing) {
  const int rows = EnvInt("MILLRACE_CDC_CRASH_ROWS", 10000);
  const int kills = EnvInt("MILLRACE_CDC_CRASH_KILLS", 8);
  const unsigned seed = static_cast<unsigned>(EnvInt("MILLRACE_CDC_CRASH_SEED", 20261203));
  SCOPED_TRACE("MILLRACE_CDC_CRASH_SEED=" + std::to_string(seed));
  const std::string n = std::to_string(rows);
  // A one-column key and a two-column key (whose splits resume after a composite bound).
  env_->Pg(
      "CREATE TABLE crash_a (id int PRIMARY KEY, name text, qty int);"
      "INSERT INTO crash_a SELECT g, 'name ' || g, g % 97 FROM generate_series(1, " +
      n +
      ") g;"
      "CREATE TABLE crash_b (a int, b text, v int, PRIMARY KEY (a, b));"
      "INSERT INTO crash_b SELECT g / 3, 'k' || (g % 3), g FROM generate_series(1, " +
      n + ") g");
  ASSERT_TRUE(env_->Mr("CREATE TABLE cdc.crash_a (id INT, name STRING, qty INT) UNIQUE KEY(id) "
                       "DISTRIBUTED BY HASH(id) BUCKETS 1")
                  .ok());
  ASSERT_TRUE(env_->Mr("CREATE TABLE cdc.crash_b (a INT, b STRING, v INT) UNIQUE KEY(a, b) "
                       "DISTRIBUTED BY HASH(a) BUCKETS 1")
                  .ok());
  const std::string split = ", \"snapshot_split_size\" = \"" + std::to_string(rows / 20) + "\"";
  ASSERT_EQ(env_->CreateJob("crash_a", "INSERT INTO cdc.crash_a SELECT * FROM " +
                                           env_->Stream("crash_a", split)),
            Status::Ok());
  // crash_b reads three splits at once (split boundaries over a two-column key).
  ASSERT_EQ(
      env_->CreateJob("crash_b",
                      "INSERT INTO cdc.crash_b SELECT * FROM " +
                          env_->Stream("crash_b", split + ", \"snapshot_parallelism\" = \"3\"")),
      Status::Ok());

  // The writer: transactions of a few random changes to both tables, until told to stop.
  // Statements fail while PostgreSQL is down; the checksums compare whatever committed.
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::atomic<int> refused{0};
  std::thread writer([&] {
    std::mt19937 rng(seed + 1);
    int next_id = rows + 1;
    while (!stop) {
      if (env_->TrySrc(env_->RandomTransaction(rng, rows, &next_id)).ok()) {
        ++written;
      } else {
        ++refused;  // PostgreSQL is restarting
      }
    }
  });

  const std::string jobs_sql =
      "SELECT name, coalesce(current_offset, ''), 'millrace_' || id || '_' || create_time_us "
      "FROM __millrace.jobs";
  // PostgreSQL crashes once under the running server: its stream and snapshot connections
  // break, and the jobs carry on once it is back.
  std::mt19937 rng(seed);
  KillRounds(kills, rng, [&](int round) {
    auto committed = env_->QueryDatabaseFile(jobs_sql);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
    ExpectConfirmedAtMostCommitted(*committed, "after kill " + std::to_string(round));
  });
  EXPECT_TRUE(WaitFor([&] { return written >= 50; }, std::chrono::seconds(60)));
  stop = true;
  writer.join();

  const std::vector<CanonColumn> a_columns = {{"id"}, {"name"}, {"qty"}};
  const std::vector<CanonColumn> b_columns = {{"a"}, {"b"}, {"v"}};
  auto [want_a, got_a] =
      env_->Converge("crash_a", "cdc.crash_a", a_columns, std::chrono::seconds(240));
  EXPECT_EQ(want_a, got_a);
  auto [want_b, got_b] =
      env_->Converge("crash_b", "cdc.crash_b", b_columns, std::chrono::seconds(240));
  EXPECT_EQ(want_b, got_b);
  // Once more after the stream caught up: the slot confirmed what was committed, no more.
  env_->KillMillrace();
  auto committed = env_->QueryDatabaseFile(jobs_sql);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  ExpectConfirmedAtMostCommitted(*committed, "at the end");
  ASSERT_EQ(env_->RestartMillrace(), Status::Ok());
  std::cout << "written transactions: " << written
            << ", refused while PostgreSQL restarted: " << refused << "\n";
}

}  // namespace
}  // namespace millrace::cdc
