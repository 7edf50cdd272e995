// A UNIQUE KEY table's memory: a streaming job loads key_counts[i] distinct keys (CSV event
// files of about a million rows each, in s3rver) into an empty UNIQUE KEY table of a server
// started with --memory-limit key_mem_limit; the server's peak resident set during the load is
// reported against the key count. DuckDB keeps a primary key's ART index in memory: this is
// what that costs as the table grows (docs/doris.md).
#include <cstdio>

#include "scenario_util.h"

namespace millrace::bench {

Result<std::vector<Figure>> RunUniqueMemory(BenchContext& ctx) {
  const BenchConfig& c = ctx.config;
  constexpr int64_t kRowsPerFile = 1'000'000;
  constexpr uint64_t kBytesPerRow = 120;  // about, for the events rows (data_gen.cc)
  std::vector<Figure> figures;
  for (const int64_t keys : c.key_counts) {
    const std::string label = std::to_string(keys);
    const int files = static_cast<int>(std::max<int64_t>(1, keys / kRowsPerFile));
    MR_ASSIGN_OR_RETURN(DataSet set,
                        GenerateDataSet(*ctx.generator, DataFormat::kCsv, files,
                                        static_cast<uint64_t>(keys / files) * kBytesPerRow, c.seed,
                                        ctx.Subdir("keys-" + label)));
    std::vector<std::pair<std::string, std::string>> uploads;
    for (size_t i = 0; i < set.files.size(); ++i) {
      char key[64];
      std::snprintf(key, sizeof(key), "keys-%s/part-%04zu.csv", label.c_str(), i);
      uploads.emplace_back(set.files[i].path, key);
    }
    MR_RETURN_IF_ERROR(UploadFiles(*ctx.s3, kBucket, uploads, 2));

    MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "keys-server-" + label,
                                                      {"--memory-limit", c.key_mem_limit}));
    const std::string name = "keys_" + label;
    JobSpec spec{.name = name,
                 .table = "bench." + name,
                 .uri = std::string("s3://") + kBucket + "/keys-" + label + "/*.csv",
                 .format = "csv",
                 .endpoint = ctx.s3->endpoint(),
                 .reader = Info(DataFormat::kCsv).doris_params};
    const std::string columns =
        "(`id` BIGINT, `ts` DATETIME, `user_id` INT, `kind` STRING, `amount` DOUBLE, `url` "
        "STRING, `note` STRING) UNIQUE KEY(`id`)";
    double seconds = 0;
    MR_ASSIGN_OR_RETURN(const uint64_t peak, PeakRssDuring(*server, [&]() -> Status {
                          MR_ASSIGN_OR_RETURN(seconds,
                                              LoadWithJob(*server, spec, columns, set.total_rows,
                                                          std::chrono::seconds(3600)));
                          return Status::Ok();
                        }));
    server.reset();
    FreeServerData(ctx.server_dirs.back());
    const std::string note = std::to_string(set.total_rows) + " keys in " +
                             std::to_string(set.files.size()) + " CSV files, " +
                             HumanBytes(set.total_bytes) + ", into an empty UNIQUE KEY table; " +
                             "--memory-limit " + c.key_mem_limit;
    figures.push_back({.name = "peak RSS, UNIQUE KEY load of " + label + " keys",
                       .unit = "GB",
                       .value = Summarize({static_cast<double>(peak) / 1e9}),
                       .note = note});
    figures.push_back({.name = "UNIQUE KEY load of " + label + " keys",
                       .unit = "rows/s",
                       .value = Summarize({static_cast<double>(set.total_rows) / seconds}),
                       .note = note});
  }
  return figures;
}

}  // namespace millrace::bench
