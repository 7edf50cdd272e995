// CDC from PostgreSQL (issue 14) and from MySQL/MariaDB (issue 15): cdc_stream jobs ("offset" =
// "latest", max_interval = 1) follow tables of a real PostgreSQL 15 (scenario cdc) or MariaDB
// 10.11 (cdc_mysql) into UNIQUE KEY tables of the real `millrace serve`.
// - Apply rates: rows inserted (and then updated) in transactions of cdc_txn_rows ids; the time
//   runs from the first statement until the target shows all of it (count(*), then sum(qty)),
//   against PostgreSQL's own time for the same statements on a table no job follows, in the
//   same run (the source's own rate). Measured for a job with the default properties (a task
//   takes what has arrived, up to 64 MiB of change data: cdc/change_stream.h) over
//   cdc_default_txns transactions, and for one with the largest s3.max_batch_files over
//   cdc_rows.
// - Backlog apply rates (whether the job keeps up): the same writes made while the job is
//   PAUSED, then the time from RESUME JOB until the target shows them, against the source's
//   own rate. The job reads the slot's (binlog's) backlog without sharing the machine's two
//   cores with the source's writes, as it would beside a source on a machine of its own:
//   an apply rate at least the source's means the job's lag stays bounded under that load.
//   Measured for both jobs, inserts of cdc_rows new ids; updates for the largest. With each,
//   the CPU the server and the source's processes (PostgreSQL's walsender decoding its WAL,
//   MariaDB's binlog dump) used meanwhile, per million rows: whether the two cores, rather
//   than waiting, bound the rate.
// - Backlog ceilings (not figures of Millrace): the machine's cores over the source's CPU per
//   row during the backlog plus DuckDB's own write of the same rows, measured alone after each
//   run (with its key index, and without): the most any apply could reach on these cores.
// - Commit-to-visible latency: one single-row transaction every fresh_period_ms for
//   fresh_seconds, from COMMIT returning to the client until a SELECT through the MySQL front
//   end sees the row.
#include <algorithm>
#include <cstdio>
#include <set>
#include <thread>

#include "mysql/mysql_connection.h"
#include "pg/pg_connection.h"
#include "scenario_util.h"
#include "testing/mariadb_server.h"
#include "testing/postgres_server.h"

namespace millrace::bench {
namespace {

constexpr char kTargetColumns[] =
    "(id INT, name VARCHAR(100), qty INT, ts DATETIME(6)) UNIQUE KEY(id) "
    "DISTRIBUTED BY HASH(id) BUCKETS 1";
// The most changes a batch may take (s3.max_batch_files accepts up to 100000; a CDC job reads
// it as changes, a batch being whole source transactions).
constexpr char kLargestBatch[] = "100000";
constexpr std::chrono::milliseconds kApplyPoll{50};
constexpr std::chrono::milliseconds kLatencyPoll{10};
constexpr std::chrono::seconds kApplyTimeout{900};
constexpr std::chrono::seconds kStreamingTimeout{60};
// The first id of the rows written while a job is paused: past every id written before.
constexpr int64_t kBacklogFirstId = 100'000'000;

// Statement for the ids [first, last]: one transaction of the benchmark's writes.
using Statement = std::function<std::string(int64_t first, int64_t last)>;

// The source database of a run: a real server and one client session of it.
class SourceDb {
 public:
  virtual ~SourceDb() = default;
  // "PostgreSQL 15", for figures.
  virtual std::string name() const = 0;
  virtual Status Connect() = 0;
  virtual Status Execute(const std::string& sql) = 0;
  virtual Result<int64_t> QueryInt(const std::string& sql) = 0;
  // A table's columns: (id int key, name text, qty int, ts a timestamp with time zone).
  virtual std::string Columns() const = 0;
  // Inserts of ids [first, last], one statement.
  virtual std::string Inserts(const std::string& table, int64_t first, int64_t last) const = 0;
  // cdc_stream's parameters for `table`, from the end of the log.
  virtual KeyValues StreamParams(const std::string& table) const = 0;
  // The CPU time the source's server processes have used so far, in seconds.
  virtual double CpuSeconds() const = 0;

