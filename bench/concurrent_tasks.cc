// Several tasks per job (issue 44): the same files loaded by a job with max_concurrent_tasks = 4
// against one with 1 (the default), measured in the same run: small objects from S3 (straight,
// and through a proxy that holds each GET 20 ms before its first byte, as a distant store
// does), and large local files read in place. Both jobs have the same properties but that one.
#include <filesystem>

#include "scenario_util.h"
#include "testing/fault_proxy.h"

namespace millrace::bench {
namespace {

constexpr char kConcurrentSmallPrefix[] = "conc";
constexpr int kLargeFiles = 8;
constexpr std::chrono::milliseconds kFirstByte{20};

// Seconds for the job of `spec` with max_concurrent_tasks = `tasks`.
Result<double> LoadWithTasks(BenchServer& server, JobSpec spec, int tasks,
                             const std::string& columns, int64_t rows) {
  spec.name += "_" + std::to_string(tasks);
  spec.table += "_" + std::to_string(tasks);
  spec.properties.emplace_back("max_concurrent_tasks", std::to_string(tasks));
  return LoadWithJob(server, spec, columns, rows, std::chrono::seconds(1200));
}

}  // namespace

Result<std::vector<Figure>> RunConcurrentTasks(BenchContext& ctx) {
  const int64_t small = ctx.config.conc_small_files;
  MR_ASSIGN_OR_RETURN(PutStats put, PutSmallObjects(*ctx.s3, kBucket, kConcurrentSmallPrefix, 0,
                                                    small, ctx.config.seed, 1024, 4096, 8));
  const std::string large_dir = ctx.Subdir("concurrent-large");
  MR_ASSIGN_OR_RETURN(DataSet large,
                      GenerateDataSet(*ctx.generator, DataFormat::kCsv, kLargeFiles,
                                      ctx.config.conc_large_bytes, ctx.config.seed, large_dir));
  const FormatInfo& csv = Info(DataFormat::kCsv);
  MR_ASSIGN_OR_RETURN(auto server,
                      StartBenchServer(ctx, "concurrent-server", {"--local-root", large_dir}));

  // s3.max_batch_files 100: the 2,000 objects are 20 batches (at the default 256, 8).
  const JobSpec small_spec{
      .name = "conc_small",
      .table = "bench.conc_small",
      .uri = std::string("s3://") + kBucket + "/" + kConcurrentSmallPrefix + "/*/*.csv",
      .format = "csv",
      .endpoint = ctx.s3->endpoint(),
      .properties = {{"s3.max_batch_files", "100"}},
      .reader = {{"column_separator", ","}}};
  // One file a task: 8 tasks' worth of batches.
  const JobSpec large_spec{.name = "conc_large",
                           .table = "bench.conc_large",
                           .format = csv.doris_format,
                           .local_path = large_dir + "/*" + csv.extension,
                           .properties = {{"s3.max_batch_files", "1"}},
                           .reader = csv.doris_params};
  // The same objects through a store 20 ms away.
  testing::FaultProxy::Options proxy_options;
  proxy_options.upstream_port = ctx.s3->port();
  MR_ASSIGN_OR_RETURN(auto proxy, testing::FaultProxy::Start(proxy_options));
  proxy->AddRule(
      {testing::RequestKind::kGet, "", -1, 1.0, testing::Fault::StallBefore(kFirstByte)});
  JobSpec distant_spec = small_spec;
  distant_spec.name = "conc_distant";
  distant_spec.table = "bench.conc_distant";
  distant_spec.endpoint = proxy->endpoint();
  std::vector<double> small_one, small_four, distant_one, distant_four, large_one, large_four;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    const std::string suffix = "_r" + std::to_string(run);
    JobSpec s = small_spec;
    s.name += suffix;
    s.table += suffix;
    JobSpec l = large_spec;
    l.name += suffix;
    l.table += suffix;
    MR_ASSIGN_OR_RETURN(double one, LoadWithTasks(*server, s, 1, kSmallColumns, put.rows));
    MR_ASSIGN_OR_RETURN(double four, LoadWithTasks(*server, s, 4, kSmallColumns, put.rows));
    small_one.push_back(static_cast<double>(small) / one);
    small_four.push_back(static_cast<double>(small) / four);
    JobSpec d = distant_spec;
    d.name += suffix;
    d.table += suffix;
    MR_ASSIGN_OR_RETURN(one, LoadWithTasks(*server, d, 1, kSmallColumns, put.rows));
    MR_ASSIGN_OR_RETURN(four, LoadWithTasks(*server, d, 4, kSmallColumns, put.rows));
    distant_one.push_back(static_cast<double>(small) / one);
    distant_four.push_back(static_cast<double>(small) / four);
    MR_ASSIGN_OR_RETURN(one, LoadWithTasks(*server, l, 1, kEventsColumns, large.total_rows));
    MR_ASSIGN_OR_RETURN(four, LoadWithTasks(*server, l, 4, kEventsColumns, large.total_rows));
    large_one.push_back(static_cast<double>(large.total_bytes) / kMB / one);
    large_four.push_back(static_cast<double>(large.total_bytes) / kMB / four);
  }
  const std::string cores =
      "; this machine has 2 cores, which DuckDB's threads share with every task";
  return std::vector<Figure>{
      {.name = "small files, 4 tasks at once",
       .unit = "files/s",
       .value = Summarize(small_four),
       .baseline = Summarize(small_one),
       .baseline_what = "the same job with max_concurrent_tasks = 1",
       .note = std::to_string(small) + " S3 objects of 1-4 KB, s3.max_batch_files = 100" + cores},
      {.name = "small files 20 ms away, 4 tasks at once",
       .unit = "files/s",
       .value = Summarize(distant_four),
       .baseline = Summarize(distant_one),
       .baseline_what = "the same job with max_concurrent_tasks = 1",
       .note = "the same objects through a proxy holding each GET " +
               std::to_string(kFirstByte.count()) +
               " ms before its first byte; each task downloads up to 8 at once"},
      {.name = "large files, 4 tasks at once",
       .unit = "MB/s",
       .value = Summarize(large_four),
       .baseline = Summarize(large_one),
       .baseline_what = "the same job with max_concurrent_tasks = 1",
       .note = std::to_string(kLargeFiles) + " local CSV files of " +
               HumanBytes(ctx.config.conc_large_bytes) +
               " read in place, one a task (s3.max_batch_files = 1)" + cores}};
}

}  // namespace millrace::bench
