// Change data capture from a real MariaDB 10.11 end to end: the real `millrace serve` binary,
// Connector/C, and a MariaDB server started for this binary (testing/mariadb_server.h) with
// log_bin, binlog_format ROW, binlog_row_image FULL and binlog_row_metadata FULL. Targets are
// compared with their sources by checksums over a canonical text of each value
// (cdc_checksum.h), not by counts alone.
//
// MILLRACE_CDC_ROWS (default 10000) sizes the snapshot tables; e.g. 100000 for a manual run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "cdc/cdc_test_env.h"
#include "testing/wait_for.h"

namespace millrace::cdc {
namespace {

using testing::WaitFor;

int SnapshotRows() {
  const char* env = std::getenv("MILLRACE_CDC_ROWS");
  return env != nullptr ? std::atoi(env) : 10000;
}

class MysqlCdcTest : public MysqlCdcEnvTest {
 protected:
  static std::string My(const std::string& sql) { return env_->Src(sql); }
  // A UNIQUE KEY target cdc.<name> (id INT, name VARCHAR(100), qty INT).
  static void ItemsTarget(const std::string& name) {
    ASSERT_TRUE(Mr("CREATE TABLE cdc." + name +
                   " (id INT, name VARCHAR(100), qty INT) UNIQUE KEY(id) "
                   "DISTRIBUTED BY HASH(id) BUCKETS 1")
                    .ok());
  }
  static std::string Converged(const std::string& source, const std::string& target,
                               const std::vector<CanonColumn>& columns) {
    auto [want, got] = Converge(source, target, columns);
    EXPECT_EQ(want, got);
    return want;
  }
};

const std::vector<CanonColumn> kItemColumns = {{"id"}, {"name"}, {"qty"}};

TEST_F(MysqlCdcTest, SnapshotOfThreeTablesWhileAnotherConnectionWritesThenTheStream) {
  const int rows = SnapshotRows();
  for (const std::string t : {"snap_a", "snap_b", "snap_c"}) {
    My("CREATE TABLE " + t + " (id INT PRIMARY KEY, name TEXT, qty INT); INSERT INTO " + t +
       " SELECT seq, CONCAT('name ', seq), seq % 97 FROM seq_1_to_" + std::to_string(rows));
    ItemsTarget(t);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      const std::string n = std::to_string(i);
      const std::string id = std::to_string(1 + (i * 7919) % rows);
      My("INSERT INTO snap_a VALUES (" + std::to_string(rows + 1 + i) + ", 'new', " + n +
         "); UPDATE snap_b SET qty = qty + 1, name = 'upd " + n + "' WHERE id = " + id +
         "; DELETE FROM snap_c WHERE id = " + id + "; UPDATE snap_a SET id = id + " +
         std::to_string(10 * rows) + " WHERE id = " + id);
      ++rounds;
    }
  });
  // Each table by a job of its own, and two splits read at once for one of them.
  ASSERT_EQ(CreateJob("job_snap_a", "INSERT INTO cdc.snap_a SELECT * FROM " +
                                        Stream("snap_a", ", \"snapshot_split_size\" = \"3000\"")),
            Status::Ok());
  ASSERT_EQ(CreateJob("job_snap_b", "INSERT INTO cdc.snap_b SELECT * FROM " +
                                        Stream("snap_b",
                                               ", \"snapshot_split_size\" = \"2000\", "
                                               "\"snapshot_parallelism\" = \"2\"")),
            Status::Ok());
  ASSERT_EQ(CreateJob("job_snap_c",
                      "INSERT INTO cdc.snap_c SELECT id, name, qty FROM " + Stream("snap_c")),
            Status::Ok());
  WaitFor([&] { return rounds >= 200; }, std::chrono::seconds(120));
  stop = true;
  writer.join();
  for (const std::string t : {"snap_a", "snap_b", "snap_c"})
    Converged(t, "cdc." + t, kItemColumns);
  const std::string offset = JobValue("job_snap_a", "CurrentOffset");
  EXPECT_NE(offset.find("\"file\""), std::string::npos) << offset;
  EXPECT_NE(offset.find("\"pos\""), std::string::npos) << offset;
  EXPECT_NE(offset.find("\"gtids\""), std::string::npos) << offset;
  EXPECT_EQ(offset.find("snapshot"), std::string::npos) << offset;
}

TEST_F(MysqlCdcTest, EveryKindOfChangeIsAppliedAndARolledBackTransactionIsNot) {
  My("CREATE TABLE ops (id INT PRIMARY KEY, name VARCHAR(100), qty INT)");
  ItemsTarget("ops");
  ASSERT_EQ(CreateJob("job_ops", "INSERT INTO cdc.ops SELECT * FROM " + Stream("ops")),
            Status::Ok());
  My("INSERT INTO ops SELECT seq, CONCAT('n', seq), seq FROM seq_1_to_50");
  EXPECT_EQ(Converged("ops", "cdc.ops", kItemColumns).substr(0, 3), "50:");
  My("UPDATE ops SET qty = qty * 10 WHERE id <= 10");  // non-key
  My("UPDATE ops SET id = id + 1000 WHERE id > 45");   // key
  My("DELETE FROM ops WHERE id BETWEEN 20 AND 24");
  Converged("ops", "cdc.ops", kItemColumns);
  // One transaction of several statements, touching the same key more than once.
  My("BEGIN; INSERT INTO ops VALUES (500, 'a', 1); UPDATE ops SET qty = 2 WHERE id = 500; "
     "DELETE FROM ops WHERE id = 1; INSERT INTO ops VALUES (1, 'again', 3); "
     "UPDATE ops SET name = 'x' WHERE id = 500; COMMIT");
  Converged("ops", "cdc.ops", kItemColumns);
  My("BEGIN; INSERT INTO ops VALUES (900, 'never', 0); DELETE FROM ops WHERE id = 2; ROLLBACK");
  My("INSERT INTO ops VALUES (901, 'after rollback', 0)");
  Converged("ops", "cdc.ops", kItemColumns);
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.ops WHERE id = 900"), "0");
  EXPECT_EQ(MrValue("SELECT count(*) FROM cdc.ops WHERE id = 2"), "1");
  // TRUNCATE commits on its own in MySQL: the rows before it go, the ones after it stay.
  My("INSERT INTO ops VALUES (950, 'before truncate', 0); TRUNCATE TABLE ops; "
     "INSERT INTO ops VALUES (7, 'after truncate', 7)");
  EXPECT_EQ(Converged("ops", "cdc.ops", kItemColumns).substr(0, 2), "1:");
  EXPECT_EQ(MrValue("SELECT name FROM cdc.ops"), "after truncate");
}

}  // namespace
}  // namespace millrace::cdc
