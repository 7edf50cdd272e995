// CDC from PostgreSQL (issue 14): cdc_stream jobs ("offset" = "latest", max_interval = 1)
// follow tables of a real PostgreSQL 15 into UNIQUE KEY tables of the real `millrace serve`.
// - Apply rates: rows inserted (and then updated) in transactions of cdc_txn_rows ids; the time
//   runs from the first statement until the target shows all of it (count(*), then sum(qty)),
//   against PostgreSQL's own time for the same statements on a table no job follows, in the
//   same run. Measured for a job with the default batch limit (the setup: 256 changes,
//   so one source transaction of cdc_txn_rows a task) over cdc_default_txns transactions, and
//   for one with the largest batch limit over cdc_rows.
// - Commit-to-visible latency: one single-row transaction every fresh_period_ms for
//   fresh_seconds, from COMMIT returning to the client until a SELECT through the MySQL front
//   end sees the row.
#include <algorithm>
#include <cstdio>
#include <set>
#include <thread>

#include "pg/pg_connection.h"
#include "scenario_util.h"
#include "testing/postgres_server.h"

namespace millrace::bench {
namespace {

using testing::PostgresServer;

constexpr char kPgColumns[] = "(id int PRIMARY KEY, name text, qty int, ts timestamptz)";
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

// Statement for the ids [first, last]: one transaction of the benchmark's writes.
using Statement = std::function<std::string(int64_t first, int64_t last)>;

Statement Inserts(const std::string& table) {
  return [table](int64_t first, int64_t last) {
    return "INSERT INTO " + table +
           " SELECT g, 'name ' || g, g % 97, timestamptz '2026-01-01 00:00:00+00' + g * "
           "interval '1 second' FROM generate_series(" +
           std::to_string(first) + ", " + std::to_string(last) + ") g";
  };
}

Statement Updates(const std::string& table) {
  return [table](int64_t first, int64_t last) {
    return "UPDATE " + table + " SET qty = qty + 1 WHERE id BETWEEN " + std::to_string(first) +
           " AND " + std::to_string(last);
  };
}

// A PostgreSQL table, the UNIQUE KEY table a job copies it to, and the job.
struct Followed {
  std::string source;
  std::string target;
  std::string job;
};

// An apply rate and PostgreSQL's own rate for the same writes meanwhile, in rows/s.
struct Applied {
  double rate = 0;
  double pg_rate = 0;
};

// The figures of one run.
struct RunFigures {
  double pg_insert = 0;  // rows/s of PostgreSQL alone, on a table no job follows
  double pg_update = 0;
  Applied default_inserts;  // the job with the default batch limit
  Applied inserts;          // the job with the largest batch limit
  Applied updates;
  Latencies latency;  // the job with the default batch limit
};

// One run's tables and jobs, on the scenario's servers.
class CdcRun {
 public:
  CdcRun(const BenchConfig& config, const PostgresServer& pg, BenchServer& server, int run)
      : config_(config), pg_(pg), server_(server), run_(std::to_string(run)) {}

  Result<RunFigures> Measure() {
    MR_RETURN_IF_ERROR(Connect());
    RunFigures f;
    MR_RETURN_IF_ERROR(Baseline(&f));

    const int64_t default_rows =
        static_cast<int64_t>(config_.cdc_default_txns) * config_.cdc_txn_rows;
    MR_ASSIGN_OR_RETURN(const Followed plain, Follow("default", {{"max_interval", "1"}}));
    MR_ASSIGN_OR_RETURN(f.default_inserts, ApplyInserts(plain, default_rows));
    // Single-row transactions: the batch limit does not matter to them.
    MR_ASSIGN_OR_RETURN(f.latency, CommitToVisible(plain, default_rows + 1));
    MR_RETURN_IF_ERROR(Drop(plain));

    MR_ASSIGN_OR_RETURN(
        const Followed large,
        Follow("large", {{"max_interval", "1"}, {"s3.max_batch_files", kLargestBatch}}));
    MR_ASSIGN_OR_RETURN(f.inserts, ApplyInserts(large, config_.cdc_rows));
    MR_ASSIGN_OR_RETURN(f.updates, ApplyUpdates(large, config_.cdc_rows));
    MR_RETURN_IF_ERROR(Drop(large));
    return f;
  }