  std::string Updates(const std::string& table, int64_t first, int64_t last) const {
    return "UPDATE " + table + " SET qty = qty + 1 WHERE id BETWEEN " + std::to_string(first) +
           " AND " + std::to_string(last);
  }
};

// The first cell of `rows` (optional texts) as an integer; NOT_FOUND naming `sql` when none.
template <typename Rows>
Result<int64_t> FirstInt(const Rows& rows, const std::string& sql) {
  if (rows.empty() || rows[0].empty() || !rows[0][0]) {
    return Status::NotFound("no value from: " + sql);
  }
  return std::stoll(*rows[0][0]);
}

class PgSource final : public SourceDb {
 public:
  explicit PgSource(std::unique_ptr<testing::PostgresServer> server) : server_(std::move(server)) {}
  std::string name() const override { return "PostgreSQL 15"; }
  Status Connect() override {
    MR_ASSIGN_OR_RETURN(conn_, pg::PgConnection::Connect({.host = server_->host(),
                                                          .port = server_->port(),
                                                          .database = "postgres",
                                                          .user = server_->user(),
                                                          .password = server_->password()}));
    // Commits wait for their WAL, whatever the server's default: a walsender sends only
    // flushed WAL, and with synchronous_commit = off COMMIT returns up to a few
    // wal_writer_delay (200 ms) before its change can leave, which the latency would then
    // measure instead of Millrace. Production clients commit this way; so do the rates.
    return conn_->Execute("SET synchronous_commit = on");
  }
  Status Execute(const std::string& sql) override { return conn_->Execute(sql); }
  Result<int64_t> QueryInt(const std::string& sql) override {
    MR_ASSIGN_OR_RETURN(pg::Rows result, conn_->Query(sql));
    return FirstInt(result.rows, sql);
  }
  std::string Columns() const override {
    return "(id int PRIMARY KEY, name text, qty int, ts timestamptz)";
  }
  std::string Inserts(const std::string& table, int64_t first, int64_t last) const override {
    return "INSERT INTO " + table +
           " SELECT g, 'name ' || g, g % 97, timestamptz '2026-01-01 00:00:00+00' + g * "
           "interval '1 second' FROM generate_series(" +
           std::to_string(first) + ", " + std::to_string(last) + ") g";
  }
  KeyValues StreamParams(const std::string& table) const override {
    return {{"type", "postgres"},      {"jdbc_url", server_->JdbcUrl("postgres")},
            {"user", server_->user()}, {"password", server_->password()},
            {"schema", "public"},      {"table", table},
            {"offset", "latest"}};
  }
  double CpuSeconds() const override { return CpuSecondsWithChildren(server_->pid()); }

 private:
  std::unique_ptr<testing::PostgresServer> server_;
  std::unique_ptr<pg::PgConnection> conn_;
};

class MariadbSource final : public SourceDb {
 public:
  explicit MariadbSource(std::unique_ptr<testing::MariadbServer> server)
      : server_(std::move(server)) {}
  std::string name() const override { return "MariaDB 10.11"; }
  Status Connect() override {
    MR_RETURN_IF_ERROR(server_->Sql("CREATE DATABASE IF NOT EXISTS bench").status());
    MR_ASSIGN_OR_RETURN(conn_, mysql::MysqlConnection::Connect({.host = server_->host(),
                                                                .port = server_->port(),
                                                                .user = server_->user(),
                                                                .password = server_->password(),
                                                                .database = "bench"}));
    return Status::Ok();
  }
  Status Execute(const std::string& sql) override { return conn_->Execute(sql); }
  Result<int64_t> QueryInt(const std::string& sql) override {
    MR_ASSIGN_OR_RETURN(mysql::Rows result, conn_->Query(sql));
    return FirstInt(result.rows, sql);
  }
  std::string Columns() const override {
    return "(id INT PRIMARY KEY, name TEXT, qty INT, ts TIMESTAMP(6) NULL)";
  }
  std::string Inserts(const std::string& table, int64_t first, int64_t last) const override {
    return "INSERT INTO " + table +
           " SELECT seq, CONCAT('name ', seq), seq % 97, TIMESTAMP '2026-01-01 00:00:00' + "
           "INTERVAL seq SECOND FROM seq_" +
           std::to_string(first) + "_to_" + std::to_string(last);
  }
  KeyValues StreamParams(const std::string& table) const override {
    return {{"type", "mysql"},         {"jdbc_url", server_->JdbcUrl()},
            {"user", server_->user()}, {"password", server_->password()},
            {"database", "bench"},     {"table", table},
            {"offset", "latest"}};
  }
  double CpuSeconds() const override { return millrace::bench::CpuSeconds(server_->pid()); }

