// Helpers shared by the scenarios (internal to bench/).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench_server.h"
#include "scenarios.h"

namespace millrace::bench {

inline constexpr double kMB = 1e6;
// JobServiceConfig::download_parallelism as `millrace serve` sets it (the default).
inline constexpr int kJobDownloadParallelism = 4;

// A server on a fresh data directory `name` under the scratch root, with database `bench`.
Result<std::unique_ptr<BenchServer>> StartBenchServer(BenchContext& ctx, const std::string& name,
                                                      const std::vector<std::string>& args = {});

// Creates spec.table with `columns`, creates the job, waits until the table holds `rows` rows
// and checks it holds no more; then drops the job and the table. Returns the seconds from
// CREATE JOB to the rows being visible.
Result<double> LoadWithJob(BenchServer& server, const JobSpec& spec, const std::string& columns,
                           int64_t rows, std::chrono::seconds timeout);

}  // namespace millrace::bench