 private:
  Status Connect() {
    MR_ASSIGN_OR_RETURN(writer_, pg::PgConnection::Connect({.host = pg_.host(),
                                                            .port = pg_.port(),
                                                            .database = "postgres",
                                                            .user = pg_.user(),
                                                            .password = pg_.password()}));
    // Commits wait for their WAL, whatever the server's default: a walsender sends only
    // flushed WAL, and with synchronous_commit = off COMMIT returns up to a few
    // wal_writer_delay (200 ms) before its change can leave, which the latency would then
    // measure instead of Millrace. Production clients commit this way; so do the rates.
    return writer_->Execute("SET synchronous_commit = on");
  }

  // Runs `statement` over ids 1..rows, cdc_txn_rows ids a transaction; returns the seconds the
  // client waited.
  Result<double> WriteAll(const Statement& statement, int64_t rows) {
    const SteadyTime start = Now();
    for (int64_t first = 1; first <= rows; first += config_.cdc_txn_rows) {
      const int64_t last = std::min(rows, first + config_.cdc_txn_rows - 1);
      MR_RETURN_IF_ERROR(writer_->Execute(statement(first, last)));
    }
    return SecondsSince(start);
  }

  Result<int64_t> PgInt(const std::string& sql) {
    MR_ASSIGN_OR_RETURN(pg::Rows result, writer_->Query(sql));
    if (result.rows.empty() || result.rows[0].empty() || !result.rows[0][0]) {
      return Status::NotFound("no value from: " + sql);
    }
    return std::stoll(*result.rows[0][0]);
  }

  Status Baseline(RunFigures* f) {
    const std::string table = "bench_base_" + run_;
    const auto rows = static_cast<double>(config_.cdc_rows);
    MR_RETURN_IF_ERROR(writer_->Execute("CREATE TABLE " + table + " " + kPgColumns));
    MR_ASSIGN_OR_RETURN(const double inserts, WriteAll(Inserts(table), config_.cdc_rows));
    MR_ASSIGN_OR_RETURN(const double updates, WriteAll(Updates(table), config_.cdc_rows));
    MR_RETURN_IF_ERROR(writer_->Execute("DROP TABLE " + table));
    f->pg_insert = rows / inserts;
    f->pg_update = rows / updates;
    return Status::Ok();
  }

  // The replication slots, or only the active ones (a walsender is streaming from them).
  Result<std::set<std::string>> Slots(bool active_only) {
    MR_ASSIGN_OR_RETURN(pg::Rows result,
                        writer_->Query(std::string("SELECT slot_name FROM pg_replication_slots") +
                                       (active_only ? " WHERE active" : "")));
    std::set<std::string> names;
    for (const pg::Row& row : result.rows)
      names.insert(row[0].value_or(""));
    return names;
  }

  // Creates a source, its target and a job with `properties`; returns once the job streams.
  Result<Followed> Follow(const std::string& name, const KeyValues& properties) {
    const Followed t{.source = "bench_cdc_" + name + "_" + run_,
                     .target = "bench.cdc_" + name + "_" + run_,
                     .job = "cdc_" + name + "_" + run_};
    MR_RETURN_IF_ERROR(writer_->Execute("CREATE TABLE " + t.source + " " + kPgColumns));
    MR_RETURN_IF_ERROR(server_.Execute("CREATE TABLE " + t.target + " " + kTargetColumns));
    MR_ASSIGN_OR_RETURN(const std::set<std::string> before, Slots(false));
    MR_RETURN_IF_ERROR(
        server_.Execute(CreateCdcJobSql({.name = t.job,
                                         .table = t.target,
                                         .properties = properties,
                                         .source = {{"type", "postgres"},
                                                    {"jdbc_url", pg_.JdbcUrl("postgres")},
                                                    {"user", pg_.user()},
                                                    {"password", pg_.password()},
                                                    {"schema", "public"},
                                                    {"table", t.source},
                                                    {"offset", "latest"}}})));
    // With "offset" = "latest" the job gets what commits after its slot was created: the writes
    // start once the job is RUNNING and a walsender streams from a slot that was not there
    // before (the job's; its name holds the job's id, which SQL does not show).
    const SteadyTime deadline = Now() + kStreamingTimeout;
    while (true) {
      MR_RETURN_IF_ERROR(server_.CheckJobRunning(t.job));
      MR_ASSIGN_OR_RETURN(
          Rows status,
          server_.Query("SELECT Status FROM jobs(\"type\" = \"insert\") WHERE Name = '" + t.job +
                        "'"));
      MR_ASSIGN_OR_RETURN(const std::set<std::string> active, Slots(true));
      const bool running = !status.empty() && status[0][0] == "RUNNING";
      const bool streaming = std::any_of(active.begin(), active.end(),
                                         [&](const std::string& s) { return !before.count(s); });
      if (running && streaming) return t;
      if (Now() >= deadline) {
        return Status::DeadlineExceeded("job " + t.job + " is not streaming after " +
                                        std::to_string(kStreamingTimeout.count()) + " s");
      }
      std::this_thread::sleep_for(kApplyPoll);
    }
  }

