// Small files: many objects of 1 to 4 KB loaded by a streaming job with default properties,
// against the same objects fetched with parallel raw GETs by our S3 client (the store's own
// ceiling), with every process on every CPU; and the same pair with the CPUs split between
// s3rver and its clients (bench_util.h, CpuSplit), which shows what the store's sharing of the
// cores costs the job.
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
  // Each run measures the raw GETs and then the job twice: with s3rver on the same cores as
  // the server and this process, and with the CPUs split between them (CpuSplit), nearer a
  // store on machines of its own (though the server then has half the CPUs).
  enum Placement { kShared, kSplit };
  std::vector<double> rates[2], base_rates[2];
  for (int run = 1; run <= ctx.config.runs; ++run) {
    for (Placement placement : {kShared, kSplit}) {
      std::unique_ptr<CpuSplit> split;
      if (placement == kSplit) {
        MR_ASSIGN_OR_RETURN(split, CpuSplit::Apply(ctx.s3->pid(), server->pid()));
      }
      MR_ASSIGN_OR_RETURN(double base_seconds, RawGetSeconds(ctx, files));
      base_rates[placement].push_back(static_cast<double>(files) / base_seconds);

      const std::string name =
          std::string(placement == kSplit ? "small_split_" : "small_") + std::to_string(run);
      JobSpec spec{.name = name,
                   .table = "bench." + name,
                   .uri = std::string("s3://") + kBucket + "/" + kSmallPrefix + "/*/*.csv",
                   .format = "csv",
                   .endpoint = ctx.s3->endpoint(),
                   .reader = {{"column_separator", ","}}};
      MR_ASSIGN_OR_RETURN(double seconds, LoadWithJob(*server, spec, kSmallColumns, put.rows,
                                                      std::chrono::seconds(1200)));
      rates[placement].push_back(static_cast<double>(files) / seconds);
      if (split) MR_RETURN_IF_ERROR(split->Undo());
    }
  }
  const std::string what =
      "raw GETs, our S3 client, " + std::to_string(ctx.config.get_threads) + " threads";
  const std::string objects = std::to_string(files) + " objects of 1-4 KB (" +
                              HumanBytes(put.bytes) + ", " + std::to_string(put.rows) + " rows)";
  return std::vector<Figure>{
      {.name = "small files",
       .unit = "files/s",
       .value = Summarize(rates[kShared]),
       .baseline = Summarize(base_rates[kShared]),
       .baseline_what = what,
       // Issue 43: a job loads small files at no less than 0.8 of the raw-GET rate.
       .target = Target::RatioAtLeast(0.8),
       .note = objects + "; s3rver, the server and the raw GETs on every CPU",
       .run_ratios = SummarizeRunRatios(rates[kShared], base_rates[kShared])},
      {.name = "small files, store on CPUs of its own",
       .unit = "files/s",
       .value = Summarize(rates[kSplit]),
       .baseline = Summarize(base_rates[kSplit]),
       .baseline_what = what,
       .note = objects + "; s3rver on half the CPUs, the server and the raw GETs on the others",
       .run_ratios = SummarizeRunRatios(rates[kSplit], base_rates[kSplit])}};
}

}  // namespace millrace::bench
