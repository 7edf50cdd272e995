// BenchConfig sizes per mode, BenchContext, and the helpers the scenarios share.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench_server.h"
#include "bench_util.h"
#include "engine/database.h"
#include "scenario_util.h"
#include "scenarios.h"

namespace millrace::bench {

BenchConfig BenchConfig::ForMode(const std::string& mode) {
  BenchConfig c;
  c.mode = mode;
  if (mode == "quick") {
    c.runs = 1;
    c.local_runs = 1;
    c.tp_files = 1;
    c.small_files = 2'000;
    c.conc_small_files = 500;
    c.conc_large_bytes = 10'000'000;
    c.fresh_seconds = 15;
    c.disc_objects = 10'000;
    c.disc_idle_seconds = 6;
    c.disc_new_files = 3;
    c.reconcile_objects = 1'000;
    c.mem_files = 3;
    c.key_counts = {300'000, 1'000'000};
    c.cdc_rows = 200'000;
    c.cdc_default_txns = 50;
  }
  return c;
}

Result<const DataSet*> BenchContext::Events(DataFormat format) {
  auto it = data_sets.find(format);
  if (it != data_sets.end()) return &it->second;
  const FormatInfo& info = Info(format);
  const std::string dir = Subdir("events-" + info.doris_format);
  MR_ASSIGN_OR_RETURN(DataSet set, GenerateDataSet(*generator, format, config.tp_files,
                                                   config.tp_file_bytes, config.seed, dir));
  return &data_sets.emplace(format, std::move(set)).first->second;
}

Result<PutStats> BenchContext::SmallObjects() {
  if (!small_objects) {
    MR_ASSIGN_OR_RETURN(small_objects,
                        PutSmallObjects(*s3, kBucket, kSmallPrefix, 0, config.small_files,
                                        config.seed, 1024, 4096, 8));
  }
  return *small_objects;
}

std::string BenchContext::Subdir(const std::string& name) {
  const std::string path = dir + "/" + name;
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

std::string BenchContext::ServerDir(const std::string& name) {
  server_dirs.push_back(Subdir("servers/" + name));
  return server_dirs.back();
}

void FreeServerData(const std::string& server_dir) {
  for (const auto& entry : std::filesystem::directory_iterator(server_dir)) {
    if (entry.path().filename() != "server.log") std::filesystem::remove_all(entry.path());
  }
}

std::vector<std::string> ServerWarnings(const std::string& server_dir) {
  std::ifstream log(server_dir + "/server.log");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(log, line)) {
    // "2026-12-02 11:14:28 INFO ...": the level is the third field.
    std::istringstream fields(line);
    std::string date, time, level;
    fields >> date >> time >> level;
    if (!level.empty() && level != "INFO" && level != "DEBUG") lines.push_back(line);
  }
  return lines;
}

namespace {

std::string FileListLiteral(const DataSet& set) {
  std::string list = "[";
  for (const DataFile& f : set.files) {
    if (list.size() > 1) list += ", ";
    list += engine::QuoteLiteral(f.path);
  }
  return list + "]";
}

void RemoveDatabase(const std::string& path) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".wal");
}

// DATA_LOSS naming `what` unless table t on `conn` holds `rows` rows.
Status ExpectRows(engine::Connection& conn, int64_t rows, const std::string& what) {
  MR_ASSIGN_OR_RETURN(auto count, conn.Query("SELECT count(*) FROM t"));
  MR_ASSIGN_OR_RETURN(auto chunk, count->Next());
  if (!chunk || chunk->GetInt64(0, 0) != rows) {
    return Status::DataLoss(what + " left a different number of rows");
  }
  return Status::Ok();
}

}  // namespace

