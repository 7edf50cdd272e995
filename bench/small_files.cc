// Small files: many objects of 1 to 4 KB loaded by a streaming job with default properties,
// against the same objects fetched with parallel raw GETs by our S3 client (the store's own
// ceiling), with every process on every CPU; and the same pair with the CPUs split between
// s3rver and its clients (bench_util.h, CpuSplit), which shows what the store's sharing of the
// cores costs the job; and the shared raw GETs again beside the LISTs a job's discovery sends,
// which shows what listing alone costs the store. RunSmallFilesRgw measures the job and the raw
// GETs again on a Ceph RGW store, whose LISTs do not hold up its GETs.
#include <atomic>
#include <thread>

#include "common/clock.h"
#include "data_gen.h"
#include "job/job_properties.h"
#include "s3/s3_client.h"
#include "scenario_util.h"
#include "testing/rgw_server.h"

namespace millrace::bench {
namespace {

// The objects fetched from `store` (kBucket, kSmallPrefix) by `threads` parallel GETs. With
// `list_batch` > 0, a thread beside them sends the LISTs a job's discovery would: one for the
// next `list_batch` keys (plus one, as S3Source asks) whenever the GETs come within a batch of
// the keys listed so far, as a job's read ahead lists the next batch while the current one
// downloads.
Result<double> RawGetSeconds(const s3::S3Config& store, int threads, int64_t files,
                             int64_t list_batch = 0) {
  MR_ASSIGN_OR_RETURN(auto client, s3::S3Client::Create(store, Clock::Real()));
  std::atomic<int64_t> fetched{0};
  std::atomic<bool> done{false};
  Status listed = Status::Ok();
  std::thread lister;
  if (list_batch > 0) {
    lister = std::thread([&] {
      for (int64_t upto = 0; upto < files && !done;) {
        if (fetched.load() + list_batch <= upto) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        s3::ListRequest request{.bucket = kBucket,
                                .prefix = std::string(kSmallPrefix) + "/",
                                .max_keys = static_cast<int>(list_batch + 1)};
        if (upto > 0) request.start_after = SpreadKey(kSmallPrefix, upto - 1);
        listed = client->ListObjectsV2(request).status();
        if (!listed.ok()) return;
        upto += list_batch;
      }
    });
  }
  const SteadyTime start = Now();
  Status got = ParallelFor(static_cast<size_t>(files), threads, [&](size_t i) -> Status {
    s3::GetRequest request{.bucket = kBucket,
                           .key = SpreadKey(kSmallPrefix, static_cast<int64_t>(i))};
    auto object = client->GetObject(request, [](std::string_view) { return Status::Ok(); });
    fetched.fetch_add(1);
    return object.status();
  });
  const double seconds = SecondsSince(start);
  done = true;
  if (lister.joinable()) lister.join();
  MR_RETURN_IF_ERROR(got);
  MR_RETURN_IF_ERROR(listed);
  return seconds;
}

// A job with default properties over the small objects of `endpoint`.
JobSpec SmallFilesJob(const std::string& name, const std::string& endpoint) {
  return JobSpec{.name = name,
                 .table = "bench." + name,
                 .uri = std::string("s3://") + kBucket + "/" + kSmallPrefix + "/*/*.csv",
                 .format = "csv",
                 .endpoint = endpoint,
                 .reader = {{"column_separator", ","}}};
}

std::string SmallObjectsNote(int64_t files, const PutStats& put) {
  return std::to_string(files) + " objects of 1-4 KB (" + HumanBytes(put.bytes) + ", " +
         std::to_string(put.rows) + " rows)";
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
  std::vector<double> rates[2], base_rates[2], listing_rates;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    for (Placement placement : {kShared, kSplit}) {
      std::unique_ptr<CpuSplit> split;
      if (placement == kSplit) {
        MR_ASSIGN_OR_RETURN(split, CpuSplit::Apply(ctx.s3->pid(), server->pid()));
      }
      MR_ASSIGN_OR_RETURN(double base_seconds,
                          RawGetSeconds(ctx.s3->Config(), ctx.config.get_threads, files));
      base_rates[placement].push_back(static_cast<double>(files) / base_seconds);
      if (placement == kShared) {
        MR_ASSIGN_OR_RETURN(double listing_seconds,
                            RawGetSeconds(ctx.s3->Config(), ctx.config.get_threads, files,
                                          job::JobProperties().max_batch_files));
        listing_rates.push_back(static_cast<double>(files) / listing_seconds);
      }

      const std::string name =
          std::string(placement == kSplit ? "small_split_" : "small_") + std::to_string(run);
      MR_ASSIGN_OR_RETURN(double seconds,
                          LoadWithJob(*server, SmallFilesJob(name, ctx.s3->endpoint()),
                                      kSmallColumns, put.rows, std::chrono::seconds(1200)));
      rates[placement].push_back(static_cast<double>(files) / seconds);
      if (split) MR_RETURN_IF_ERROR(split->Undo());
    }
  }
  const std::string what =
      "raw GETs, our S3 client, " + std::to_string(ctx.config.get_threads) + " threads";
  const std::string objects = SmallObjectsNote(files, put);
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
      // What discovery costs the store, apart from the job: the same GETs beside the LISTs a job
      // sends for them (s3rver walks a directory and reads each listed key's metadata on its
      // one event loop, about 0.1 ms a key, which stalls the GETs in flight).
      {.name = "raw GETs beside a job's LISTs",
       .unit = "files/s",
       .value = Summarize(listing_rates),
       .baseline = Summarize(base_rates[kShared]),
       .baseline_what = what,
       .note = objects + "; one LIST of s3.max_batch_files + 1 keys per batch of GETs, on a "
                         "thread of its own; every process on every CPU",
       .run_ratios = SummarizeRunRatios(listing_rates, base_rates[kShared])},
      {.name = "small files, store on CPUs of its own",
       .unit = "files/s",
       .value = Summarize(rates[kSplit]),
       .baseline = Summarize(base_rates[kSplit]),
       .baseline_what = what,
       .note = objects + "; s3rver on half the CPUs, the server and the raw GETs on the others",
       .run_ratios = SummarizeRunRatios(rates[kSplit], base_rates[kSplit])}};
}