 private:
  std::unique_ptr<testing::MariadbServer> server_;
  std::unique_ptr<mysql::MysqlConnection> conn_;
};

// A source table, the UNIQUE KEY table a job copies it to, and the job.
struct Followed {
  std::string source;
  std::string target;
  std::string job;
};

// An apply rate and the source's own rate for the same writes meanwhile, in rows/s.
struct Applied {
  double rate = 0;
  double source_rate = 0;
};

// A backlog's apply: rows/s from RESUME until visible, and the CPU used meanwhile, in core-s
// per million rows.
struct Backlog {
  double rate = 0;
  double server_cpu = 0;
  double source_cpu = 0;
};

// The figures of one run.
struct RunFigures {
  double source_insert = 0;  // rows/s of the source alone, on a table no job follows
  double source_update = 0;
  Applied default_inserts;  // the job with the default batch limit
  Applied inserts;          // the job with the largest batch limit
  Applied updates;
  Backlog backlog_default_inserts;
  Backlog backlog_inserts;
  Backlog backlog_updates;
  Latencies latency;  // the job with the default batch limit
};

// One run's tables and jobs, on the scenario's servers.
class CdcRun {
 public:
  CdcRun(const BenchConfig& config, SourceDb& source, BenchServer& server, int run)
      : config_(config), source_(source), server_(server), run_(std::to_string(run)) {}

  Result<RunFigures> Measure() {
    MR_RETURN_IF_ERROR(source_.Connect());
    RunFigures f;
    MR_RETURN_IF_ERROR(Baseline(&f));

    const int64_t default_rows =
        static_cast<int64_t>(config_.cdc_default_txns) * config_.cdc_txn_rows;
    MR_ASSIGN_OR_RETURN(const Followed plain, Follow("default", {{"max_interval", "1"}}));
    MR_ASSIGN_OR_RETURN(f.default_inserts, ApplyInserts(plain, default_rows));
    // Single-row transactions: the batch limit does not matter to them.
    MR_ASSIGN_OR_RETURN(f.latency, CommitToVisible(plain, default_rows + 1));
    MR_ASSIGN_OR_RETURN(f.backlog_default_inserts,
                        BacklogInserts(plain, kBacklogFirstId, config_.cdc_rows));
    MR_RETURN_IF_ERROR(Drop(plain));

    MR_ASSIGN_OR_RETURN(
        const Followed large,
        Follow("large", {{"max_interval", "1"}, {"s3.max_batch_files", kLargestBatch}}));
    MR_ASSIGN_OR_RETURN(f.inserts, ApplyInserts(large, config_.cdc_rows));
    MR_ASSIGN_OR_RETURN(f.updates, ApplyUpdates(large, config_.cdc_rows));
    MR_ASSIGN_OR_RETURN(f.backlog_inserts,
                        BacklogInserts(large, kBacklogFirstId, config_.cdc_rows));
    MR_ASSIGN_OR_RETURN(f.backlog_updates,
                        BacklogUpdates(large, kBacklogFirstId, config_.cdc_rows));
    MR_RETURN_IF_ERROR(Drop(large));
    return f;
  }

 private:
  // Runs `statement` over ids from..from + rows - 1, cdc_txn_rows ids a transaction; returns
  // the seconds the client waited.
  Result<double> WriteAll(const Statement& statement, int64_t rows, int64_t from = 1) {
    const SteadyTime start = Now();
    const int64_t end = from + rows - 1;
    for (int64_t first = from; first <= end; first += config_.cdc_txn_rows) {
      const int64_t last = std::min(end, first + config_.cdc_txn_rows - 1);
      MR_RETURN_IF_ERROR(source_.Execute(statement(first, last)));
    }
    return SecondsSince(start);
  }