Result<uint64_t> PeakRssDuring(BenchServer& server, const std::function<Status()>& work) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sampled{0};
  std::thread sampler([&] {
    while (!stop.load()) {
      const uint64_t rss = server.RssBytes();
      if (rss > sampled.load()) sampled.store(rss);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const Status done = work();
  stop.store(true);
  sampler.join();
  MR_RETURN_IF_ERROR(done);
  return std::max<uint64_t>(sampled.load(), server.PeakRssBytes());
}

Result<Measured> DuckDbLoad(const DataSet& set, const std::string& dir,
                            const DuckDbLoadShape& shape) {
  const std::string path = dir + "/baseline.duckdb";
  RemoveDatabase(path);
  std::string reader = Info(set.format).duckdb_reader;
  reader.replace(reader.find("%s"), 2, FileListLiteral(set));
  Measured measured;
  {
    MR_ASSIGN_OR_RETURN(auto db, engine::Database::Open({.path = path}));
    MR_ASSIGN_OR_RETURN(auto conn, db->Connect());
    MR_RETURN_IF_ERROR(conn->Execute("CREATE TABLE t " + shape.columns));
    const double cpu_start = CpuSecondsSelf();
    const SteadyTime start = Now();
    MR_RETURN_IF_ERROR(
        conn->Execute(shape.insert + " t SELECT * FROM " + reader + shape.on_conflict));
    measured.seconds = SecondsSince(start);
    measured.cpu_seconds = CpuSecondsSelf() - cpu_start;
    MR_RETURN_IF_ERROR(ExpectRows(*conn, set.distinct_ids, "the DuckDB baseline"));
  }
  RemoveDatabase(path);
  return measured;
}

Result<double> DuckDbApplyCpuPerMillion(const std::string& dir, int64_t rows, int64_t batch,
                                        bool keyed) {
  const std::string path = dir + (keyed ? "/apply_keyed.duckdb" : "/apply_unkeyed.duckdb");
  RemoveDatabase(path);
  double cpu = 0;
  {
    MR_ASSIGN_OR_RETURN(auto db, engine::Database::Open({.path = path}));
    MR_ASSIGN_OR_RETURN(auto conn, db->Connect());
    MR_RETURN_IF_ERROR(conn->Execute(std::string("CREATE TABLE t (id INTEGER") +
                                     (keyed ? " PRIMARY KEY" : "") +
                                     ", name VARCHAR, qty INTEGER, ts TIMESTAMP)"));
    const std::string typed =
        "SELECT CAST(c0 AS INTEGER), c1, CAST(c2 AS INTEGER), "
        "CAST(CAST(c3 AS TIMESTAMPTZ) AS TIMESTAMP) FROM stage";
    const std::string write =
        keyed ? "INSERT INTO t " + typed +
                    " ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, qty = EXCLUDED.qty, "
                    "ts = EXCLUDED.ts"
              : "DELETE FROM t WHERE id IN (SELECT CAST(c0 AS INTEGER) FROM stage); "
                "INSERT INTO t " +
                    typed;
    for (int64_t first = 1; first <= rows; first += batch) {
      const int64_t last = std::min(rows, first + batch - 1);
      MR_RETURN_IF_ERROR(conn->Execute(
          "CREATE OR REPLACE TEMP TABLE stage AS SELECT CAST(g AS VARCHAR) AS c0, 'name ' || g "
          "AS c1, CAST(g % 97 AS VARCHAR) AS c2, strftime(TIMESTAMP '2026-01-01 00:00:00' + g * "
          "INTERVAL 1 SECOND, '%Y-%m-%d %H:%M:%S') || '+00' AS c3 FROM range(" +
          std::to_string(first) + ", " + std::to_string(last + 1) + ") AS r(g)"));
      const double start = CpuSecondsSelf();
      MR_RETURN_IF_ERROR(conn->Execute("BEGIN; " + write + "; COMMIT"));
      cpu += CpuSecondsSelf() - start;
    }
    MR_RETURN_IF_ERROR(conn->Execute("DROP TABLE stage"));
    const double start = CpuSecondsSelf();
    MR_RETURN_IF_ERROR(conn->Execute("CHECKPOINT"));
    cpu += CpuSecondsSelf() - start;
    MR_RETURN_IF_ERROR(ExpectRows(*conn, rows, "DuckDB's own apply"));
  }
  RemoveDatabase(path);
  return cpu / (static_cast<double>(rows) / 1e6);
}

Result<std::unique_ptr<BenchServer>> StartBenchServer(BenchContext& ctx, const std::string& name,
                                                      const std::vector<std::string>& args) {
  MR_ASSIGN_OR_RETURN(auto server, BenchServer::Start(ctx.ServerDir(name), args));
  MR_RETURN_IF_ERROR(server->Execute("CREATE DATABASE bench"));
  return server;
}

JobSpec FormatJobSpec(const BenchContext& ctx, const std::string& name, const std::string& prefix,
                      const FormatInfo& info) {
  return JobSpec{.name = name,
                 .table = "bench." + name,
                 .uri = std::string("s3://") + kBucket + "/" + prefix + "/*" + info.extension,
                 .format = info.doris_format,
                 .endpoint = ctx.s3->endpoint(),
                 .reader = info.doris_params};
}

Result<double> LoadWithJob(BenchServer& server, const JobSpec& spec, const std::string& columns,
                           int64_t rows, std::chrono::seconds timeout,
                           const std::function<void()>& on_loaded) {
  MR_RETURN_IF_ERROR(server.Execute("CREATE TABLE " + spec.table + " " + columns));
  const SteadyTime start = Now();
  MR_RETURN_IF_ERROR(server.Execute(CreateJobSql(spec)));
  MR_ASSIGN_OR_RETURN(SteadyTime done, server.WaitForRows(spec.table, rows, spec.name, timeout));
  const double seconds = SecondsBetween(start, done);
  if (on_loaded) on_loaded();
  // More rows than the files hold would be a duplicate load: exactly-once broken.
  MR_ASSIGN_OR_RETURN(int64_t loaded, server.QueryInt("SELECT count(*) FROM " + spec.table));
  if (loaded != rows) {
    return Status::DataLoss(spec.table + " holds " + std::to_string(loaded) + " rows, expected " +
                            std::to_string(rows));
  }
  MR_RETURN_IF_ERROR(server.Execute("DROP JOB WHERE jobname = '" + spec.name + "'"));
  MR_RETURN_IF_ERROR(server.Execute("DROP TABLE " + spec.table));
  return seconds;
}

}  // namespace millrace::bench
