// Disasters of change data capture from MariaDB: a binlog position purged while a job was
// paused; the real server killed with SIGKILL at random moments of the snapshot and of the
// stream, and MariaDB itself crashing and restarting, while another connection keeps inserting,
// updating (keys too) and deleting. At the end each target equals its source by checksum.
//
// MILLRACE_CDC_CRASH_ROWS (default 10000) sizes the tables, MILLRACE_CDC_CRASH_KILLS (default 8)
// the number of kills, MILLRACE_CDC_CRASH_SEED the randomness; `make chaos` runs 100k rows.
#include <gtest/gtest.h>

#include "cdc/cdc_test_env.h"
#include "testing/wait_for.h"

namespace millrace::cdc {
namespace {

using testing::WaitFor;

class MysqlCdcCrashTest : public MysqlCdcEnvTest {
 protected:
  static std::string My(const std::string& sql) { return env_->Src(sql); }
};

// First in the binary: it kills every binlog connection, which no other job should see.
// A binlog position purged while the job was paused: the job pauses naming it; a job made
// again with "offset" = "initial" brings the target back to the source, keys deleted meanwhile
// removed.
TEST_F(MysqlCdcCrashTest, APurgedPositionPausesTheJobNamingItAndANewJobBringsTheTargetBack) {
  My("CREATE TABLE purged (id INT PRIMARY KEY, name VARCHAR(100), qty INT);"
     "INSERT INTO purged SELECT seq, 'n', seq FROM seq_1_to_20");
  ItemsTarget("purged");
  ASSERT_EQ(CreateJob("job_purged", "INSERT INTO cdc.purged SELECT * FROM " + Stream("purged")),
            Status::Ok());
  Converged("purged", "cdc.purged", kItemColumns);
  ASSERT_TRUE(Mr("PAUSE JOB WHERE jobname = 'job_purged'").ok());
  const std::string offset = JobValue("job_purged", "CurrentOffset");
  My("DELETE FROM purged WHERE id <= 5; INSERT INTO purged VALUES (21, 'late', 21); "
     "FLUSH BINARY LOGS");
  // The paused job's binlog connection ends (a network failure, a server restart): its
  // position must be read again. Then the file it was in is purged (the server keeps a file a
  // dump thread reads, so once that thread is gone).
  const std::string kills =
      My("SELECT GROUP_CONCAT(CONCAT('KILL ', ID) SEPARATOR '; ') FROM "
         "information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'");
  if (kills != "NULL") My(kills);
  const size_t file = offset.find("binlog.");
  ASSERT_NE(file, std::string::npos) << offset;
  const std::string file_name = offset.substr(file, offset.find('"', file) - file);
  ASSERT_TRUE(WaitFor([&] {
    const std::string current = My("SHOW MASTER STATUS");
    My("PURGE BINARY LOGS TO '" + current.substr(0, current.find('\t')) + "'");
    return My("SHOW BINARY LOGS").find(file_name) == std::string::npos;
  }));
  // The paused job says so before it is resumed (paused jobs are looked at every second here).
  EXPECT_TRUE(WaitFor([&] {
    return JobValue("job_purged", "JobRuntimeMsg").find("is no longer on") != std::string::npos;
  })) << JobValue("job_purged", "JobRuntimeMsg");
  ASSERT_TRUE(Mr("RESUME JOB WHERE jobname = 'job_purged'").ok());
  const std::string paused = WaitUntilPaused("job_purged");
  EXPECT_NE(paused.find("is no longer on"), std::string::npos) << paused;
  EXPECT_NE(paused.find("purged"), std::string::npos) << paused;
  EXPECT_NE(paused.find(file_name), std::string::npos) << paused << " " << offset;
  // Made again from a fresh snapshot: the target equals the source, the keys deleted while the
  // position was lost are gone from it too.
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_purged'").ok());
  ASSERT_EQ(
      CreateJob("job_purged_again", "INSERT INTO cdc.purged SELECT * FROM " +
                                        Stream("purged", ", \"snapshot_split_size\" = \"4\"")),
      Status::Ok());
  EXPECT_EQ(Converged("purged", "cdc.purged", kItemColumns).substr(0, 3), "16:");
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.purged WHERE id <= 5"), "0");
  ASSERT_TRUE(Mr("DROP JOB WHERE jobname = 'job_purged_again'").ok());
}

// MariaDB crashes once under the running server: its stream and snapshot connections break,
// and the jobs carry on once it is back.
TEST_F(MysqlCdcCrashTest, KillNineDuringSnapshotAndStreamAndAMariadbCrashLoseAndDoubleNothing) {
  CrashScenario();
}

}  // namespace
}  // namespace millrace::cdc
