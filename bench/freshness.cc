// Freshness: with max_interval = 1, a writer PUTs one small file every 200 ms; the latency of a
// file is from the end of its PUT to its rows being visible to a SELECT through the MySQL front
// end (polled every few milliseconds). With local events: max_interval = 60, a writer writes one
// small file every 200 ms into a local directory (under a hidden name, then renamed into place);
// only the inotify event can make it visible before the minute.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "scenario_util.h"
#include "testing/rgw_server.h"

namespace millrace::bench {
namespace {

constexpr std::chrono::milliseconds kPollEvery{5};

// Where a run's job reads and how its writer lands file `i` there.
struct FreshSource {
  JobSpec spec;  // name, table and format are set by MeasureRun
  std::function<Status(int i, const std::string& content)> write;
};

// The S3 variant of run `run`: objects PUT under fresh/r<run>/ of the bench bucket.
FreshSource S3Fresh(BenchContext& ctx, int run) {
  const std::string prefix = "fresh/r" + std::to_string(run);
  return {{.uri = std::string("s3://") + kBucket + "/" + prefix + "/*.csv",
           .endpoint = ctx.s3->endpoint(),
           .properties = {{"max_interval", "1"}}},
          [&ctx, prefix](int i, const std::string& content) {
            char key[64];
            std::snprintf(key, sizeof(key), "/f%06d.csv", i);
            return ctx.s3->PutObject(kBucket, prefix + key, content);
          }};
}

// The secret of the jobs woken by the bench's S3 events.
constexpr char kEventSecret[] = "bench-event-secret-0123456789";

// The S3 variant woken by events: max_interval = 60; each PUT is followed by the S3 event
// notification Ceph RGW would push for it, POSTed to the server's /api/s3-events.
FreshSource S3EventFresh(BenchContext& ctx, BenchServer& server, int run) {
  FreshSource source = S3Fresh(ctx, run);
  source.spec.uri =
      std::string("s3://") + kBucket + "/fresh-events/r" + std::to_string(run) + "/*.csv";
  source.spec.properties = {{"max_interval", "60"}, {"s3.event_secret", kEventSecret}};
  const std::string prefix = "fresh-events/r" + std::to_string(run);
  source.write = [&ctx, &server, prefix](int i, const std::string& content) -> Status {
    char key[64];
    std::snprintf(key, sizeof(key), "/f%06d.csv", i);
    MR_RETURN_IF_ERROR(ctx.s3->PutObject(kBucket, prefix + key, content));
    const std::string event =
        std::string(
            "{\"Records\":[{\"eventName\":\"ObjectCreated:Put\",\"eventSource\":"
            "\"ceph:s3\",\"s3\":{\"bucket\":{\"name\":\"") +
        kBucket + "\"},\"object\":{\"key\":\"" + prefix + key +
        "\",\"size\":" + std::to_string(content.size()) + "}}}]}";
    MR_ASSIGN_OR_RETURN(
        server::HttpReply reply,
        server::HttpPost(server.http_port(), std::string("/api/s3-events?secret=") + kEventSecret,
                         event));
    if (reply.status != 200) {
      return Status::Internal("POST /api/s3-events answered " + std::to_string(reply.status) +
                              ": " + reply.body);
    }
    return Status::Ok();
  };
  return source;
}

// The Ceph RGW variant: max_interval = 60; RGW pushes the notification of each PUT itself, to
// the topic RunFreshnessRgwEvents points at the server.
FreshSource RgwEventFresh(testing::RgwServer& rgw, int run) {
  const std::string prefix = "rgw/r" + std::to_string(run);
  return {{.uri = std::string("s3://") + kBucket + "/" + prefix + "/*.csv",
           .endpoint = rgw.endpoint(),
           .properties = {{"max_interval", "60"}, {"s3.event_secret", kEventSecret}},
           .access_key = testing::RgwServer::kAccessKey,
           .secret_key = testing::RgwServer::kSecretKey},
          [&rgw, prefix](int i, const std::string& content) {
            char key[64];
            std::snprintf(key, sizeof(key), "/f%06d.csv", i);
            return rgw.PutObject(kBucket, prefix + key, content);
          }};
}

// The local variant: files renamed into r<run>/ of `root` (the server's --local-root).
FreshSource LocalFresh(const std::string& root, int run) {
  const std::string dir = root + "/r" + std::to_string(run);
  std::filesystem::create_directories(dir);
  return {{.local_path = dir + "/*.csv", .properties = {{"max_interval", "60"}}},
          [dir](int i, const std::string& content) -> Status {
            char name[64];
            std::snprintf(name, sizeof(name), "f%06d.csv", i);
            const std::string hidden = dir + "/." + name;
            {
              std::ofstream out(hidden, std::ios::binary);
              out << content;
              if (!out) return Status::IoError("writing " + hidden);
            }
            std::error_code error;
            std::filesystem::rename(hidden, dir + "/" + name, error);
            if (error) return Status::IoError("renaming " + hidden + ": " + error.message());
            return Status::Ok();
          }};
}

Result<Latencies> MeasureRun(BenchContext& ctx, BenchServer& server, int run, FreshSource source) {
  const BenchConfig& c = ctx.config;
  const std::string name = "fresh_" + std::to_string(run);
  const std::string table = "bench." + name;
  MR_RETURN_IF_ERROR(server.Execute("CREATE TABLE " + table + " " + kSmallColumns));
  JobSpec spec = std::move(source.spec);
  spec.name = name;
  spec.table = table;
  spec.format = "csv";
  spec.reader = {{"column_separator", ","}};
  MR_RETURN_IF_ERROR(server.Execute(CreateJobSql(spec)));
  // The job has looked at its empty source before the first file arrives.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));

  const int files = c.fresh_seconds * 1000 / c.fresh_period_ms;
  auto latencies = MeasureVisibility(
      {.writes = files,
       .period = std::chrono::milliseconds(c.fresh_period_ms),
       .poll_every = kPollEvery,
       .write =
           [&](int i) {
             int64_t rows = 0;
             return source.write(i, SmallCsvObject(c.seed + run, i, 200, 400, &rows));
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
    MR_ASSIGN_OR_RETURN(Latencies l, MeasureRun(ctx, *server, run, S3Fresh(ctx, run)));
    runs.push_back(l);
  }
  return LatencyFigures("freshness", runs, {Target::Kind::kValueAtMost, 1.5, "<= 1.5 s"},
                        "max_interval = 1; one file every " +
                            std::to_string(ctx.config.fresh_period_ms) + " ms for " +
                            std::to_string(ctx.config.fresh_seconds) +
                            " s per run; percentiles per run, then median over runs");
}

Result<std::vector<Figure>> RunFreshnessLocalEvents(BenchContext& ctx) {
  const std::string root = ctx.Subdir("fresh-local");
  MR_ASSIGN_OR_RETURN(auto server,
                      StartBenchServer(ctx, "fresh-local-server", {"--local-root", root}));
  std::vector<Latencies> runs;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(Latencies l, MeasureRun(ctx, *server, run, LocalFresh(root, run)));
    runs.push_back(l);
  }
  return LatencyFigures(
      "freshness, local job woken by events", runs, {Target::Kind::kValueAtMost, 0.15, "<= 0.15 s"},
      "max_interval = 60 (only an inotify event loads a file within the "
      "minute); one file every " +
          std::to_string(ctx.config.fresh_period_ms) + " ms, renamed into place, for " +
          std::to_string(ctx.config.fresh_seconds) +
          " s per run; percentiles per run, then median over runs");
}

Result<std::vector<Figure>> RunFreshnessS3Events(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "fresh-events-server"));
  std::vector<Latencies> runs;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(Latencies l,
                        MeasureRun(ctx, *server, run, S3EventFresh(ctx, *server, run)));
    runs.push_back(l);
  }
  return LatencyFigures(
      "freshness, S3 job woken by events", runs, {Target::Kind::kValueAtMost, 0.15, "<= 0.15 s"},
      "max_interval = 60; one object PUT to s3rver every " +
          std::to_string(ctx.config.fresh_period_ms) +
          " ms, then its event notification POSTed to /api/s3-events (as "
          "Ceph RGW pushes it), for " +
          std::to_string(ctx.config.fresh_seconds) +
          " s per run; latency from the POST's answer (the time a store takes to push "
          "its event is the store's); percentiles per run, then median over "
          "runs");
}

