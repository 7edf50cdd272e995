// The benchmark scenarios (issue 7): throughput, small files, freshness, discovery cost,
// memory, recovery and table models; and change data capture from PostgreSQL (issue 14). Each
// starts its own `millrace serve` on a fresh data directory against the shared s3rver (cdc:
// against a PostgreSQL 15 of its own), measures `runs` times and returns its figures, each
// beside the baseline measured in the same run where one exists.
//
// Contract
// - Scenarios are independent: any subset runs in any order (throughput and memory generate
//   the event files on first use and share them through the context).
// - A scenario returns the first error that stops it (a job that paused, a timeout, an S3
//   failure), naming what it was doing; figures measured before it are lost.
// - Thread-safety: scenarios run one at a time on the main thread (children die with the
//   thread that spawned them).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "common/result.h"
#include "data_gen.h"
#include "engine/database.h"
#include "testing/s3rver.h"

namespace millrace::bench {

struct BenchConfig {
  std::string mode;  // "quick" or "full"
  int runs = 3;
  uint64_t seed = 20260107;
  // Throughput: files of about tp_file_bytes per format.
  int tp_files = 20;
  uint64_t tp_file_bytes = 100'000'000;
  // Local throughput: runs of its own, its CPU per GB being noisier than the rest (two
  // processes' CPU against each other; the same DuckDB load has moved 5.2-8.1 core-s between
  // runs, docs/PERFORMANCE.md).
  int local_runs = 5;
  // Small files.
  int64_t small_files = 20'000;
  int get_threads = 8;
  // Several tasks per job: small S3 objects, and 8 local CSV files of conc_large_bytes.
  int64_t conc_small_files = 2'000;
  uint64_t conc_large_bytes = 100'000'000;
  // Freshness.
  int fresh_seconds = 60;
  int fresh_period_ms = 200;
  // CDC from PostgreSQL and from MariaDB: cdc_rows rows inserted, then updated, cdc_txn_rows ids a
  // transaction, followed by a job with the largest batch limit; cdc_default_txns such transactions
  // of inserts followed by a job with the default one (256 changes, so one transaction a task). The
  // commit-to-visible latency runs for fresh_seconds, one commit per fresh_period_ms.
  int64_t cdc_rows = 1'000'000;
  int cdc_txn_rows = 1'000;
  int cdc_default_txns = 300;
  // Discovery.
  int64_t disc_objects = 100'000;
  int disc_idle_seconds = 10;
  int disc_new_files = 5;
  // Reconciliation listing: loaded objects it lists (whole thousands, at most 10,000).
  int64_t reconcile_objects = 5'000;
  // A UNIQUE KEY table's memory: its key count after each load (a CSV file per million keys),
  // under --memory-limit key_mem_limit.
  std::vector<int64_t> key_counts = {1'000'000, 10'000'000, 25'000'000};
  std::string key_mem_limit = "2GB";
  // Memory: a backlog of mem_files CSV files of tp_file_bytes.
  int mem_files = 40;
  int mem_runs = 1;
  std::string mem_limit = "1GB";
  double mem_target_gb = 1.5;

  static BenchConfig ForMode(const std::string& mode);
};

struct BenchContext {
  BenchConfig config;
  std::string dir;  // scratch root
  testing::S3rver* s3 = nullptr;
  engine::Connection* generator = nullptr;  // in-memory DuckDB that writes data files
  std::map<DataFormat, DataSet> data_sets;  // generated event files, by format
  std::optional<PutStats> small_objects;    // set once the small objects are in s3rver

  // The event files of `format` (generated on first use).
  Result<const DataSet*> Events(DataFormat format);
  // The config.small_files small CSV objects under "small/" in kBucket (put on first use).
  Result<PutStats> SmallObjects();
  // A fresh directory under dir.
  std::string Subdir(const std::string& name);
  // A fresh data directory for a server, remembered so its log can be read afterwards.
  std::string ServerDir(const std::string& name);
  std::vector<std::string> server_dirs;  // every ServerDir, in order
};

inline constexpr char kBucket[] = "bench";
inline constexpr char kDiscoveryBucket[] = "disc";
inline constexpr char kSmallPrefix[] = "small";

// Removes a stopped server's database and work files, keeping its log.
void FreeServerData(const std::string& server_dir);
// The lines of a server's log above INFO (warnings and errors).
std::vector<std::string> ServerWarnings(const std::string& server_dir);

Result<std::vector<Figure>> RunThroughput(BenchContext& ctx);
// The same files read in place by a local job: rows/s and CPU per GB against DuckDB's load.
Result<std::vector<Figure>> RunLocalThroughput(BenchContext& ctx);
Result<std::vector<Figure>> RunSmallFiles(BenchContext& ctx);
Result<std::vector<Figure>> RunSmallFilesRgw(BenchContext& ctx);
// max_concurrent_tasks = 4 against 1, on small S3 objects and on large local files.
Result<std::vector<Figure>> RunConcurrentTasks(BenchContext& ctx);
Result<std::vector<Figure>> RunFreshness(BenchContext& ctx);
// Freshness of a local job woken by inotify (max_interval = 60).
Result<std::vector<Figure>> RunFreshnessLocalEvents(BenchContext& ctx);
// Freshness of an S3 job woken by event notifications POSTed by the bench (max_interval = 60).
Result<std::vector<Figure>> RunFreshnessS3Events(BenchContext& ctx);
// The same against a real Ceph RGW, which pushes its own notifications.
Result<std::vector<Figure>> RunFreshnessRgwEvents(BenchContext& ctx);
Result<std::vector<Figure>> RunDiscovery(BenchContext& ctx);
Result<std::vector<Figure>> RunMemory(BenchContext& ctx);
Result<std::vector<Figure>> RunRecovery(BenchContext& ctx);
Result<std::vector<Figure>> RunModels(BenchContext& ctx);
Result<std::vector<Figure>> RunUniqueMemory(BenchContext& ctx);
Result<std::vector<Figure>> RunCdc(BenchContext& ctx);
Result<std::vector<Figure>> RunCdcMysql(BenchContext& ctx);
Result<std::vector<Figure>> RunPgSink(BenchContext& ctx);
// Cluster mode: failover time after a kill -9, and 3 servers against 1 on 12 jobs.
Result<std::vector<Figure>> RunCluster(BenchContext& ctx);

}  // namespace millrace::bench
