// Throughput: event files of about 100 MB in s3rver, loaded by a streaming job with default
// properties into an empty table, against DuckDB loading the same files from local disk in one
// INSERT INTO ... SELECT * FROM read_xxx([...]) in this process.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "common/clock.h"
#include "s3/s3_client.h"
#include "scenario_util.h"

namespace millrace::bench {
namespace {

// Seconds our S3 client takes to download the files under `keys` to local disk,
// kDownloadAloneParallelism at a time: the transfer on its own.
Result<double> DownloadSeconds(BenchContext& ctx, const std::vector<std::string>& keys,
                               const std::string& dir) {
  MR_ASSIGN_OR_RETURN(auto client, s3::S3Client::Create(ctx.s3->Config(), Clock::Real()));
  const SteadyTime start = Now();
  MR_RETURN_IF_ERROR(ParallelFor(keys.size(), kDownloadAloneParallelism, [&](size_t i) {
    s3::GetRequest request{.bucket = kBucket, .key = keys[i]};
    return client->GetObjectToFile(request, dir + "/" + std::to_string(i)).status();
  }));
  const double seconds = SecondsSince(start);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return seconds;
}

}  // namespace

Result<std::vector<Figure>> RunThroughput(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "throughput-server"));
  const std::string baseline_dir = ctx.Subdir("throughput-baseline");
  const std::string download_dir = ctx.Subdir("throughput-download");
  std::vector<Figure> figures;
  for (DataFormat format : {DataFormat::kCsv, DataFormat::kParquet, DataFormat::kJson}) {
    const FormatInfo& info = Info(format);
    MR_ASSIGN_OR_RETURN(const DataSet* set, ctx.Events(format));
    const std::string prefix = "tp/" + info.doris_format;
    std::vector<std::pair<std::string, std::string>> uploads;
    std::vector<std::string> keys;
    for (const DataFile& f : set->files) {
      keys.push_back(prefix + "/" + std::filesystem::path(f.path).filename().string());
      uploads.emplace_back(f.path, keys.back());
    }
    MR_RETURN_IF_ERROR(UploadFiles(*ctx.s3, kBucket, uploads, 2));

    const double gb = static_cast<double>(set->total_bytes) / 1e9;
    std::vector<double> mb, rows, base_mb, base_rows, download_mb, sequential_mb;
    std::vector<double> cpu_per_gb, base_cpu_per_gb, store_cpu_per_gb;
    for (int run = 1; run <= ctx.config.runs; ++run) {
      // Each measurement starts with the writes of the one before on disk: the kernel's
      // write-back of a previous gigabyte must not slow the next one down.
      ::sync();
      MR_ASSIGN_OR_RETURN(Measured base, DuckDbLoad(*set, baseline_dir));
      base_mb.push_back(static_cast<double>(set->total_bytes) / kMB / base.seconds);
      base_rows.push_back(static_cast<double>(set->total_rows) / base.seconds);
      base_cpu_per_gb.push_back(base.cpu_seconds / gb);

      ::sync();
      MR_ASSIGN_OR_RETURN(double download_seconds, DownloadSeconds(ctx, keys, download_dir));
      download_mb.push_back(static_cast<double>(set->total_bytes) / kMB / download_seconds);
      sequential_mb.push_back(static_cast<double>(set->total_bytes) / kMB /
                              (download_seconds + base.seconds));

      const std::string name = "tp_" + info.doris_format + "_" + std::to_string(run);
      const JobSpec spec = FormatJobSpec(ctx, name, prefix, info);
      ::sync();
      const double server_cpu = CpuSeconds(server->pid());
      const double store_cpu = CpuSeconds(ctx.s3->pid());
      double server_used = 0;
      double store_used = 0;
      MR_ASSIGN_OR_RETURN(double seconds,
                          LoadWithJob(*server, spec, kEventsColumns, set->total_rows,
                                      std::chrono::seconds(900), [&] {
                                        server_used = CpuSeconds(server->pid()) - server_cpu;
                                        store_used = CpuSeconds(ctx.s3->pid()) - store_cpu;
                                      }));
      cpu_per_gb.push_back((server_used + store_used) / gb);
      store_cpu_per_gb.push_back(store_used / gb);
      mb.push_back(static_cast<double>(set->total_bytes) / kMB / seconds);
      rows.push_back(static_cast<double>(set->total_rows) / seconds);
    }
    // Where a job's time goes: the download of a batch overlaps its load, on the same cores.
    auto seconds_per_gb = [](const std::vector<double>& mb_per_s) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%.1f s", 1000.0 / Summarize(mb_per_s).median);
      return std::string(buf);
    };
    const std::string size_note =
        std::to_string(set->files.size()) + " files, " + HumanBytes(set->total_bytes) + ", " +
        std::to_string(set->total_rows) + " rows; per GB (medians): job " + seconds_per_gb(mb) +
        ", S3 download alone " + seconds_per_gb(download_mb) + ", DuckDB baseline " +
        seconds_per_gb(base_mb);
    const Target ratio = Target::RatioAtLeast(0.8);
    const std::string what = "DuckDB " +
                             info.duckdb_reader.substr(0, info.duckdb_reader.find('(')) +
                             ", local disk, one INSERT";
    auto compared = [&](const std::string& what_per_second, const std::string& unit,
                        const std::vector<double>& values, const std::vector<double>& baseline) {
      figures.push_back({.name = info.name + " " + what_per_second,
                         .unit = unit,
                         .value = Summarize(values),
                         .baseline = Summarize(baseline),
                         .baseline_what = what,
                         .target = ratio,
                         .note = size_note});
    };
    compared("throughput", "MB/s", mb, base_mb);
    compared("rows/s", "rows/s", rows, base_rows);
    char cpu_note[320];
    std::snprintf(cpu_note, sizeof(cpu_note),
                  "CPU time of the Millrace server and of s3rver while the job loads (s3rver: "
                  "%.1f core-s/GB), against the baseline process's; with every core busy, "
                  "throughput ratio <= baseline CPU / job CPU = %.2f on this machine",
                  Summarize(store_cpu_per_gb).median,
                  Summarize(base_cpu_per_gb).median / Summarize(cpu_per_gb).median);
    figures.push_back({.name = info.name + " CPU per GB",
                       .unit = "core-s/GB",
                       .value = Summarize(cpu_per_gb),
                       .baseline = Summarize(base_cpu_per_gb),
                       .baseline_what = what,
                       .note = cpu_note});
    figures.push_back({.name = info.name + " vs download, then load",
                       .unit = "MB/s",
                       .value = Summarize(mb),
                       .baseline = Summarize(sequential_mb),
                       .baseline_what = "S3 download alone + DuckDB baseline, one after the other",
                       .note = "the job against the same two steps done in sequence: above 1, "
                               "the job overlaps the transfer with the load"});
    figures.push_back({.name = info.name + " S3 download alone",
                       .unit = "MB/s",
                       .value = Summarize(download_mb),
                       .note = "the same objects fetched to local files by our S3 client, " +
                               std::to_string(kDownloadAloneParallelism) +
                               " at a time: the store's transfer rate, which a job's download "
                               "overlaps with loading"});
  }
  return figures;
}

}  // namespace millrace::bench
