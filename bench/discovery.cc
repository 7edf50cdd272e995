// Discovery cost: a prefix holding many objects that the job has already passed (its offset is
// the last key), with max_interval = 1. The S3 requests Millrace sends go through the fault
// proxy in pass-through mode, which counts LIST, GET and HEAD. Requests are grouped into polls
// by time: a poll's requests come back to back, polls are max_interval apart. A poll that
// fetched something (a GET) is a new-file poll; the others are idle polls.
#include <atomic>
#include <thread>

#include "scenario_util.h"
#include "testing/fault_proxy.h"

namespace millrace::bench {
namespace {

using testing::FaultProxy;
using testing::ProxyCounts;

// Requests closer than this belong to one poll.
constexpr std::chrono::milliseconds kPollGap{300};
constexpr std::chrono::milliseconds kSampleEvery{2};

struct Burst {
  uint64_t list = 0;
  uint64_t get = 0;
  uint64_t head = 0;
};

// Samples the proxy's counters on a thread and splits the requests into bursts.
class BurstRecorder {
 public:
  explicit BurstRecorder(FaultProxy* proxy) : proxy_(proxy) {
    thread_ = std::thread([this] { Loop(); });
  }
  // Stops sampling and returns the bursts seen.
  std::vector<Burst> Finish() {
    stop_.store(true);
    thread_.join();
    return std::move(bursts_);
  }

 private:
  void Loop() {
    ProxyCounts last = proxy_->counts();
    SteadyTime last_change = Now() - kPollGap * 2;
    while (!stop_.load()) {
      std::this_thread::sleep_for(kSampleEvery);
      const ProxyCounts now = proxy_->counts();
      const uint64_t list = now.list - last.list, get = now.get - last.get,
                     head = now.head - last.head;
      if (list + get + head == 0) continue;
      if (bursts_.empty() || Now() - last_change > kPollGap) bursts_.emplace_back();
      bursts_.back().list += list;
      bursts_.back().get += get;
      bursts_.back().head += head;
      last = now;
      last_change = Now();
    }
  }

