// Cluster mode (issue 41): servers sharing one catalog in PostgreSQL, jobs writing PostgreSQL
// tables, on a PostgreSQL 15 the scenario starts on loopback.
// - Failover: two servers share a caught-up job (max_interval = 1); its server is killed with
//   kill -9 and a file is written at once; the time until that file's rows are visible in
//   PostgreSQL, loaded by the other server. Target: the lease timeout + 2 s.
// - Throughput: 12 local jobs loading the same files into 12 tables, by one server and by three
//   sharing the catalog; rows per second from the first CREATE JOB until every table is full.
//   The three servers run on the same cores as the one: the figure says what spreading costs or
//   gains on this machine, not what three machines would do.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pg/pg_connection.h"
#include "scenario_util.h"
#include "testing/postgres_server.h"

namespace millrace::bench {
namespace {

constexpr int kLeaseSeconds = 3;
constexpr int kThroughputJobs = 12;
constexpr std::chrono::seconds kTimeout{600};
constexpr char kColumns[] = "(id bigint, name text)";

pg::ConnectParams Params(const testing::PostgresServer& pg, const std::string& database) {
  return {.host = pg.host(),
          .port = pg.port(),
          .database = database,
          .user = pg.user(),
          .password = pg.password()};
}

std::string ClusterUri(const testing::PostgresServer& pg, const std::string& database) {
  return "postgresql://" + pg.user() + ":" + pg.password() + "@" + pg.host() + ":" +
         std::to_string(pg.port()) + "/" + database;
}

// A CSV file of `rows` rows "id,name" with ids from `first`.
Status WriteCsv(const std::string& path, int64_t first, int64_t rows) {
  std::ofstream out(path);
  for (int64_t id = first; id < first + rows; ++id)
    out << id << ",name " << id << "\n";
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

// One cluster: a catalog database of its own, and servers started on it.
class Cluster {
 public:
  Cluster(BenchContext& ctx, testing::PostgresServer& pg, std::string name, std::string local_root)
      : ctx_(ctx), pg_(pg), name_(std::move(name)), local_root_(std::move(local_root)) {}

  Status Create() { return pg_.Sql("CREATE DATABASE " + name_).status(); }

  // Starts server `i` (again, after a Kill, on the same data directory).
  Result<BenchServer*> Start(size_t i) {
    if (servers_.size() <= i) {
      servers_.resize(i + 1);
      dirs_.resize(i + 1);
    }
    // A new data directory the first time (ServerDir also has its log read for warnings).
    if (dirs_[i].empty()) dirs_[i] = ctx_.ServerDir(name_ + "-" + std::to_string(i));
    const std::string& dir = dirs_[i];
    std::vector<std::string> args = {"--cluster",       ClusterUri(pg_, name_),
                                     "--lease-timeout", std::to_string(kLeaseSeconds),
                                     "--local-root",    local_root_};
    if (!key_.empty()) args.insert(args.end(), {"--secret-key-file", key_});
    MR_ASSIGN_OR_RETURN(servers_[i], BenchServer::Start(dir, args));
    if (key_.empty()) key_ = dir + "/secret.key";
    return servers_[i].get();
  }
  BenchServer& server(size_t i) { return *servers_[i]; }
  void Kill(size_t i) { servers_[i]->Kill(); }

  // Which server holds job `job`'s lease (its pid in the owner), or -1.
  Result<int> Holder(const std::string& job) {
    MR_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Connect(Params(pg_, name_)));
    MR_ASSIGN_OR_RETURN(pg::Rows rows,
                        conn->Query("SELECT l.owner FROM __millrace.leases l JOIN "
                                    "__millrace.jobs j ON j.id = l.job_id WHERE j.name = " +
                                    conn->Literal(job) + " AND l.expires_at > now()"));
    if (rows.rows.empty() || !rows.rows[0][0]) return -1;
    for (size_t i = 0; i < servers_.size(); ++i) {
      if (servers_[i] != nullptr && rows.rows[0][0]->find(":" + std::to_string(servers_[i]->pid()) +
                                                          "/") != std::string::npos) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  Status CreatePgCatalog(BenchServer& server) {
    return server.Execute("CREATE CATALOG pg PROPERTIES ('type' = 'postgresql', 'host' = '" +
                          pg_.host() + "', 'port' = '" + std::to_string(pg_.port()) +
                          "', 'database' = 'postgres', 'user' = '" + pg_.user() +
                          "', 'password' = '" + pg_.password() + "')");
  }

 private:
  BenchContext& ctx_;
  testing::PostgresServer& pg_;
  const std::string name_;
  const std::string local_root_;
  std::string key_;
  std::vector<std::unique_ptr<BenchServer>> servers_;
  std::vector<std::string> dirs_;
};

std::string LocalJob(const std::string& name, const std::string& table, const std::string& dir) {
  return "CREATE JOB " + name +
         " ON STREAMING PROPERTIES (\"max_interval\" = \"1\") DO INSERT INTO pg.public." + table +
         " SELECT CAST(c1 AS BIGINT), c2 FROM local(\"file_path\" = \"" + dir +
         "/*.csv\", \"format\" = \"csv\", \"column_separator\" = \",\")";
}

// Polls until every table of `tables` holds `rows` rows; the time they all did.
Result<SteadyTime> WaitForPgRows(pg::PgConnection& conn, const std::vector<std::string>& tables,
                                 int64_t rows) {
  const SteadyTime start = Now();
  std::string sql = "SELECT 0";
  for (const std::string& table : tables)
    sql += " + (SELECT count(*) FROM public." + table + ")";
  const int64_t want = rows * static_cast<int64_t>(tables.size());
  while (true) {
    MR_ASSIGN_OR_RETURN(pg::Rows got, conn.Query(sql));
    const int64_t have = got.rows.empty() ? 0 : std::stoll(got.rows[0][0].value_or("0"));
    if (have == want) return Now();
    if (have > want) {
      return Status::DataLoss("the tables hold " + std::to_string(have) + " rows, expected " +
                              std::to_string(want));
    }
    if (SecondsBetween(start, Now()) > static_cast<double>(kTimeout.count())) {
      return Status::DeadlineExceeded(std::to_string(have) + " of " + std::to_string(want) +
                                      " rows after " + std::to_string(kTimeout.count()) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Kill -9 of the job's server to its next file visible, `runs` times.
Result<std::vector<double>> Failover(BenchContext& ctx, testing::PostgresServer& pg) {
  const std::string dir = ctx.Subdir("cluster-failover-files");
  Cluster cluster(ctx, pg, "bench_failover", dir);
  MR_RETURN_IF_ERROR(cluster.Create());
  MR_RETURN_IF_ERROR(pg.Sql("CREATE TABLE public.failover " + std::string(kColumns)).status());
  MR_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Connect(Params(pg, "postgres")));
  MR_ASSIGN_OR_RETURN(BenchServer * first, cluster.Start(0));
  MR_RETURN_IF_ERROR(cluster.CreatePgCatalog(*first));
  constexpr int64_t kFileRows = 1000;
  int64_t rows = 0;
  const auto write = [&](int n) {
    rows += kFileRows;
    return WriteCsv(dir + "/f" + std::to_string(1000 + n) + ".csv", n * kFileRows, kFileRows);
  };
  MR_RETURN_IF_ERROR(write(0));
  MR_RETURN_IF_ERROR(first->Execute(LocalJob("failover", "failover", dir)));
  MR_RETURN_IF_ERROR(WaitForPgRows(*conn, {"failover"}, rows).status());
  MR_RETURN_IF_ERROR(cluster.Start(1).status());
  std::vector<double> seconds;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(const int holder, cluster.Holder("failover"));
    if (holder < 0) return Status::Internal("no server holds the job's lease");
    const SteadyTime killed = Now();
    cluster.Kill(static_cast<size_t>(holder));
    MR_RETURN_IF_ERROR(write(run));
    MR_ASSIGN_OR_RETURN(const SteadyTime visible, WaitForPgRows(*conn, {"failover"}, rows));
    seconds.push_back(SecondsBetween(killed, visible));
    std::printf("  failover run %d: %.2f s\n", run, seconds.back());
    // Two servers again for the next run.
    MR_RETURN_IF_ERROR(cluster.Start(static_cast<size_t>(holder)).status());
  }
  return seconds;
}

// Rows per second of `servers` servers loading the 12 jobs' files (under `dirs`).
Result<double> Throughput(BenchContext& ctx, testing::PostgresServer& pg, int servers, int run,
                          const std::string& root, const std::vector<std::string>& dirs,
                          int64_t job_rows) {
  const std::string name = "bench_tp" + std::to_string(servers) + "_" + std::to_string(run);
  Cluster cluster(ctx, pg, name, root);
  MR_RETURN_IF_ERROR(cluster.Create());
  for (int i = 0; i < servers; ++i)
    MR_RETURN_IF_ERROR(cluster.Start(static_cast<size_t>(i)).status());
  MR_RETURN_IF_ERROR(cluster.CreatePgCatalog(cluster.server(0)));
  std::vector<std::string> tables;
  for (size_t j = 0; j < dirs.size(); ++j) {
    tables.push_back(name + "_" + std::to_string(j));
    MR_RETURN_IF_ERROR(
        pg.Sql("CREATE TABLE public." + tables.back() + " " + std::string(kColumns)).status());
  }
  MR_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Connect(Params(pg, "postgres")));
  const SteadyTime start = Now();
  for (size_t j = 0; j < dirs.size(); ++j) {
    MR_RETURN_IF_ERROR(
        cluster.server(0).Execute(LocalJob("tp_" + std::to_string(j), tables[j], dirs[j])));
  }
  MR_ASSIGN_OR_RETURN(const SteadyTime done, WaitForPgRows(*conn, tables, job_rows));
  const double rows_per_s = static_cast<double>(job_rows * static_cast<int64_t>(dirs.size())) /
                            SecondsBetween(start, done);
  std::printf("  %d server(s), run %d: %.0f rows/s\n", servers, run, rows_per_s);
  for (const std::string& table : tables)
    MR_RETURN_IF_ERROR(pg.Sql("DROP TABLE public." + table).status());
  return rows_per_s;
}

}  // namespace

Result<std::vector<Figure>> RunCluster(BenchContext& ctx) {
  MR_ASSIGN_OR_RETURN(auto pg, testing::PostgresServer::Start());
  MR_ASSIGN_OR_RETURN(const std::vector<double> failover, Failover(ctx, *pg));

  // Each job's files: the same rows in a directory of its own.
  const bool quick = ctx.config.mode == "quick";
  const int files = quick ? 2 : 10;
  const int64_t file_rows = quick ? 20'000 : 50'000;
  const std::string root = ctx.Subdir("cluster-throughput-files");
  std::vector<std::string> dirs;
  for (int j = 0; j < kThroughputJobs; ++j) {
    dirs.push_back(root + "/j" + std::to_string(j));
    std::filesystem::create_directories(dirs.back());
    for (int f = 0; f < files; ++f) {
      MR_RETURN_IF_ERROR(WriteCsv(dirs.back() + "/f" + std::to_string(100 + f) + ".csv",
                                  f * file_rows, file_rows));
    }
  }
  std::vector<double> one, three;
  for (int run = 1; run <= ctx.config.runs; ++run) {
    MR_ASSIGN_OR_RETURN(double single, Throughput(ctx, *pg, 1, run, root, dirs, files * file_rows));
    one.push_back(single);
    MR_ASSIGN_OR_RETURN(double shared, Throughput(ctx, *pg, 3, run, root, dirs, files * file_rows));
    three.push_back(shared);
  }
  const std::string lease = std::to_string(kLeaseSeconds) + " s";
  return std::vector<Figure>{
      {.name = "cluster failover: kill -9 to next file visible",
       .unit = "s",
       .value = Summarize(failover),
       .target = {Target::Kind::kValueAtMost, kLeaseSeconds + 2.0,
                  "<= lease + 2 s (" + std::to_string(kLeaseSeconds + 2) + " s)"},
       .note = "two servers on one catalog, --lease-timeout " + lease +
               "; the job (local files into a PostgreSQL table, max_interval = 1) is caught up "
               "when its server is killed and a 1,000-row file is written at once; the other "
               "server takes the lease once it runs out, fences the sink and loads the file"},
      {.name = "cluster throughput: 3 servers against 1, 12 jobs",
       .unit = "rows/s",
       .value = Summarize(three),
       .baseline = Summarize(one),
       .baseline_what = "one server running the same 12 jobs",
       .note = std::to_string(kThroughputJobs) + " local jobs of " + std::to_string(files) +
               " CSV files x " + std::to_string(file_rows) +
               " rows into PostgreSQL tables, from the first CREATE JOB to every row visible. "
               "The three servers share this machine's cores (and PostgreSQL's) with each other, "
               "so the ratio says what spreading costs or gains here, not what three machines "
               "would do"}};
}

}  // namespace millrace::bench
