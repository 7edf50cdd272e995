// Small files: many objects of 1 to 4 KB loaded by a streaming job with default properties,
// against the same objects fetched with parallel raw GETs by our S3 client (the store's own
// ceiling).
#include "common/clock.h"
#include "s3/s3_client.h"
#include "scenario_util.h"

namespace millrace::bench {
namespace {

Result<double> RawGetSeconds(BenchContext& ctx, int64_t files) {
  MR_ASSIGN_OR_RETURN(auto client, s3::S3Client::Create(ctx.s3->Config(), Clock::Real()));
  const SteadyTime start = Now();
  MR_RETURN_IF_ERROR(
      ParallelFor(static_cast<size_t>(files), ctx.config.get_threads, [&](size_t i) -> Status {
        s3::GetRequest request{.bucket = kBucket,
                               .key = SpreadKey(kSmallPrefix, static_cast<int64_t>(i))};
        return client->GetObject(request, [](std::string_view) { return Status::Ok(); }).status();
      }));
  return SecondsSince(start);
}

}  // namespace

Result<std::vector<Figure>> RunSmallFiles(BenchContext& ctx) {
  const int64_t files = ctx.config.small_files;
  MR_ASSIGN_OR_RETURN(PutStats put, ctx.SmallObjects());
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "small-server"));
  std::vector<double> rates, base_rates;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(double base_seconds, RawGetSeconds(ctx, files));
    base_rates.push_back(static_cast<double>(files) / base_seconds);

    const std::string name = "small_" + std::to_string(run);
    JobSpec spec{.name = name,
                 .table = "bench." + name,
                 .uri = std::string("s3://") + kBucket + "/" + kSmallPrefix + "/*/*.csv",
                 .format = "csv",
                 .endpoint = ctx.s3->endpoint(),
                 .reader = {{"column_separator", ","}}};
    MR_ASSIGN_OR_RETURN(double seconds, LoadWithJob(*server, spec, kSmallColumns, put.rows,
                                                    std::chrono::seconds(1200)));
    rates.push_back(static_cast<double>(files) / seconds);
  }
  return std::vector<Figure>{
      {.name = "small files",
       .unit = "files/s",
       .value = Summarize(rates),
       .baseline = Summarize(base_rates),
       .baseline_what =
           "raw GETs, our S3 client, " + std::to_string(ctx.config.get_threads) + " threads",
       // Issue 43: a job loads small files at no less than 0.8 of the raw-GET rate.
       .target = Target::RatioAtLeast(0.8),
       .note = std::to_string(files) + " objects of 1-4 KB (" + HumanBytes(put.bytes) + ", " +
               std::to_string(put.rows) + " rows)"}};
}

}  // namespace millrace::bench
