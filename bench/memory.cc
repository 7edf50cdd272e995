// Memory: the server's peak resident set while a streaming job loads a backlog of CSV files much
// larger than its DuckDB memory limit (--memory-limit). RSS is sampled every 50 ms and the
// kernel's high-water mark (VmHWM) read at the end; the larger is reported.
#include <cstdio>

#include "scenario_util.h"

namespace millrace::bench {

Result<std::vector<Figure>> RunMemory(BenchContext& ctx) {
  const BenchConfig& c = ctx.config;
  MR_ASSIGN_OR_RETURN(const DataSet* csv, ctx.Events(DataFormat::kCsv));
  // The backlog repeats the CSV event files under new keys (content does not matter here).
  std::vector<std::pair<std::string, std::string>> uploads;
  uint64_t backlog_bytes = 0;
  int64_t backlog_rows = 0;
  for (int i = 0; i < c.mem_files; ++i) {
    const DataFile& f = csv->files[static_cast<size_t>(i) % csv->files.size()];
    char key[64];
    std::snprintf(key, sizeof(key), "mem/part-%04d.csv", i);
    uploads.emplace_back(f.path, key);
    backlog_bytes += f.bytes;
    backlog_rows += f.rows;
  }
  MR_RETURN_IF_ERROR(UploadFiles(*ctx.s3, kBucket, uploads, 2));

  std::vector<double> peak_gb, rates;
  for (int run = 1; run <= c.mem_runs; ++run) {
    MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "mem-server-" + std::to_string(run),
                                                      {"--memory-limit", c.mem_limit}));
    const std::string name = "mem_" + std::to_string(run);
    JobSpec spec{.name = name,
                 .table = "bench." + name,
                 .uri = std::string("s3://") + kBucket + "/mem/*.csv",
                 .format = "csv",
                 .endpoint = ctx.s3->endpoint(),
                 .reader = Info(DataFormat::kCsv).doris_params};
    double seconds = 0;
    MR_ASSIGN_OR_RETURN(const uint64_t peak, PeakRssDuring(*server, [&]() -> Status {
                          MR_ASSIGN_OR_RETURN(
                              seconds, LoadWithJob(*server, spec, kEventsColumns, backlog_rows,
                                                   std::chrono::seconds(1200)));
                          return Status::Ok();
                        }));
    peak_gb.push_back(static_cast<double>(peak) / 1e9);
    rates.push_back(static_cast<double>(backlog_bytes) / kMB / seconds);
    // The next run starts from an empty data directory; free this one's disk now.
    server.reset();
    FreeServerData(ctx.server_dirs.back());
  }
  const std::string note = "backlog of " + std::to_string(c.mem_files) + " CSV files, " +
                           HumanBytes(backlog_bytes) + ", " + std::to_string(backlog_rows) +
                           " rows, --memory-limit " + c.mem_limit + ", default job properties";
  char target[32];
  std::snprintf(target, sizeof(target), "<= %.1f GB", c.mem_target_gb);
  return std::vector<Figure>{
      {.name = "peak RSS loading backlog",
       .unit = "GB",
       .value = Summarize(peak_gb),
       .target = {Target::Kind::kValueAtMost, c.mem_target_gb, target},
       .note = note},
      {.name = "backlog load rate", .unit = "MB/s", .value = Summarize(rates), .note = note}};
}

}  // namespace millrace::bench