  Status Baseline(RunFigures* f) {
    const std::string table = "bench_base_" + run_;
    const auto rows = static_cast<double>(config_.cdc_rows);
    MR_RETURN_IF_ERROR(source_.Execute("CREATE TABLE " + table + " " + source_.Columns()));
    MR_ASSIGN_OR_RETURN(const double inserts, WriteAll(Inserts(table), config_.cdc_rows));
    MR_ASSIGN_OR_RETURN(const double updates, WriteAll(Updates(table), config_.cdc_rows));
    MR_RETURN_IF_ERROR(source_.Execute("DROP TABLE " + table));
    f->source_insert = rows / inserts;
    f->source_update = rows / updates;
    return Status::Ok();
  }

  Statement Inserts(const std::string& table) const {
    return
        [this, table](int64_t first, int64_t last) { return source_.Inserts(table, first, last); };
  }
  Statement Updates(const std::string& table) const {
    return
        [this, table](int64_t first, int64_t last) { return source_.Updates(table, first, last); };
  }

  // Creates a source, its target and a job with `properties`; returns once the job streams.
  Result<Followed> Follow(const std::string& name, const KeyValues& properties) {
    const Followed t{.source = "bench_cdc_" + name + "_" + run_,
                     .target = "bench.cdc_" + name + "_" + run_,
                     .job = "cdc_" + name + "_" + run_};
    MR_RETURN_IF_ERROR(source_.Execute("CREATE TABLE " + t.source + " " + source_.Columns()));
    MR_RETURN_IF_ERROR(server_.Execute("CREATE TABLE " + t.target + " " + kTargetColumns));
    MR_RETURN_IF_ERROR(
        server_.Execute(CreateCdcJobSql({.name = t.job,
                                         .table = t.target,
                                         .properties = properties,
                                         .source = source_.StreamParams(t.source)})));
    // With "offset" = "latest" the job gets what commits after its first task found the end of
    // the log (PostgreSQL: made its slot) and committed it as its offset: the writes start once
    // the job is RUNNING with an offset.
    const SteadyTime deadline = Now() + kStreamingTimeout;
    while (true) {
      MR_RETURN_IF_ERROR(server_.CheckJobRunning(t.job));
      MR_ASSIGN_OR_RETURN(Rows status,
                          server_.Query("SELECT Status, coalesce(CurrentOffset, '') FROM "
                                        "jobs(\"type\" = \"insert\") WHERE Name = '" +
                                        t.job + "'"));
      if (!status.empty() && status[0][0] == "RUNNING" && !status[0][1].empty()) return t;
      if (Now() >= deadline) {
        return Status::DeadlineExceeded("job " + t.job + " is not streaming after " +
                                        std::to_string(kStreamingTimeout.count()) + " s");
      }
      std::this_thread::sleep_for(kApplyPoll);
    }
  }

  // DROP JOB also drops a PostgreSQL job's slot and publication, so the next job starts clean.
  Status Drop(const Followed& t) {
    MR_RETURN_IF_ERROR(server_.Execute("DROP JOB WHERE jobname = '" + t.job + "'"));
    MR_RETURN_IF_ERROR(server_.Execute("DROP TABLE " + t.target));
    return source_.Execute("DROP TABLE " + t.source);
  }

