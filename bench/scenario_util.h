// Helpers shared by the scenarios (internal to bench/).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench_server.h"
#include "scenarios.h"

namespace millrace::bench {

inline constexpr double kMB = 1e6;
// Downloads at once in the "S3 download alone" figures: what the store can deliver. (A job
// downloads files of ~100 MB one at a time, overlapped with loading the ones before.)
inline constexpr int kDownloadAloneParallelism = 4;

// A job `name` loading the objects under `prefix` of the bench bucket as `info`'s format into
// table bench.<name>.
JobSpec FormatJobSpec(const BenchContext& ctx, const std::string& name, const std::string& prefix,
                      const FormatInfo& info);

// A server on a fresh data directory `name` under the scratch root, with database `bench`.
Result<std::unique_ptr<BenchServer>> StartBenchServer(BenchContext& ctx, const std::string& name,
                                                      const std::vector<std::string>& args = {});

// Creates spec.table with `columns`, creates the job, waits until the table holds `rows` rows
// and checks it holds no more; then drops the job and the table. Returns the seconds from
// CREATE JOB to the rows being visible. `on_loaded`, when given, runs as soon as they are (before
// the job and table are dropped).
Result<double> LoadWithJob(BenchServer& server, const JobSpec& spec, const std::string& columns,
                           int64_t rows, std::chrono::seconds timeout,
                           const std::function<void()>& on_loaded = nullptr);

// Runs `work` while sampling `server`'s resident set every 50 ms; returns the larger of the
// samples' peak and the kernel's high-water mark (VmHWM) read after it, in bytes.
Result<uint64_t> PeakRssDuring(BenchServer& server, const std::function<Status()>& work);

struct Measured {
  double seconds = 0;
  double cpu_seconds = 0;  // of every process doing the work
};

// How DuckDB loads a data set on its own: the table it creates and the INSERT it runs.
struct DuckDbLoadShape {
  std::string columns = kEventsColumns;  // the table's columns and constraints, parenthesized
  std::string insert = "INSERT INTO";    // or "INSERT OR REPLACE INTO"
  std::string on_conflict;               // an ON CONFLICT clause ending the INSERT, or ""
};
// Time and CPU DuckDB takes to load `set` from local disk into a fresh database file under
// `dir`, in one statement over every file (in this process); the table must then hold
// set.distinct_ids rows.
Result<Measured> DuckDbLoad(const DataSet& set, const std::string& dir,
                            const DuckDbLoadShape& shape = {});

// The CPU DuckDB alone takes to apply a change stream's inserts, in core-s per million rows, in
// this process: ids 1..rows of (id INTEGER, name VARCHAR, qty INTEGER, ts TIMESTAMP), `batch`
// rows a transaction, each batch staged first (not counted) as the texts a stream delivers
// (the timestamp as '... +00', cast through TIMESTAMPTZ as a CDC job's SELECT does), then
// written by one statement and committed durably into a fresh database file under `dir`; the
// final CHECKPOINT counted too. `keyed`: into a table with the PRIMARY KEY, by INSERT ... ON
// CONFLICT DO UPDATE (DuckDB's own upsert, its index maintained per row); otherwise into a
// table without it, by DELETE of the batch's keys (a join) and INSERT. The table must then
// hold `rows` rows.
Result<double> DuckDbApplyCpuPerMillion(const std::string& dir, int64_t rows, int64_t batch,
                                        bool keyed);

}  // namespace millrace::bench
