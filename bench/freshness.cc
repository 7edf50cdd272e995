// Freshness: with max_interval = 1, a writer PUTs one small file every 200 ms; the latency of a
// file is from the end of its PUT to its rows being visible to a SELECT through the MySQL front
// end (polled every few milliseconds).
#include <cstdio>
#include <thread>

#include "scenario_util.h"

namespace millrace::bench {
namespace {

constexpr std::chrono::milliseconds kPollEvery{5};

Result<Latencies> MeasureRun(BenchContext& ctx, BenchServer& server, int run) {
  const BenchConfig& c = ctx.config;
  const std::string name = "fresh_" + std::to_string(run);
  const std::string table = "bench." + name;
  const std::string prefix = "fresh/r" + std::to_string(run);
  MR_RETURN_IF_ERROR(server.Execute("CREATE TABLE " + table + " " + kSmallColumns));
  JobSpec spec{.name = name,
               .table = table,
               .uri = std::string("s3://") + kBucket + "/" + prefix + "/*.csv",
               .format = "csv",
               .endpoint = ctx.s3->endpoint(),
               .properties = {{"max_interval", "1"}},
               .reader = {{"column_separator", ","}}};
  MR_RETURN_IF_ERROR(server.Execute(CreateJobSql(spec)));
  // The job is polling an empty prefix before the first file arrives.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));

  const int files = c.fresh_seconds * 1000 / c.fresh_period_ms;
  auto latencies = MeasureVisibility(
      {.writes = files,
       .period = std::chrono::milliseconds(c.fresh_period_ms),
       .poll_every = kPollEvery,
       .write =
           [&](int i) {
             int64_t rows = 0;
             char key[64];
             std::snprintf(key, sizeof(key), "/f%06d.csv", i);
             return ctx.s3->PutObject(kBucket, prefix + key,
                                      SmallCsvObject(c.seed + run, i, 200, 400, &rows));
           },
       .poll = [&](const std::function<void(int)>& seen) -> Status {
         MR_ASSIGN_OR_RETURN(Rows rows, server.Query("SELECT DISTINCT file_no FROM " + table));
         for (const auto& row : rows)
           seen(std::stoi(row[0]));
         return Status::Ok();
       }});
  if (!latencies.ok()) {
    MR_RETURN_IF_ERROR(server.CheckJobRunning(name));
    return latencies.status().WithContext("freshness");
  }
  MR_RETURN_IF_ERROR(server.Execute("DROP JOB WHERE jobname = '" + name + "'"));
  const Latencies l = SummarizeLatencies(*latencies);
  std::printf("  run %d: %d files, p50 %.3f s, p99 %.3f s, max %.3f s (file %zu)\n", run, files,
              l.p50, l.p99, l.max, l.worst);
  return l;
}

}  // namespace

Result<std::vector<Figure>> RunFreshness(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "fresh-server"));
  std::vector<Latencies> runs;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(Latencies l, MeasureRun(ctx, *server, run));
    runs.push_back(l);
  }
  return LatencyFigures("freshness", runs, {Target::Kind::kValueAtMost, 1.5, "<= 1.5 s"},
                        "max_interval = 1; one file every " +
                            std::to_string(ctx.config.fresh_period_ms) + " ms for " +
                            std::to_string(ctx.config.fresh_seconds) +
                            " s per run; percentiles per run, then median over runs");
}

}  // namespace millrace::bench