  // Writes ids 1..rows of t.source with `statement` on a thread of its own while this thread
  // polls `target_value` until it reaches `want`; then checks the target against the source.
  Result<Applied> TimeApply(const Followed& t, const Statement& statement, int64_t rows,
                            const std::string& target_value, int64_t want) {
    double source_seconds = 0;
    const SteadyTime start = Now();
    Background writes([&]() -> Status {
      MR_ASSIGN_OR_RETURN(source_seconds, WriteAll(statement, rows));
      return Status::Ok();
    });
    auto visible = server_.WaitForValue(target_value, want, t.job, kApplyTimeout, kApplyPoll,
                                        [&] { return writes.Failure(); });
    MR_RETURN_IF_ERROR(writes.Join());
    MR_RETURN_IF_ERROR(visible.status());

    // Row count and sum(qty) of target and source agree once the job caught up.
    MR_ASSIGN_OR_RETURN(const int64_t source_sum,
                        source_.QueryInt("SELECT sum(qty) FROM " + t.source));
    MR_ASSIGN_OR_RETURN(const int64_t count, server_.QueryInt("SELECT count(*) FROM " + t.target));
    MR_ASSIGN_OR_RETURN(const int64_t sum, server_.QueryInt("SELECT sum(qty) FROM " + t.target));
    if (count != rows || sum != source_sum) {
      return Status::DataLoss(t.target + " holds " + std::to_string(count) + " rows of sum(qty) " +
                              std::to_string(sum) + ", its source " + std::to_string(rows) +
                              " of " + std::to_string(source_sum));
    }
    const auto n = static_cast<double>(rows);
    return Applied{n / SecondsBetween(start, *visible), n / source_seconds};
  }

  Result<Applied> ApplyInserts(const Followed& t, int64_t rows) {
    return TimeApply(t, Inserts(t.source), rows, "SELECT count(*) FROM " + t.target, rows);
  }

  Result<Applied> ApplyUpdates(const Followed& t, int64_t rows) {
    // Each row's qty grows by one, so sum(qty) reaches its final value only when every update
    // is applied.
    MR_ASSIGN_OR_RETURN(const int64_t sum, source_.QueryInt("SELECT sum(qty) FROM " + t.source));
    return TimeApply(t, Updates(t.source), rows, "SELECT sum(qty) FROM " + t.target, sum + rows);
  }

  // Writes ids [from, from + rows) with `statement` while the job is paused, resumes it, and
  // returns rows/s from RESUME until `target_value` reaches `want`, with the CPU the server and
  // the source used meanwhile.
  Result<Backlog> TimeBacklog(const Followed& t, const Statement& statement, int64_t from,
                              int64_t rows, const std::string& target_value, int64_t want) {
    const std::string where = " JOB WHERE jobname = '" + t.job + "'";
    MR_RETURN_IF_ERROR(server_.Execute("PAUSE" + where));
    MR_RETURN_IF_ERROR(WriteAll(statement, rows, from).status());
    const double server_cpu = millrace::bench::CpuSeconds(server_.pid());
    const double source_cpu = source_.CpuSeconds();
    const SteadyTime start = Now();
    MR_RETURN_IF_ERROR(server_.Execute("RESUME" + where));
    MR_ASSIGN_OR_RETURN(const SteadyTime visible,
                        server_.WaitForValue(target_value, want, t.job, kApplyTimeout, kApplyPoll));
    const double millions = static_cast<double>(rows) / 1e6;
    return Backlog{
        .rate = static_cast<double>(rows) / SecondsBetween(start, visible),
        .server_cpu = (millrace::bench::CpuSeconds(server_.pid()) - server_cpu) / millions,
        .source_cpu = (source_.CpuSeconds() - source_cpu) / millions};
  }

  Result<Backlog> BacklogInserts(const Followed& t, int64_t from, int64_t rows) {
    MR_ASSIGN_OR_RETURN(const int64_t count, server_.QueryInt("SELECT count(*) FROM " + t.target));
    return TimeBacklog(t, Inserts(t.source), from, rows, "SELECT count(*) FROM " + t.target,
                       count + rows);
  }

  Result<Backlog> BacklogUpdates(const Followed& t, int64_t from, int64_t rows) {
    MR_ASSIGN_OR_RETURN(const int64_t sum, source_.QueryInt("SELECT sum(qty) FROM " + t.source));
    return TimeBacklog(t, Updates(t.source), from, rows, "SELECT sum(qty) FROM " + t.target,
                       sum + rows);
  }