  FaultProxy* proxy_;
  std::atomic<bool> stop_{false};
  std::vector<Burst> bursts_;  // written by the thread only until Finish joins it
  std::thread thread_;
};

struct RunCost {
  double idle_list = 0;  // per idle poll
  double idle_other = 0;
  double file_list = 0;  // per new file
  double file_get = 0;
  double file_head = 0;
  size_t idle_polls = 0;
};

Result<RunCost> MeasureRun(BenchContext& ctx, BenchServer& server, FaultProxy& proxy,
                           const std::string& table, int64_t* next_object, int64_t* rows) {
  const BenchConfig& c = ctx.config;
  RunCost cost;
  BurstRecorder idle(&proxy);
  std::this_thread::sleep_for(std::chrono::seconds(c.disc_idle_seconds));
  const std::vector<Burst> idle_bursts = idle.Finish();
  if (idle_bursts.empty()) return Status::Internal("discovery: the job sent no request at all");
  Burst idle_total;
  for (const Burst& b : idle_bursts) {
    idle_total.list += b.list;
    idle_total.get += b.get;
    idle_total.head += b.head;
  }
  cost.idle_polls = idle_bursts.size();
  cost.idle_list = static_cast<double>(idle_total.list) / idle_bursts.size();
  cost.idle_other = static_cast<double>(idle_total.get + idle_total.head) / idle_bursts.size();

  BurstRecorder files(&proxy);
  for (int k = 0; k < c.disc_new_files; ++k) {
    const int64_t n = (*next_object)++;
    int64_t object_rows = 0;
    const std::string body = SmallCsvObject(c.seed, n, 64, 64, &object_rows);
    MR_RETURN_IF_ERROR(ctx.s3->PutObject(kDiscoveryBucket, SpreadKey("disc", n), body));
    *rows += object_rows;
    MR_RETURN_IF_ERROR(server.WaitForRows(table, *rows, "disc", std::chrono::seconds(60)).status());
    // Let the poll after the load happen before the next file, so polls do not merge.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  }
  Burst file_total;
  for (const Burst& b : files.Finish()) {
    if (b.get == 0) continue;
    file_total.list += b.list;
    file_total.get += b.get;
    file_total.head += b.head;
  }
  cost.file_list = static_cast<double>(file_total.list) / c.disc_new_files;
  cost.file_get = static_cast<double>(file_total.get) / c.disc_new_files;
  cost.file_head = static_cast<double>(file_total.head) / c.disc_new_files;
  return cost;
}

// A job that loaded its objects through tasks (not one started past them with `offset`) lists
// them all again every reconcile_interval, looking for late files. Measured on objects really
// loaded through a job with a short reconcile_interval; returns, per reconciling poll, its
// LISTs beyond the poll's own one per 1000 loaded objects.
Result<std::vector<double>> ReconcileListsPerThousand(BenchContext& ctx, BenchServer& server,
                                                      FaultProxy& proxy) {
  const int64_t objects = ctx.config.reconcile_objects;
  MR_ASSIGN_OR_RETURN(PutStats put, PutSmallObjects(*ctx.s3, kDiscoveryBucket, "recon", 0, objects,
                                                    ctx.config.seed, 64, 64, 16));
  const std::string table = "bench.disc_recon";
  MR_RETURN_IF_ERROR(server.Execute("CREATE TABLE " + table + " " + kSmallColumns));
  constexpr int kReconcileSeconds = 4;
  JobSpec spec{.name = "disc_recon",
               .table = table,
               .uri = std::string("s3://") + kDiscoveryBucket + "/recon/*/*.csv",
               .format = "csv",
               .endpoint = proxy.endpoint(),
               .properties = {{"max_interval", "1"},
                              {"reconcile_interval", std::to_string(kReconcileSeconds)}},
               .reader = {{"column_separator", ","}}};
  MR_RETURN_IF_ERROR(server.Execute(CreateJobSql(spec)));
  MR_RETURN_IF_ERROR(
      server.WaitForRows(table, put.rows, spec.name, std::chrono::seconds(900)).status());
  BurstRecorder recorder(&proxy);
  std::this_thread::sleep_for(std::chrono::seconds(2 * kReconcileSeconds + 1));
  std::vector<double> per_thousand;
  for (const Burst& b : recorder.Finish()) {
    if (b.list <= 1) continue;  // an ordinary idle poll
    per_thousand.push_back(static_cast<double>(b.list - 1) / (static_cast<double>(objects) / 1000));
  }
  MR_RETURN_IF_ERROR(server.Execute("DROP JOB WHERE jobname = 'disc_recon'"));
  if (per_thousand.empty()) {
    return Status::Internal("discovery: no reconciliation listing seen in " +
                            std::to_string(2 * kReconcileSeconds + 1) + " s");
  }
  return per_thousand;
}

}  // namespace

Result<std::vector<Figure>> RunDiscovery(BenchContext& ctx) {
  const BenchConfig& c = ctx.config;
  const SteadyTime put_start = Now();
  MR_RETURN_IF_ERROR(ctx.s3->CreateBucket(kDiscoveryBucket));
  MR_RETURN_IF_ERROR(
      PutSmallObjects(*ctx.s3, kDiscoveryBucket, "disc", 0, c.disc_objects, c.seed, 64, 64, 16)
          .status());
  const double put_seconds = SecondsSince(put_start);

  MR_ASSIGN_OR_RETURN(auto proxy, FaultProxy::Start({.upstream_port = ctx.s3->port()}));
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "disc-server"));
  const std::string table = "bench.disc";
  MR_RETURN_IF_ERROR(server->Execute("CREATE TABLE " + table + " " + kSmallColumns));
  // The offset says every object present was loaded: SPEC section 3's "start after this key".
  const std::string last_key = SpreadKey("disc", c.disc_objects - 1);
  JobSpec spec{
      .name = "disc",
      .table = table,
      .uri = std::string("s3://") + kDiscoveryBucket + "/disc/*/*.csv",
      .format = "csv",
      .endpoint = proxy->endpoint(),
      .properties = {{"max_interval", "1"}, {"offset", "{\"fileName\":\"" + last_key + "\"}"}},
      .reader = {{"column_separator", ","}}};
  MR_RETURN_IF_ERROR(server->Execute(CreateJobSql(spec)));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));

  int64_t next_object = c.disc_objects;
  int64_t rows = 0;
  std::vector<double> idle_list, idle_other, file_list, file_get, file_head;
  size_t idle_polls = 0;
  for (int run = 1; run <= c.runs; ++run) {
    MR_ASSIGN_OR_RETURN(RunCost cost, MeasureRun(ctx, *server, *proxy, table, &next_object, &rows));
    idle_list.push_back(cost.idle_list);
    idle_other.push_back(cost.idle_other);
    file_list.push_back(cost.file_list);
    file_get.push_back(cost.file_get);
    file_head.push_back(cost.file_head);
    idle_polls += cost.idle_polls;
  }
  // Only one job may poll through the proxy while bursts are attributed.
  MR_RETURN_IF_ERROR(server->Execute("DROP JOB WHERE jobname = 'disc'"));
  MR_ASSIGN_OR_RETURN(std::vector<double> reconcile,
                      ReconcileListsPerThousand(ctx, *server, *proxy));
  const std::string note = std::to_string(c.disc_objects) + " objects under the prefix (PUT in " +
                           std::to_string(static_cast<int>(put_seconds)) + " s); " +
                           std::to_string(idle_polls) + " idle polls and " +
                           std::to_string(c.disc_new_files * c.runs) + " new files observed";
  return std::vector<Figure>{
      {.name = "idle poll: LIST",
       .unit = "req/poll",
       .value = Summarize(idle_list),
       .target = {Target::Kind::kValueAtMost, 1.0, "<= 1"},
       .note = note},
      {.name = "idle poll: GET+HEAD", .unit = "req/poll", .value = Summarize(idle_other)},
      {.name = "new file: LIST", .unit = "req/file", .value = Summarize(file_list)},
      {.name = "new file: GET", .unit = "req/file", .value = Summarize(file_get)},
      {.name = "new file: HEAD", .unit = "req/file", .value = Summarize(file_head)},
      {.name = "reconciliation: LIST per 1000 loaded objects",
       .unit = "req",
       .value = Summarize(reconcile),
       .note = "a job that loaded " + std::to_string(c.reconcile_objects) +
               " objects through its tasks re-lists them every reconcile_interval (default "
               "300 s) to find late files; measured with reconcile_interval = 4, each "
               "reconciling poll a sample. At 100,000 loaded objects that is about " +
               std::to_string(static_cast<int>(Summarize(reconcile).median * 100 + 0.5)) +
               " LISTs per reconciliation, on top of the idle poll's one"}};
}

}  // namespace millrace::bench