Result<std::vector<Figure>> RunSmallFilesRgw(BenchContext& ctx) {
  const int64_t files = ctx.config.small_files;
  MR_ASSIGN_OR_RETURN(auto rgw, testing::RgwServer::Start());
  MR_RETURN_IF_ERROR(rgw->CreateBucket(kBucket));
  MR_ASSIGN_OR_RETURN(PutStats put, PutSmallObjects(
                                        [&](const std::string& key, const std::string& body) {
                                          return rgw->PutObject(kBucket, key, body);
                                        },
                                        kSmallPrefix, 0, files, ctx.config.seed, 1024, 4096, 8));
  s3::S3Config store = ctx.s3->Config();
  store.endpoint = rgw->endpoint();
  store.credentials = {testing::RgwServer::kAccessKey, testing::RgwServer::kSecretKey, ""};
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "small-rgw-server"));
  std::vector<double> rates, base_rates;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(double base_seconds, RawGetSeconds(store, ctx.config.get_threads, files));
    base_rates.push_back(static_cast<double>(files) / base_seconds);
    JobSpec spec = SmallFilesJob("small_rgw_" + std::to_string(run), rgw->endpoint());
    spec.access_key = testing::RgwServer::kAccessKey;
    spec.secret_key = testing::RgwServer::kSecretKey;
    MR_ASSIGN_OR_RETURN(double seconds, LoadWithJob(*server, spec, kSmallColumns, put.rows,
                                                    std::chrono::seconds(1200)));
    rates.push_back(static_cast<double>(files) / seconds);
  }
  return std::vector<Figure>{
      {.name = "small files, Ceph RGW store",
       .unit = "files/s",
       .value = Summarize(rates),
       .baseline = Summarize(base_rates),
       .baseline_what =
           "raw GETs, our S3 client, " + std::to_string(ctx.config.get_threads) + " threads",
       .note = SmallObjectsNote(files, put) +
               "; a one-node Ceph RGW (memstore) instead of s3rver, every process on every CPU",
       .run_ratios = SummarizeRunRatios(rates, base_rates)}};
}

}  // namespace millrace::bench