  // Inserts row i with id first_id + i, one transaction each.
  Result<Latencies> CommitToVisible(const Followed& t, int64_t first_id) {
    // The job applies whole source transactions in commit order, so max(id) in the target
    // means every row up to it is visible.
    int64_t next_unseen = first_id;
    auto latencies = MeasureVisibility(
        {.writes = config_.fresh_seconds * 1000 / config_.fresh_period_ms,
         .period = std::chrono::milliseconds(config_.fresh_period_ms),
         .poll_every = kLatencyPoll,
         .write =
             [&](int i) {
               return source_.Execute("INSERT INTO " + t.source + " VALUES (" +
                                      std::to_string(first_id + i) + ", 'latency', " +
                                      std::to_string(i) + ", now())");
             },
         .poll = [&](const std::function<void(int)>& seen) -> Status {
           MR_ASSIGN_OR_RETURN(const int64_t max_id,
                               server_.QueryInt("SELECT max(id) FROM " + t.target));
           for (; next_unseen <= max_id; ++next_unseen)
             seen(static_cast<int>(next_unseen - first_id));
           return Status::Ok();
         }});
    if (!latencies.ok()) {
      MR_RETURN_IF_ERROR(server_.CheckJobRunning(t.job));
      return latencies.status().WithContext("commit-to-visible");
    }
    return SummarizeLatencies(*latencies);
  }