Result<std::vector<Figure>> RunFreshnessRgwEvents(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto rgw, testing::RgwServer::Start());
  MR_RETURN_IF_ERROR(rgw->CreateBucket(kBucket));
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "fresh-rgw-server"));
  MR_ASSIGN_OR_RETURN(
      const std::string topic,
      rgw->CreateTopic("millrace", "http://127.0.0.1:" + std::to_string(server->http_port()) +
                                       "/api/s3-events?secret=" + kEventSecret));
  MR_RETURN_IF_ERROR(rgw->NotifyOnCreate(kBucket, topic));
  std::vector<Latencies> runs;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(Latencies l, MeasureRun(ctx, *server, run, RgwEventFresh(*rgw, run)));
    runs.push_back(l);
  }
  return LatencyFigures(
      "freshness, S3 job woken by Ceph RGW's events", runs,
      {Target::Kind::kValueAtMost, 0.15, "<= 0.15 s"},
      "max_interval = 60; one object PUT to a one-node Ceph RGW every " +
          std::to_string(ctx.config.fresh_period_ms) +
          " ms, which pushes its notification to /api/s3-events itself, for " +
          std::to_string(ctx.config.fresh_seconds) +
          " s per run; latency from the PUT's answer; percentiles per run, then median over "
          "runs");
}

}  // namespace millrace::bench
