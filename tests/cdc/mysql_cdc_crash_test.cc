// Disasters of change data capture from MariaDB: a binlog position purged while a job was
// paused; the real server killed with SIGKILL at random moments of the snapshot and of the
// stream, and MariaDB itself crashing and restarting, while another connection keeps inserting,
// updating (keys too) and deleting. At the end each target equals its source by checksum.
//
// MILLRACE_CDC_CRASH_ROWS (default 10000) sizes the tables, MILLRACE_CDC_CRASH_KILLS (default 8)
// the number of kills, MILLRACE_CDC_CRASH_SEED the randomness; `make chaos` runs 100k rows.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

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

TEST_F(MysqlCdcCrashTest, KillNineDuringSnapshotAndStreamAndAMariadbCrashLoseAndDoubleNothing) {
  const int rows = EnvInt("MILLRACE_CDC_CRASH_ROWS", 10000);
  const int kills = EnvInt("MILLRACE_CDC_CRASH_KILLS", 8);
  const unsigned seed = static_cast<unsigned>(EnvInt("MILLRACE_CDC_CRASH_SEED", 20261203));
  SCOPED_TRACE("MILLRACE_CDC_CRASH_SEED=" + std::to_string(seed));
  const std::string n = std::to_string(rows);
  // A one-column key and a two-column key (whose splits resume after a composite bound).
  My("CREATE TABLE crash_a (id INT PRIMARY KEY, name VARCHAR(40), qty INT);"
     "INSERT INTO crash_a SELECT seq, CONCAT('name ', seq), seq % 97 FROM seq_1_to_" +
     n +
     ";"
     "CREATE TABLE crash_b (a INT, b VARCHAR(40), v INT, PRIMARY KEY (a, b));"
     "INSERT INTO crash_b SELECT seq DIV 3, CONCAT('k', seq % 3), seq FROM seq_1_to_" +
     n);
  ItemsTarget("crash_a");
  ASSERT_TRUE(Mr("CREATE TABLE cdc.crash_b (a INT, b STRING, v INT) UNIQUE KEY(a, b) "
                 "DISTRIBUTED BY HASH(a) BUCKETS 1")
                  .ok());
  const std::string split = ", \"snapshot_split_size\" = \"" + std::to_string(rows / 20) + "\"";
  ASSERT_EQ(
      CreateJob("crash_a", "INSERT INTO cdc.crash_a SELECT * FROM " + Stream("crash_a", split)),
      Status::Ok());
  // crash_b reads three splits at once (split boundaries over a two-column key).
  ASSERT_EQ(
      CreateJob("crash_b", "INSERT INTO cdc.crash_b SELECT * FROM " +
                               Stream("crash_b", split + ", \"snapshot_parallelism\" = \"3\"")),
      Status::Ok());

  // The writer: transactions of a few random changes to both tables, until told to stop.
  // Statements fail while MariaDB is down; the checksums compare whatever committed.
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
        ++refused;  // MariaDB is restarting
      }
    }
  });

  // MariaDB crashes once under the running server: its stream and snapshot connections break,
  // and the jobs carry on once it is back.
  std::mt19937 rng(seed);
  KillRounds(kills, rng);
  EXPECT_TRUE(WaitFor([&] { return written >= 50; }, std::chrono::seconds(60)));
  stop = true;
  writer.join();

  auto [want_a, got_a] =
      env_->Converge("crash_a", "cdc.crash_a", kItemColumns, std::chrono::seconds(240));
  EXPECT_EQ(want_a, got_a);
  auto [want_b, got_b] =
      env_->Converge("crash_b", "cdc.crash_b", {{"a"}, {"b"}, {"v"}}, std::chrono::seconds(240));
  EXPECT_EQ(want_b, got_b);
  std::cout << "written transactions: " << written
            << ", refused while MariaDB restarted: " << refused << "\n";
}

}  // namespace
}  // namespace millrace::cdc
