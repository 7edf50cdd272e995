// Recovery: kill -9 of a server whose job (max_interval = 1) is caught up, a new file put while
// it is down, and the time from the kill until that file's rows are visible after a restart on
// the same data directory. The baseline is the part of it spent until the restarted server
// accepts connections. Each run also checks that no file was loaded twice.
#include <cstdio>
#include <thread>

#include "scenario_util.h"

namespace millrace::bench {
namespace {

constexpr char kJob[] = "rec";
constexpr char kTable[] = "bench.rec";

Status PutFile(BenchContext& ctx, int n, int64_t* rows) {
  char key[64];
  std::snprintf(key, sizeof(key), "rec/f%06d.csv", n);
  int64_t file_rows = 0;
  MR_RETURN_IF_ERROR(
      ctx.s3->PutObject(kBucket, key, SmallCsvObject(ctx.config.seed, n, 1024, 1024, &file_rows)));
  *rows += file_rows;
  return Status::Ok();
}

}  // namespace

Result<std::vector<Figure>> RunRecovery(BenchContext& ctx) {
  const std::string data_dir = ctx.ServerDir("rec-server");
  MR_ASSIGN_OR_RETURN(auto server, BenchServer::Start(data_dir));
  MR_RETURN_IF_ERROR(server->Execute("CREATE DATABASE bench"));
  MR_RETURN_IF_ERROR(server->Execute(std::string("CREATE TABLE ") + kTable + " " + kSmallColumns));
  JobSpec spec{.name = kJob,
               .table = kTable,
               .uri = std::string("s3://") + kBucket + "/rec/*.csv",
               .format = "csv",
               .endpoint = ctx.s3->endpoint(),
               .properties = {{"max_interval", "1"}},
               .reader = {{"column_separator", ","}}};
  MR_RETURN_IF_ERROR(server->Execute(CreateJobSql(spec)));
  int64_t rows = 0;
  MR_RETURN_IF_ERROR(PutFile(ctx, 0, &rows));
  MR_RETURN_IF_ERROR(server->WaitForRows(kTable, rows, kJob, std::chrono::seconds(60)).status());

  std::vector<double> recovery, ready;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    const SteadyTime killed = Now();
    server->Kill();
    MR_RETURN_IF_ERROR(PutFile(ctx, run, &rows));
    MR_ASSIGN_OR_RETURN(server, BenchServer::Start(data_dir));
    const SteadyTime up = Now();
    MR_ASSIGN_OR_RETURN(SteadyTime visible,
                        server->WaitForRows(kTable, rows, kJob, std::chrono::seconds(120),
                                            std::chrono::milliseconds(10)));
    recovery.push_back(SecondsBetween(killed, visible));
    ready.push_back(SecondsBetween(killed, up));
    MR_ASSIGN_OR_RETURN(int64_t loaded,
                        server->QueryInt(std::string("SELECT count(*) FROM ") + kTable));
    if (loaded != rows) {
      return Status::DataLoss("after recovery " + std::string(kTable) + " holds " +
                              std::to_string(loaded) + " rows, expected " + std::to_string(rows));
    }
    // Back to the steady state the next kill expects: caught up and idle.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return std::vector<Figure>{
      {.name = "recovery: kill -9 to new file visible",
       .unit = "s",
       .value = Summarize(recovery),
       .baseline = Summarize(ready),
       .baseline_what = "kill -9 to the restarted server accepting connections",
       .note = "job caught up and idle (max_interval = 1) when killed; a file is put while the "
               "server is down; row count checked after each recovery"}};
}

}  // namespace millrace::bench
