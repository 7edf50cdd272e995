#include "testing/postgres_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "testing/server_process.h"

namespace millrace::testing {
namespace {

using std::chrono::seconds;

constexpr char kBinDir[] = "/usr/lib/postgresql/15/bin";
constexpr char kOsUser[] = "postgres";  // the OS user, and the bootstrap superuser's name

std::string Errno() {
  return std::strerror(errno);
}
}  // namespace

std::string PostgresServer::Binary(const std::string& program) {
  return std::string(kBinDir) + "/" + program;
}

PostgresServer::PostgresServer()
    : data_dir_(dir_.Join("data")),
      log_path_(dir_.Join("postgres.log")),
      as_postgres_user_(::geteuid() == 0) {}

Result<std::unique_ptr<PostgresServer>> PostgresServer::Start() {
  MR_RETURN_IF_ERROR(
      RequirePrograms({Binary("initdb"), Binary("pg_ctl"), Binary("psql")},
                      "PostgreSQL 15 is not installed (scripts/install_deps.sh installs "
                      "postgresql-15)"));
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  MR_RETURN_IF_ERROR(server->Init());
  MR_RETURN_IF_ERROR(server->StartWatchdog());
  MR_RETURN_IF_ERROR(server->StartOnFreePort());
  MR_RETURN_IF_ERROR(server->CreateTestRole());
  return server;
}

PostgresServer::~PostgresServer() {
  // Fails harmlessly when the server is not running (never started, or a restart failed).
  // Then watchdog_ is told the server is gone, and dir_ removes the directory.
  StopServer("immediate").IgnoreError();
}

pid_t PostgresServer::pid() const {
  std::ifstream in(data_dir_ + "/postmaster.pid");
  pid_t pid = 0;
  return in >> pid ? pid : 0;
}

std::string PostgresServer::JdbcUrl(const std::string& database) const {
  return "jdbc:postgresql://" + host_ + ":" + std::to_string(port_) + "/" + database;
}

std::vector<std::string> PostgresServer::AsOwner(std::vector<std::string> argv) const {
  if (!as_postgres_user_) return argv;
  std::vector<std::string> prefixed = {Runuser(), "-u", kOsUser, "--"};
  prefixed.insert(prefixed.end(), argv.begin(), argv.end());
  return prefixed;
}

Status PostgresServer::Init() {
  const std::string& dir = dir_.path();
  if (::chmod(dir.c_str(), 0755) != 0) return Status::IoError("chmod " + dir + ": " + Errno());
  if (as_postgres_user_) MR_RETURN_IF_ERROR(ChownToOsUser(dir, kOsUser, "postgresql-15"));
  MR_ASSIGN_OR_RETURN(
      ProcessResult initdb,
      RunProcess(AsOwner({Binary("initdb"), "-D", data_dir_, "-U", kOsUser, "--encoding=UTF8",
                          "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256",
                          "--no-sync", "--no-instructions"}),
                 CLocaleEnv(), seconds(120)));
  if (initdb.exit_code != 0) return Status::Unavailable(ProcessFailure("initdb", initdb));

  const std::string settings =
      "\n# millrace::testing::PostgresServer\n"
      "listen_addresses = '127.0.0.1'\n"
      "unix_socket_directories = " +
      Quoted(dir) +
      "\n"
      "wal_level = logical\n"
      "max_replication_slots = 20\n"
      "max_wal_senders = 20\n"
      "fsync = off\n"
      "synchronous_commit = on\n"
      "full_page_writes = off\n"
      "shared_buffers = 32MB\n"
      "max_connections = 60\n"
      "logging_collector = off\n"
      "password_encryption = 'scram-sha-256'\n";
  MR_RETURN_IF_ERROR(WriteFile(data_dir_ + "/postgresql.conf", settings, /*append=*/true));
  const std::string hba =
      "# millrace::testing::PostgresServer\n"
      "local all all trust\n"
      "host all all 127.0.0.1/32 scram-sha-256\n"
      "host replication all 127.0.0.1/32 scram-sha-256\n";
  return WriteFile(data_dir_ + "/pg_hba.conf", hba, /*append=*/false);
}

Status PostgresServer::StartWatchdog() {
  return watchdog_.Start("millrace-pg-watchdog", dir_.path(),
                         AsOwner({Binary("pg_ctl"), "stop", "-D", data_dir_, "-m", "immediate"}));
}

Status PostgresServer::StartServer() {
  const size_t log_start = FileSize(log_path_);
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunProcess(AsOwner({Binary("pg_ctl"), "start", "-w", "-t", "60", "-D", data_dir_, "-l",
                          log_path_, "-o", "-p " + std::to_string(port_)}),
                 CLocaleEnv(), seconds(90)));
  if (result.exit_code == 0) return Status::Ok();
  return Status::Unavailable(
      ProcessFailure("pg_ctl start (port " + std::to_string(port_) + ")", result) +
      "\nserver log:\n" + TailSince(log_path_, log_start));
}

Status PostgresServer::StartOnFreePort() {
  return testing::StartOnFreePort(&port_, "could not bind", [this] { return StartServer(); });
}

Status PostgresServer::StopServer(const std::string& mode) {
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunProcess(AsOwner({Binary("pg_ctl"), "stop", "-w", "-t", "60", "-D", data_dir_, "-m", mode}),
                 CLocaleEnv(), seconds(90)));
  if (result.exit_code == 0) return Status::Ok();
  return Status::Unavailable(ProcessFailure("pg_ctl stop -m " + mode, result));
}

Status PostgresServer::CreateTestRole() {
  // As the bootstrap superuser over the unix socket, which pg_hba.conf trusts.
  const std::string sql =
      "CREATE ROLE " + user_ + " LOGIN SUPERUSER REPLICATION PASSWORD " + Quoted(password_);
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunProcess({Binary("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", dir_.path(), "-p",
                  std::to_string(port_), "-U", kOsUser, "-d", "postgres", "-c", sql},
                 CLocaleEnv(), seconds(60)));
  if (result.exit_code == 0) return Status::Ok();
  return Status::Unavailable(ProcessFailure("psql (CREATE ROLE)", result));
}

Result<std::string> PostgresServer::Sql(const std::string& sql, const std::string& database) const {
  TempDir scratch;
  const std::string file = scratch.Join("statements.sql");
  MR_RETURN_IF_ERROR(WriteFile(file, sql, /*append=*/false));
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunProcess({Binary("psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", host_,
                  "-p", std::to_string(port_), "-U", user_, "-d", database, "-f", file},
                 {"PGPASSWORD=" + password_, "PGCONNECT_TIMEOUT=10", "PGSSLMODE=disable",
                  "PGCLIENTENCODING=UTF8", "LC_ALL=C", "LANG=C"},
                 seconds(120)));
  if (result.exit_code == 2) {
    return Status::Unavailable("psql could not connect to " + JdbcUrl(database) + ": " +
                               result.err);
  }
  if (result.exit_code != 0) return Status::Internal(ProcessFailure("psql", result));
  return WithoutTrailingNewline(std::move(result.out));
}

Status PostgresServer::Restart() {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  MR_RETURN_IF_ERROR(StopServer("fast"));
  return StartServer();
}

Status PostgresServer::CrashRestart() {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  MR_RETURN_IF_ERROR(StopServer("immediate"));
  return StartServer();
}

}  // namespace millrace::testing
