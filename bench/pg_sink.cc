// The PostgreSQL sink (issue 40): the CSV event files loaded by a local job into a PostgreSQL
// table through an external catalog (INSERT INTO pg.public.t: DuckDB reads and stages the
// rows, COPY sends them, with the job's offset and ledger in the same transaction), against
// psql's own \copy of the same files into the same kind of table, in the same run, on the same
// PostgreSQL 15 (started by the scenario on loopback). Both read the files from local disk.
#include <algorithm>
#include <filesystem>
#include <thread>

#include "pg/pg_connection.h"
#include "scenario_util.h"
#include "testing/postgres_server.h"

namespace millrace::bench {
namespace {

// The event columns in PostgreSQL.
constexpr char kPgColumns[] =
    "(id bigint, ts timestamp, user_id integer, kind text, amount double precision, url text, "
    "note text)";
// At most this many of the event files: a bench run stays within minutes on two cores.
constexpr size_t kMaxFiles = 4;
constexpr std::chrono::seconds kLoadTimeout{1800};

Result<int64_t> PgCount(pg::PgConnection& conn, const std::string& sql) {
  MR_ASSIGN_OR_RETURN(pg::Rows rows, conn.Query(sql));
  if (rows.rows.empty() || !rows.rows[0][0]) return Status::NotFound("no value from: " + sql);
  return std::stoll(*rows.rows[0][0]);
}

// psql's \copy of `files` into a fresh table `table`; its seconds.
Result<double> PsqlCopy(testing::PostgresServer& pg, const std::vector<DataFile>& files,
                        const std::string& table, int64_t rows) {
  MR_RETURN_IF_ERROR(
      pg.Sql("DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table + " " + kPgColumns)
          .status());
  std::string script;
  for (const DataFile& file : files)
    script += "\\copy " + table + " FROM '" + file.path + "' WITH (FORMAT csv)\n";
  const SteadyTime start = Now();
  MR_RETURN_IF_ERROR(pg.Sql(script).status());
  const double seconds = SecondsBetween(start, Now());
  MR_ASSIGN_OR_RETURN(std::string loaded, pg.Sql("SELECT count(*) FROM " + table));
  if (loaded != std::to_string(rows)) {
    return Status::DataLoss("psql's \\copy left " + loaded + " rows in " + table);
  }
  MR_RETURN_IF_ERROR(pg.Sql("DROP TABLE " + table).status());
  return seconds;
}

// A local job of `server` loading `files` (under `dir`) into pg.public.<name>; its seconds from
// CREATE JOB until the job's ledger in PostgreSQL holds every file.
Result<double> SinkLoad(BenchServer& server, testing::PostgresServer& pg, const std::string& dir,
                        size_t files, const std::string& name, int64_t rows) {
  MR_RETURN_IF_ERROR(
      pg.Sql("DROP TABLE IF EXISTS " + name + "; CREATE TABLE " + name + " " + kPgColumns)
          .status());
  MR_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Connect({.host = pg.host(),
                                                            .port = pg.port(),
                                                            .database = "postgres",
                                                            .user = pg.user(),
                                                            .password = pg.password()}));
  const FormatInfo& csv = Info(DataFormat::kCsv);
  const JobSpec spec{.name = name,
                     .table = "pg.public." + name,
                     .format = csv.doris_format,
                     .local_path = dir + "/*" + csv.extension,
                     .reader = csv.doris_params};
  const SteadyTime start = Now();
  MR_RETURN_IF_ERROR(server.Execute(CreateJobSql(spec)));
  const std::string ledger = "SELECT count(*) FROM millrace.files WHERE job_key LIKE " +
                             conn->Literal(name + "#%") + " AND state = 'LOADED'";
  while (true) {
    auto done = PgCount(*conn, ledger);
    if (done.ok() && *done == static_cast<int64_t>(files)) break;
    MR_RETURN_IF_ERROR(server.CheckJobRunning(name));
    if (SecondsBetween(start, Now()) > static_cast<double>(kLoadTimeout.count())) {
      return Status::DeadlineExceeded("job " + name + " did not load into PostgreSQL in time");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double seconds = SecondsBetween(start, Now());
  MR_ASSIGN_OR_RETURN(int64_t loaded, PgCount(*conn, "SELECT count(*) FROM " + name));
  if (loaded != rows) {
    return Status::DataLoss(name + " holds " + std::to_string(loaded) + " rows, expected " +
                            std::to_string(rows));
  }
  MR_RETURN_IF_ERROR(server.Execute("DROP JOB WHERE jobname = '" + name + "'"));
  MR_RETURN_IF_ERROR(pg.Sql("DROP TABLE " + name).status());
  return seconds;
}

}  // namespace

Result<std::vector<Figure>> RunPgSink(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(const DataSet* events, ctx.Events(DataFormat::kCsv));
  // The first files of the event set, hard-linked into a directory of their own (the job's
  // glob).
  const std::string dir = ctx.Subdir("pg-sink-files");
  std::vector<DataFile> files;
  int64_t rows = 0;
  uint64_t bytes = 0;
  for (size_t i = 0; i < std::min(kMaxFiles, events->files.size()); ++i) {
    const DataFile& file = events->files[i];
    const std::string link = dir + "/" + std::filesystem::path(file.path).filename().string();
    std::error_code error;
    std::filesystem::create_hard_link(file.path, link, error);
    if (error) return Status::Internal("linking " + file.path + ": " + error.message());
    files.push_back({link, file.bytes, file.rows});
    rows += file.rows;
    bytes += file.bytes;
  }
  MR_ASSIGN_OR_RETURN(auto pg, testing::PostgresServer::Start());
  MR_ASSIGN_OR_RETURN(auto server, StartBenchServer(ctx, "pg-sink-server", {"--local-root", dir}));
  MR_RETURN_IF_ERROR(server->Execute(
      "CREATE CATALOG pg PROPERTIES ('type' = 'postgresql', 'host' = '" + pg->host() +
      "', 'port' = '" + std::to_string(pg->port()) + "', 'database' = 'postgres', 'user' = '" +
      pg->user() + "', 'password' = '" + pg->password() + "')"));
  std::vector<double> sink_rows_per_s, copy_rows_per_s;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(double copy, PsqlCopy(*pg, files, "psql_copy", rows));
    copy_rows_per_s.push_back(static_cast<double>(rows) / copy);
    MR_ASSIGN_OR_RETURN(double sink, SinkLoad(*server, *pg, dir, files.size(),
                                              "pg_sink_" + std::to_string(run), rows));
    sink_rows_per_s.push_back(static_cast<double>(rows) / sink);
  }
  return std::vector<Figure>{
      {.name = "PostgreSQL sink load",
       .unit = "rows/s",
       .value = Summarize(sink_rows_per_s),
       .baseline = Summarize(copy_rows_per_s),
       .baseline_what = "psql's \\copy of the same files (FORMAT csv) into the same table",
       .target = Target::RatioAtLeast(0.8),
       .note = std::to_string(files.size()) + " CSV files, " + HumanBytes(bytes) + ", " +
               std::to_string(rows) +
               " rows, from local disk, into a PostgreSQL 15 table without a primary key on "
               "loopback; the job's time runs from CREATE JOB until its ledger in PostgreSQL "
               "holds every file"}};
}

}  // namespace millrace::bench