  // DROP JOB also drops the job's slot and publication, so the next job starts clean.
  Status Drop(const Followed& t) {
    MR_RETURN_IF_ERROR(server_.Execute("DROP JOB WHERE jobname = '" + t.job + "'"));
    MR_RETURN_IF_ERROR(server_.Execute("DROP TABLE " + t.target));
    return writer_->Execute("DROP TABLE " + t.source);
  }

  // Writes ids 1..rows of t.source with `statement` on a thread of its own while this thread
  // polls `target_value` until it reaches `want`; then checks the target against the source.
  Result<Applied> TimeApply(const Followed& t, const Statement& statement, int64_t rows,
                            const std::string& target_value, int64_t want) {
    double pg_seconds = 0;
    const SteadyTime start = Now();
    Background writes([&]() -> Status {
      MR_ASSIGN_OR_RETURN(pg_seconds, WriteAll(statement, rows));
      return Status::Ok();
    });
    auto visible = server_.WaitForValue(target_value, want, t.job, kApplyTimeout, kApplyPoll,
                                        [&] { return writes.Failure(); });
    MR_RETURN_IF_ERROR(writes.Join());
    MR_RETURN_IF_ERROR(visible.status());

    // Row count and sum(qty) of target and source agree once the job caught up.
    MR_ASSIGN_OR_RETURN(const int64_t source_sum, PgInt("SELECT sum(qty) FROM " + t.source));
    MR_ASSIGN_OR_RETURN(const int64_t count, server_.QueryInt("SELECT count(*) FROM " + t.target));
    MR_ASSIGN_OR_RETURN(const int64_t sum, server_.QueryInt("SELECT sum(qty) FROM " + t.target));
    if (count != rows || sum != source_sum) {
      return Status::DataLoss(t.target + " holds " + std::to_string(count) + " rows of sum(qty) " +
                              std::to_string(sum) + ", its source " + std::to_string(rows) +
                              " of " + std::to_string(source_sum));
    }
    const auto n = static_cast<double>(rows);
    return Applied{n / SecondsBetween(start, *visible), n / pg_seconds};
  }

  Result<Applied> ApplyInserts(const Followed& t, int64_t rows) {
    return TimeApply(t, Inserts(t.source), rows, "SELECT count(*) FROM " + t.target, rows);
  }