  const BenchConfig& config_;
  // Used by one thread at a time: a Background writer or the run's own thread.
  SourceDb& source_;
  BenchServer& server_;
  const std::string run_;
};

// "12.3 s": how long `rows` take at `rate` rows/s.
std::string Duration(int64_t rows, double rate) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", rate > 0 ? static_cast<double>(rows) / rate : 0);
  return buf;
}

// What bounds the backlog's inserts on this machine, whatever the apply does: its cores shared
// between the source's processes (their CPU per million rows during each run's backlog, largest
// batch) and DuckDB's own writing of the same rows (DuckDbApplyCpuPerMillion, batches of the
// largest limit, measured after each run). The ceiling is cores / (source + DuckDB) rows/s:
// every other cost of the apply (reading the stream, staging, its offsets) only lowers it.
// Once with DuckDB's keyed upsert (the target of a UNIQUE KEY table today), once with a table
// written without DuckDB's index on the key (DELETE by join, then INSERT).
Result<std::vector<Figure>> BacklogCeilings(BenchContext& ctx, const std::string& prefix,
                                            const std::string& db,
                                            const std::vector<RunFigures>& runs) {
  const BenchConfig& c = ctx.config;
  const std::string dir = ctx.Subdir("duckdb-apply");
  const int64_t batch = std::stoll(kLargestBatch);
  const auto cores = static_cast<double>(std::thread::hardware_concurrency());
  std::vector<Figure> figures;
  for (const bool keyed : {true, false}) {
    std::vector<double> costs;
    std::vector<double> ceilings;
    std::vector<double> source_rates;
    for (const RunFigures& f : runs) {
      MR_ASSIGN_OR_RETURN(const double cost,
                          DuckDbApplyCpuPerMillion(dir, c.cdc_rows, batch, keyed));
      costs.push_back(cost);
      ceilings.push_back(cores * 1e6 / (f.backlog_inserts.source_cpu + cost));
      source_rates.push_back(f.source_insert);
    }
    const std::string how =
        keyed ? "INSERT ... ON CONFLICT (id) DO UPDATE into a table with the PRIMARY KEY"
              : "DELETE of the batch's keys (a join) and INSERT, into a table without a key";
    figures.push_back(
        {.name = prefix + " backlog inserts, ceiling on these cores, DuckDB " +
                 (keyed ? "upserting by its key index" : "writing without a key index"),
         .unit = "rows/s",
         .value = Summarize(ceilings),
         .baseline = Summarize(source_rates),
         .baseline_what = db + "'s own INSERT rate (as above)",
         .note = "not a measurement of Millrace: the most any apply of the backlog above could "
                 "reach on these " +
                 std::to_string(std::thread::hardware_concurrency()) +
                 " cores, if its only work were DuckDB's own writing of the same rows and the "
                 "source's processes used what they did during that backlog (largest batch): "
                 "cores / (their CPU + DuckDB's) per row. DuckDB alone: " +
                 FormatSummary(Summarize(costs)) + " core-s per million rows by " + how +
                 ", batches of " + kLargestBatch +
                 " rows staged as the stream's texts (the timestamp cast through "
                 "TIMESTAMPTZ), durable commits, the final CHECKPOINT counted. A ratio under 1 "
                 "means the backlog target cannot be met on this machine with that write"});
  }
  return figures;
}

// The figures of `source`'s scenario; `prefix` starts their names ("CDC", "CDC from MariaDB").
Result<std::vector<Figure>> RunCdcFrom(BenchContext& ctx, SourceDb& source,
                                       const std::string& prefix) {
  const BenchConfig& c = ctx.config;
  const int64_t default_rows = static_cast<int64_t>(c.cdc_default_txns) * c.cdc_txn_rows;
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "cdc-server"));
  const std::string db = source.name();
  std::vector<RunFigures> runs;
  for (int run = 1; run <= c.runs; ++run) {
    CdcRun cdc_run(c, source, *server, run);
    MR_ASSIGN_OR_RETURN(const RunFigures f, cdc_run.Measure());
    std::printf(
        "  run %d: %s alone: %lld inserts %s, updates %s; default batch limit: %lld "
        "inserts applied in %s; largest: inserts applied in %s (source %s), updates in %s "
        "(source %s); after a pause, from RESUME: inserts %s (default), %s (largest), updates "
        "%s; commit-to-visible p50 %.3f s, p99 %.3f s, max %.3f s (row %zu)\n",
        run, db.c_str(), static_cast<long long>(c.cdc_rows),
        Duration(c.cdc_rows, f.source_insert).c_str(),
        Duration(c.cdc_rows, f.source_update).c_str(), static_cast<long long>(default_rows),
        Duration(default_rows, f.default_inserts.rate).c_str(),
        Duration(c.cdc_rows, f.inserts.rate).c_str(),
        Duration(c.cdc_rows, f.inserts.source_rate).c_str(),
        Duration(c.cdc_rows, f.updates.rate).c_str(),
        Duration(c.cdc_rows, f.updates.source_rate).c_str(),
        Duration(c.cdc_rows, f.backlog_default_inserts.rate).c_str(),
        Duration(c.cdc_rows, f.backlog_inserts.rate).c_str(),
        Duration(c.cdc_rows, f.backlog_updates.rate).c_str(), f.latency.p50, f.latency.p99,
        f.latency.max, f.latency.worst);
    std::fflush(stdout);
    runs.push_back(f);
  }
  auto summary = [&](const std::function<double(const RunFigures&)>& field) {
    std::vector<double> values;
    for (const RunFigures& f : runs)
      values.push_back(field(f));
    return Summarize(values);
  };
  const std::string writes = " in transactions of " + std::to_string(c.cdc_txn_rows) +
                             " ids (int key, text, int, timestamp), one session, "
                             "durable commits; max_interval = 1";
  auto followed = [&](const std::string& what, const Summary& rate) {
    return "; " + db + "'s own rate for these " + what +
           " while the job followed the table: " + FormatSummary(rate) + " rows/s";
  };
  const std::string insert_baseline = db + "'s own INSERT rate, " + std::to_string(c.cdc_rows) +
                                      " rows in the same transactions, into a table no job follows";
  std::vector<Figure> figures = {
      {.name = prefix + " inserts applied, default batch limit",
       .unit = "rows/s",
       .value = summary([](const RunFigures& f) { return f.default_inserts.rate; }),
       .baseline = summary([](const RunFigures& f) { return f.source_insert; }),
       .baseline_what = insert_baseline,
       .note = std::to_string(default_rows) + " rows" + writes +
               ", default properties (a task takes the whole transactions that have "
               "arrived, up to 64 MiB of change data); from the first INSERT until count(*) on "
               "the target is the source's (polled every 50 ms)" +
               followed("INSERTs", summary([](const RunFigures& f) {
                          return f.default_inserts.source_rate;
                        }))},
      {.name = prefix + " inserts applied, largest batch limit",
       .unit = "rows/s",
       .value = summary([](const RunFigures& f) { return f.inserts.rate; }),
       .baseline = summary([](const RunFigures& f) { return f.source_insert; }),
       .baseline_what = insert_baseline,
       .note =
           std::to_string(c.cdc_rows) + " rows" + writes +
           ", s3.max_batch_files = " + kLargestBatch +
           "; from the first INSERT until count(*) on the target is the source's (polled "
           "every 50 ms)" +
           followed("INSERTs", summary([](const RunFigures& f) { return f.inserts.source_rate; }))},
      {.name = prefix + " updates applied, largest batch limit",
       .unit = "rows/s",
       .value = summary([](const RunFigures& f) { return f.updates.rate; }),
       .baseline = summary([](const RunFigures& f) { return f.source_update; }),
       .baseline_what = db + "'s own UPDATE rate, the same statements on a table no job follows",
       .note = "UPDATE ... SET qty = qty + 1 over the " + std::to_string(c.cdc_rows) + " rows" +
               writes + ", s3.max_batch_files = " + kLargestBatch +
               "; from the first UPDATE until sum(qty) on the target is the source's (polled "
               "every 50 ms)" +
               followed("UPDATEs",
                        summary([](const RunFigures& f) { return f.updates.source_rate; }))}};
  const std::string backlog = std::to_string(c.cdc_rows) + " rows" + writes +
                              ", written while the job was PAUSED; from RESUME JOB until ";
  // Held to keeping up: at least the source's own rate.
  auto backlog_figure = [&](const std::string& what, Backlog RunFigures::*backlog, bool updates,
                            const std::string& note) {
    auto cpu = [&](double Backlog::*of) {
      return FormatSummary(summary([&](const RunFigures& f) { return f.*backlog.*of; }));
    };
    figures.push_back(
        {.name = prefix + " backlog " + what,
         .unit = "rows/s",
         .value = summary([backlog](const RunFigures& f) { return (f.*backlog).rate; }),
         .baseline = summary([updates](const RunFigures& f) {
           return updates ? f.source_update : f.source_insert;
         }),
         .baseline_what = updates ? db + "'s own UPDATE rate, the same statements on a table no "
                                         "job follows"
                                  : insert_baseline,
         .target = Target::RatioAtLeast(1.0),
         .note = note + "; CPU meanwhile per million rows: the server " +
                 cpu(&Backlog::server_cpu) + " core-s, " + db + "'s processes " +
                 cpu(&Backlog::source_cpu) + " core-s (" +
                 std::to_string(std::thread::hardware_concurrency()) + " cores)"});
  };
  const std::string largest = ", s3.max_batch_files = " + std::string(kLargestBatch);
  backlog_figure("inserts applied, default batch limit", &RunFigures::backlog_default_inserts,
                 false, backlog + "count(*) on the target is the source's, default properties");
  backlog_figure("inserts applied, largest batch limit", &RunFigures::backlog_inserts, false,
                 backlog + "count(*) on the target is the source's" + largest);
  backlog_figure("updates applied, largest batch limit", &RunFigures::backlog_updates, true,
                 "UPDATE ... SET qty = qty + 1 over " + backlog +
                     "sum(qty) on the target is the source's" + largest);
  MR_ASSIGN_OR_RETURN(std::vector<Figure> ceilings, BacklogCeilings(ctx, prefix, db, runs));
  for (Figure& f : ceilings)
    figures.push_back(std::move(f));
  std::vector<Latencies> latencies;
  for (const RunFigures& f : runs)
    latencies.push_back(f.latency);
  for (Figure& f : LatencyFigures(
           prefix + " commit-to-visible", latencies, {Target::Kind::kValueAtMost, 1.0, "<= 1 s"},
           "max_interval = 1; one single-row INSERT every " + std::to_string(c.fresh_period_ms) +
               " ms for " + std::to_string(c.fresh_seconds) +
               " s per run, from its COMMIT returning (a durable commit) until max(id) on "
               "the target shows it (polled every 10 ms); percentiles per run, then median over "
               "runs")) {
    figures.push_back(std::move(f));
  }
  return figures;
}

}  // namespace

Result<std::vector<Figure>> RunCdc(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto server, testing::PostgresServer::Start());
  PgSource source(std::move(server));
  return RunCdcFrom(ctx, source, "CDC");
}

Result<std::vector<Figure>> RunCdcMysql(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto server, testing::MariadbServer::Start());
  MariadbSource source(std::move(server));
  return RunCdcFrom(ctx, source, "CDC from MariaDB");
}

}  // namespace millrace::bench
