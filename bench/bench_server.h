// Benchmark support: the real `millrace serve` binary with a MySQL session to it, and the
// job SQL the scenarios create.
//
// Contract
// - BenchServer::Start runs the server (tests/server's ServerProcess: ephemeral ports, the data
//   directory given) and connects with MariaDB Connector/C, as a client would.
// - Query/Execute return the server's error as a Status naming the statement.
// - WaitForValue polls a query of one integer until it reaches the value wanted (WaitForRows:
//   `SELECT count(*)` until the table holds the rows wanted); it fails early when the job
//   paused (with the job's ErrorMsg), when `abort` returns an error, or when the timeout passes.
// - Kill() is kill -9: nothing is flushed; Start on the same directory recovers.
// - Thread-safety: one BenchServer is used by one thread at a time. Start it from the thread
//   that lives longest (the child dies with the thread that spawned it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "common/result.h"
#include "server/mysql_test_util.h"
#include "testing/s3rver.h"

namespace millrace::bench {

using Rows = std::vector<std::vector<std::string>>;
using KeyValues = std::vector<std::pair<std::string, std::string>>;

class BenchServer {
 public:
  static Result<std::unique_ptr<BenchServer>> Start(const std::string& data_dir,
                                                    const std::vector<std::string>& args = {});

  Status Execute(const std::string& sql);
  Result<Rows> Query(const std::string& sql);
  // The first column of the first row as an integer.
  Result<int64_t> QueryInt(const std::string& sql);

  // Polls (paced) until `table` holds `rows` rows; returns when they were seen.
  Result<SteadyTime> WaitForRows(const std::string& table, int64_t rows, const std::string& job,
                                 std::chrono::seconds timeout,
                                 std::chrono::milliseconds poll = std::chrono::milliseconds(50));
  // Polls `sql` (one integer) every `poll` until it is at least `want`; returns when it was.
  // `abort`, when given, is asked before each poll: its error ends the wait (a writer that
  // failed, whose rows will never come). `paced`, for a value that grows from 0 at a steady
  // rate (WaitForRows): each poll is a statement the measured server runs (every 50 ms, 5% of
  // its CPU during a small-files job), so far from `want` the wait is a quarter of the time the
  // rate seen so far still needs (at most a second), and `poll` near it.
  Result<SteadyTime> WaitForValue(const std::string& sql, int64_t want, const std::string& job,
                                  std::chrono::seconds timeout,
                                  std::chrono::milliseconds poll = std::chrono::milliseconds(50),
                                  const std::function<Status()>& abort = nullptr,
                                  bool paced = false);
  // OK unless the job is PAUSED (then its ErrorMsg) or missing.
  Status CheckJobRunning(const std::string& job);

  pid_t pid() const { return process_->pid(); }
  uint16_t http_port() const { return process_->http_port(); }
  uint64_t RssBytes() const { return process_->RssBytes(); }
  uint64_t PeakRssBytes() const;
  // SIGKILL, then waits for the process to die.
  void Kill();

 private:
  BenchServer() = default;
  std::unique_ptr<server::ServerProcess> process_;
  server::MysqlPtr mysql_;
};

// CREATE JOB name ON STREAMING ... DO INSERT INTO table SELECT * FROM S3(...), or local(...)
// when `local_path` is given.
struct JobSpec {
  std::string name;
  std::string table;
  std::string uri;  // s3://bucket/pattern
  std::string format;
  std::string endpoint;
  // A file_path pattern under one of the server's --local-root: the job reads local files
  // (uri and endpoint unused).
  std::string local_path;
  KeyValues properties;  // job properties; empty: the defaults
  KeyValues reader;      // more S3() parameters (column_separator, read_json_by_line, ...)
  // The store's credentials (S3 jobs): s3rver's unless given.
  std::string access_key = testing::S3rver::kAccessKey;
  std::string secret_key = testing::S3rver::kSecretKey;
};
std::string CreateJobSql(const JobSpec& spec);

// CREATE JOB name ON STREAMING PROPERTIES (...) DO INSERT INTO table SELECT * FROM
// cdc_stream(...) (docs/cdc.md).
struct CdcJobSpec {
  std::string name;
  std::string table;
  KeyValues properties;  // job properties; empty: the defaults
  KeyValues source;      // cdc_stream's parameters: type, jdbc_url, user, table, offset, ...
};
std::string CreateCdcJobSql(const CdcJobSpec& spec);

}  // namespace millrace::bench
