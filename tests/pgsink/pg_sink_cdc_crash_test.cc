// Crash test of change streams into the PostgreSQL sink: the crash scenario of the change-data-
// capture tests (kill -9 of the server at random moments of the snapshot and of the stream, a
// crash and restart of PostgreSQL, another connection writing random transactions all along)
// with both jobs writing tables of the sink, in the PostgreSQL that is also their source. After
// every kill no slot has confirmed more than the sink committed (its offset is the truth for the
// job), and at the end each sink table equals its source by checksum.
//
// MILLRACE_CDC_CRASH_ROWS, _KILLS and _SEED size it as for pg_cdc_crash_test.
#include <gtest/gtest.h>

#include "cdc/cdc_test_env.h"

namespace millrace::cdc {
namespace {

class PgSinkCdcCrashTest : public CdcEnvTest {
 protected:
  // The slots that confirmed a position past the offset the sink's schema holds for their job
  // (a job's slot is millrace_<id>_<create_time_us>; its key there name#id@create_time_us).
  static std::string SlotsPastTheSink() {
    if (env_->Pg("SELECT to_regclass('millrace.jobs') IS NOT NULL") != "t") return "";
    return env_->Pg(
        "SELECT coalesce(string_agg(j.job_key || ' confirmed ' || s.confirmed_flush_lsn || ' past "
        "' || j.job_offset, '; '), '') FROM millrace.jobs j JOIN pg_replication_slots s ON "
        "s.slot_name = 'millrace_' || split_part(split_part(j.job_key, '#', 2), '@', 1) || '_' || "
        "split_part(j.job_key, '@', 2) WHERE j.job_offset LIKE '%\"lsn\"%' AND "
        "s.confirmed_flush_lsn > (regexp_match(j.job_offset, '\"lsn\":\"([^\"]+)\"'))[1]::pg_lsn");
  }
};

TEST_F(PgSinkCdcCrashTest, KillNineAndAPostgresCrashLoseAndDoubleNothingInTheSink) {
  CrashScenario([&](int round) { EXPECT_EQ(SlotsPastTheSink(), "") << "after kill " << round; },
                CrashTargets::kPostgresSink);
  EXPECT_EQ(SlotsPastTheSink(), "");
  // Both jobs committed through the sink: their offsets there are WAL positions.
  EXPECT_EQ(env_->Pg("SELECT count(*) FROM millrace.jobs WHERE job_offset LIKE '%\"lsn\"%'"), "2");
}

}  // namespace
}  // namespace millrace::cdc
