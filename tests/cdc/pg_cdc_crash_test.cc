// Crash tests of change data capture from PostgreSQL: the real server is killed with SIGKILL at
// random moments of the snapshot and of the stream, and PostgreSQL itself crashes and restarts,
// while another connection keeps inserting, updating (keys too) and deleting. After every kill
// the slot's confirmed LSN is at most the LSN the dead server had committed (nothing is ever
// confirmed that did not commit), and at the end each target equals its source by checksum.
//
// MILLRACE_CDC_CRASH_ROWS (default 10000) sizes the tables, MILLRACE_CDC_CRASH_KILLS (default 8)
// the number of kills, MILLRACE_CDC_CRASH_SEED the randomness; `make chaos` runs 100k rows.
#include <gtest/gtest.h>

#include "cdc/cdc_test_env.h"

namespace millrace::cdc {
namespace {

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

// PostgreSQL crashes once under the running server: its stream and snapshot connections break,
// and the jobs carry on once it is back.
TEST_F(PgCdcCrashTest, KillNineDuringSnapshotAndStreamAndAPostgresCrashLoseAndDoubleNothing) {
  const std::string jobs_sql =
      "SELECT name, coalesce(current_offset, ''), 'millrace_' || id || '_' || create_time_us "
      "FROM __millrace.jobs";
  auto expect_confirmed = [&](const std::string& when) {
    auto committed = env_->QueryDatabaseFile(jobs_sql);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
    ExpectConfirmedAtMostCommitted(*committed, when);
  };
  CrashScenario([&](int round) { expect_confirmed("after kill " + std::to_string(round)); });
  // Once more after the stream caught up: the slot confirmed what was committed, no more.
  env_->KillMillrace();
  expect_confirmed("at the end");
  ASSERT_EQ(env_->RestartMillrace(), Status::Ok());
}

}  // namespace
}  // namespace millrace::cdc