  Result<Applied> ApplyUpdates(const Followed& t, int64_t rows) {
    // Each row's qty grows by one, so sum(qty) reaches its final value only when every update
    // is applied.
    MR_ASSIGN_OR_RETURN(const int64_t sum, PgInt("SELECT sum(qty) FROM " + t.source));
    return TimeApply(t, Updates(t.source), rows, "SELECT sum(qty) FROM " + t.target, sum + rows);
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
               return writer_->Execute("INSERT INTO " + t.source + " VALUES (" +
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
  const PostgresServer& pg_;
  BenchServer& server_;
  const std::string run_;
  // Used by one thread at a time: a Background writer or the run's own thread.
  std::unique_ptr<pg::PgConnection> writer_;
};

// "12.3 s": how long `rows` take at `rate` rows/s.
std::string Duration(int64_t rows, double rate) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", rate > 0 ? static_cast<double>(rows) / rate : 0);
  return buf;
}

}  // namespace

Result<std::vector<Figure>> RunCdc(BenchContext& ctx) {
  const BenchConfig& c = ctx.config;
  const int64_t default_rows = static_cast<int64_t>(c.cdc_default_txns) * c.cdc_txn_rows;
  MR_ASSIGN_OR_RETURN(auto pg, PostgresServer::Start());
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "cdc-server"));
  std::vector<RunFigures> runs;
  for (int run = 1; run <= c.runs; ++run) {
    CdcRun cdc_run(c, *pg, *server, run);
    MR_ASSIGN_OR_RETURN(const RunFigures f, cdc_run.Measure());
    std::printf(
        "  run %d: PostgreSQL alone: %lld inserts %s, updates %s; default batch limit: %lld "
        "inserts applied in %s; largest: inserts applied in %s (PostgreSQL %s), updates in %s "
        "(PostgreSQL %s); commit-to-visible p50 %.3f s, p99 %.3f s, max %.3f s (row %zu)\n",
        run, static_cast<long long>(c.cdc_rows), Duration(c.cdc_rows, f.pg_insert).c_str(),
        Duration(c.cdc_rows, f.pg_update).c_str(), static_cast<long long>(default_rows),
        Duration(default_rows, f.default_inserts.rate).c_str(),
        Duration(c.cdc_rows, f.inserts.rate).c_str(),
        Duration(c.cdc_rows, f.inserts.pg_rate).c_str(),
        Duration(c.cdc_rows, f.updates.rate).c_str(),
        Duration(c.cdc_rows, f.updates.pg_rate).c_str(), f.latency.p50, f.latency.p99,
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
                             " ids (int key, text, int, timestamptz), one session, "
                             "synchronous_commit = on; max_interval = 1";
  auto followed = [](const std::string& what, const Summary& pg_rate) {
    return "; PostgreSQL's own rate for these " + what +
           " while the job followed the table: " + FormatSummary(pg_rate) + " rows/s";
  };
  const std::string insert_baseline = "PostgreSQL 15's own INSERT rate, " +
                                      std::to_string(c.cdc_rows) +
                                      " rows in the same transactions, into a table no job follows";
  std::vector<Figure> figures = {
      {.name = "CDC inserts applied, default batch limit",
       .unit = "rows/s",
       .value = summary([](const RunFigures& f) { return f.default_inserts.rate; }),
       .baseline = summary([](const RunFigures& f) { return f.pg_insert; }),
       .baseline_what = insert_baseline,
       .note = std::to_string(default_rows) + " rows" + writes +
               ", default s3.max_batch_files (256 changes; a batch is at least one whole "
               "transaction); from the first INSERT until count(*) on the target is the "
               "source's (polled every 50 ms)" +
               followed("INSERTs",
                        summary([](const RunFigures& f) { return f.default_inserts.pg_rate; }))},
      {.name = "CDC inserts applied, largest batch limit",
       .unit = "rows/s",
       .value = summary([](const RunFigures& f) { return f.inserts.rate; }),
       .baseline = summary([](const RunFigures& f) { return f.pg_insert; }),
       .baseline_what = insert_baseline,
       .note = std::to_string(c.cdc_rows) + " rows" + writes +
               ", s3.max_batch_files = " + kLargestBatch +
               "; from the first INSERT until count(*) on the target is the source's (polled "
               "every 50 ms)" +
               followed("INSERTs", summary([](const RunFigures& f) { return f.inserts.pg_rate; }))},
      {.name = "CDC updates applied, largest batch limit",
       .unit = "rows/s",
       .value = summary([](const RunFigures& f) { return f.updates.rate; }),
       .baseline = summary([](const RunFigures& f) { return f.pg_update; }),
       .baseline_what = "PostgreSQL 15's own UPDATE rate, the same statements on a table no job "
                        "follows",
       .note =
           "UPDATE ... SET qty = qty + 1 over the " + std::to_string(c.cdc_rows) + " rows" +
           writes + ", s3.max_batch_files = " + kLargestBatch +
           "; from the first UPDATE until sum(qty) on the target is the source's (polled "
           "every 50 ms)" +
           followed("UPDATEs", summary([](const RunFigures& f) { return f.updates.pg_rate; }))}};
  std::vector<Latencies> latencies;
  for (const RunFigures& f : runs)
    latencies.push_back(f.latency);
  for (Figure& f : LatencyFigures(
           "CDC commit-to-visible", latencies, {Target::Kind::kValueAtMost, 1.0, "<= 1 s"},
           "max_interval = 1; one single-row INSERT every " + std::to_string(c.fresh_period_ms) +
               " ms for " + std::to_string(c.fresh_seconds) +
               " s per run, from its COMMIT returning (synchronous_commit = on) until max(id) on "
               "the target shows it (polled every 10 ms); percentiles per run, then median over "
               "runs")) {
    figures.push_back(std::move(f));
  }
  return figures;
}

}  // namespace millrace::bench
