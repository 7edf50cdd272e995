// Local throughput: the throughput scenario's event files, read in place by a local job (the
// server's --local-root is where they were generated), against DuckDB loading the same files in
// one INSERT INTO ... SELECT * FROM read_xxx([...]) in this process. No object store takes CPU
// here: the job's CPU per GB is the server's alone, against the baseline process's. Each run
// measures the baseline and then the job, and the ratios are the median of the runs' own
// (Figure::run_ratios), over config.local_runs runs.
#include <unistd.h>

#include <filesystem>

#include "scenario_util.h"

namespace millrace::bench {

Result<std::vector<Figure>> RunLocalThroughput(BenchContext& ctx) {
  constexpr DataFormat kFormats[] = {DataFormat::kCsv, DataFormat::kParquet, DataFormat::kJson};
  std::vector<std::string> dirs;  // each format's files, a --local-root of the server
  std::vector<std::string> args;
  for (DataFormat format : kFormats) {
    MR_ASSIGN_OR_RETURN(const DataSet* set, ctx.Events(format));
    dirs.push_back(std::filesystem::path(set->files.front().path).parent_path().string());
    args.insert(args.end(), {"--local-root", dirs.back()});
  }
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "local-throughput-server", args));
  const std::string baseline_dir = ctx.Subdir("local-throughput-baseline");
  std::vector<Figure> figures;
  for (size_t f = 0; f < std::size(kFormats); ++f) {
    const FormatInfo& info = Info(kFormats[f]);
    MR_ASSIGN_OR_RETURN(const DataSet* set, ctx.Events(kFormats[f]));
    const double gb = static_cast<double>(set->total_bytes) / 1e9;
    std::vector<double> rows, base_rows, cpu_per_gb, base_cpu_per_gb;
    for (int run = 1; run <= ctx.config.local_runs; ++run) {
      ::sync();
      MR_ASSIGN_OR_RETURN(Measured base, DuckDbLoad(*set, baseline_dir));
      base_rows.push_back(static_cast<double>(set->total_rows) / base.seconds);
      base_cpu_per_gb.push_back(base.cpu_seconds / gb);

      const std::string name = "ltp_" + info.doris_format + "_" + std::to_string(run);
      const JobSpec spec{.name = name,
                         .table = "bench." + name,
                         .format = info.doris_format,
                         .local_path = dirs[f] + "/*" + info.extension,
                         .reader = info.doris_params};
      ::sync();
      const double server_cpu = CpuSeconds(server->pid());
      double server_used = 0;
      MR_ASSIGN_OR_RETURN(
          double seconds,
          LoadWithJob(*server, spec, kEventsColumns, set->total_rows, std::chrono::seconds(900),
                      [&] { server_used = CpuSeconds(server->pid()) - server_cpu; }));
      cpu_per_gb.push_back(server_used / gb);
      rows.push_back(static_cast<double>(set->total_rows) / seconds);
    }
    const std::string what = "DuckDB " +
                             info.duckdb_reader.substr(0, info.duckdb_reader.find('(')) +
                             ", the same local files, one INSERT";
    const std::string size_note = std::to_string(set->files.size()) + " files, " +
                                  HumanBytes(set->total_bytes) + ", " +
                                  std::to_string(set->total_rows) + " rows, read in place";
    figures.push_back({.name = info.name + " local job rows/s",
                       .unit = "rows/s",
                       .value = Summarize(rows),
                       .baseline = Summarize(base_rows),
                       .baseline_what = what,
                       .target = Target::RatioAtLeast(0.8),
                       .note = size_note,
                       .run_ratios = SummarizeRunRatios(rows, base_rows)});
    figures.push_back({.name = info.name + " local job CPU per GB",
                       .unit = "core-s/GB",
                       .value = Summarize(cpu_per_gb),
                       .baseline = Summarize(base_cpu_per_gb),
                       .baseline_what = what,
                       .target = Target::RatioAtMost(1.1),
                       .note = "CPU time of the Millrace server while the job loads, against "
                               "the baseline process's",
                       .run_ratios = SummarizeRunRatios(cpu_per_gb, base_cpu_per_gb)});
  }
  return figures;
}

}  // namespace millrace::bench
