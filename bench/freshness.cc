// Freshness: with max_interval = 1, a writer PUTs one small file every 200 ms; the latency of a
// file is from the end of its PUT to its rows being visible to a SELECT through the MySQL front
// end (polled every few milliseconds).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "scenario_util.h"

namespace millrace::bench {
namespace {

constexpr std::chrono::milliseconds kPollEvery{5};

struct RunLatencies {
  double p50 = 0;
  double p99 = 0;
  double max = 0;
};

Result<RunLatencies> MeasureRun(BenchContext& ctx, BenchServer& server, int run) {
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
  std::vector<SteadyTime> put_done(static_cast<size_t>(files));
  std::vector<SteadyTime> visible(static_cast<size_t>(files));
  std::vector<bool> seen(static_cast<size_t>(files), false);
  Status writer_status;
  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    const SteadyTime start = Now();
    for (int i = 0; i < files; ++i) {
      std::this_thread::sleep_until(start + i * std::chrono::milliseconds(c.fresh_period_ms));
      int64_t rows = 0;
      char key[64];
      std::snprintf(key, sizeof(key), "/f%06d.csv", i);
      Status status = ctx.s3->PutObject(kBucket, prefix + key,
                                        SmallCsvObject(c.seed + run, i, 200, 400, &rows));
      put_done[static_cast<size_t>(i)] = Now();
      if (!status.ok()) {
        writer_status = status;
        break;
      }
    }
    writer_done.store(true);
  });

  // Files are loaded in key order and each task commits at once, but every file is tracked
  // on its own so nothing relies on that.
  int seen_count = 0;
  Status poll_status;
  const SteadyTime deadline =
      Now() + std::chrono::seconds(c.fresh_seconds) + std::chrono::seconds(60);
  while (seen_count < files && Now() < deadline) {
    auto rows = server.Query("SELECT DISTINCT file_no FROM " + table);
    const SteadyTime at = Now();
    if (!rows.ok()) {
      poll_status = rows.status();
      break;
    }
    for (const auto& row : *rows) {
      const size_t i = static_cast<size_t>(std::stoll(row[0]));
      if (i < seen.size() && !seen[i]) {
        seen[i] = true;
        visible[i] = at;
        ++seen_count;
      }
    }
    if (writer_done.load() && !writer_status.ok()) break;
    std::this_thread::sleep_for(kPollEvery);
  }
  writer.join();
  MR_RETURN_IF_ERROR(writer_status);
  MR_RETURN_IF_ERROR(poll_status);
  if (seen_count < files) {
    MR_RETURN_IF_ERROR(server.CheckJobRunning(name));
    return Status::DeadlineExceeded("freshness: only " + std::to_string(seen_count) + " of " +
                                    std::to_string(files) + " files became visible");
  }
  std::vector<double> latencies;
  for (size_t i = 0; i < put_done.size(); ++i) {
    latencies.push_back(SecondsBetween(put_done[i], visible[i]));
  }
  MR_RETURN_IF_ERROR(server.Execute("DROP JOB WHERE jobname = '" + name + "'"));
  const size_t worst =
      static_cast<size_t>(std::max_element(latencies.begin(), latencies.end()) - latencies.begin());
  std::printf("  run %d: %d files, p50 %.3f s, p99 %.3f s, max %.3f s (file %zu)\n", run, files,
              Percentile(latencies, 50), Percentile(latencies, 99), latencies[worst], worst);
  return RunLatencies{Percentile(latencies, 50), Percentile(latencies, 99),
                      Percentile(latencies, 100)};
}

}  // namespace

Result<std::vector<Figure>> RunFreshness(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "fresh-server"));
  std::vector<double> p50, p99, max;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(RunLatencies r, MeasureRun(ctx, *server, run));
    p50.push_back(r.p50);
    p99.push_back(r.p99);
    max.push_back(r.max);
  }
  const std::string note = "max_interval = 1; one file every " +
                           std::to_string(ctx.config.fresh_period_ms) + " ms for " +
                           std::to_string(ctx.config.fresh_seconds) +
                           " s per run; percentiles per run, then median over runs";
  return std::vector<Figure>{
      {.name = "freshness p50", .unit = "s", .value = Summarize(p50), .note = note},
      {.name = "freshness p99",
       .unit = "s",
       .value = Summarize(p99),
       .target = {Target::Kind::kValueAtMost, 1.5, "<= 1.5 s"},
       .note = note},
      {.name = "freshness max", .unit = "s", .value = Summarize(max), .note = note}};
}

}  // namespace millrace::bench
