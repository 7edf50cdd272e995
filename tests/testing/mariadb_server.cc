#include "testing/mariadb_server.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "testing/wait_for.h"

namespace millrace::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kOsUser[] = "mysql";  // created by the Debian package; mariadbd runs as it as root
constexpr char kPackage[] = "mariadb-server";
constexpr char kBindFailure[] = "Bind on TCP/IP port";
constexpr auto kStartTimeout = seconds(60);
constexpr auto kStopTimeout = seconds(60);

std::string Errno() {
  return std::strerror(errno);
}

// Runs `sql` (from a file on stdin: batch mode stops at the first error) through the mariadb
// client with the connection arguments given.
Result<ProcessResult> RunClient(const std::vector<std::string>& connection,
                                const std::vector<std::string>& env, const std::string& sql) {
  TempDir scratch;
  const std::string file = scratch.Join("statements.sql");
  MR_RETURN_IF_ERROR(WriteFile(file, sql, /*append=*/false));
  std::vector<std::string> argv = {
      MariadbServer::Binary("mariadb"),  "--no-defaults",       "--batch", "--skip-column-names",
      "--default-character-set=utf8mb4", "--connect-timeout=10"};
  argv.insert(argv.end(), connection.begin(), connection.end());
  std::vector<std::string> full_env = CLocaleEnv();
  full_env.insert(full_env.end(), env.begin(), env.end());
  return RunProcess(argv, full_env, seconds(120), file);
}

// The client reports one error, on its last line starting "ERROR": "ERROR <code> (<state>):
// <message>" when it fails to connect or log in, "ERROR <code> (<state>) at line <n>: ..." when
// a statement fails. Codes 2000-2999 are the client's own (connection refused, lost, gone).
bool CouldNotConnect(const std::string& err) {
  std::istringstream lines(err);
  std::string line;
  std::string error;
  while (std::getline(lines, line)) {
    if (line.rfind("ERROR ", 0) == 0) error = line;
  }
  if (error.empty()) return false;
  const int code = std::atoi(error.c_str() + std::strlen("ERROR "));
  return error.find(") at line ") == std::string::npos || (code >= 2000 && code < 3000);
}

}  // namespace

std::string MariadbServer::Binary(const std::string& program) {
  for (const char* dir : {"/usr/bin", "/usr/sbin"}) {
    const std::string path = std::string(dir) + "/" + program;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "/usr/bin/" + program;
}

MariadbServer::MariadbServer()
    : data_dir_(dir_.Join("data")),
      socket_path_(dir_.Join("mariadb.sock")),
      log_path_(dir_.Join("mariadb.log")),
      server_pid_path_(dir_.Join("server.pid")),
      os_user_(CurrentOsUser()),
      as_mysql_user_(::geteuid() == 0) {}

Result<std::unique_ptr<MariadbServer>> MariadbServer::Start() {
  MR_RETURN_IF_ERROR(RequirePrograms(
      {Binary("mariadb-install-db"), Binary("mariadbd"), Binary("mariadb"),
       Binary("mariadb-admin")},
      "MariaDB is not installed (scripts/install_deps.sh installs mariadb-server)"));
  std::unique_ptr<MariadbServer> server(new MariadbServer());
  MR_RETURN_IF_ERROR(server->Init());
  MR_RETURN_IF_ERROR(server->watchdog_.Start("millrace-mariadb-watchdog", server->dir_.path(),
                                             {"/bin/sh", "-c", "kill -KILL \"$(cat \"$1\")\"",
                                              "millrace-mariadb-kill", server->server_pid_path_}));
  MR_RETURN_IF_ERROR(
      StartOnFreePort(&server->port_, kBindFailure, [&] { return server->StartServer(); }));
  MR_RETURN_IF_ERROR(server->CreateTestUser());
  return server;
}

MariadbServer::~MariadbServer() {
  // Then watchdog_ is told the server is gone, and dir_ removes the directory.
  StopServer(SIGKILL).IgnoreError();
}

std::string MariadbServer::JdbcUrl() const {
  return "jdbc:mysql://" + host_ + ":" + std::to_string(port_);
}

std::vector<std::string> MariadbServer::CommonFlags() const {
  std::vector<std::string> flags = {"--skip-name-resolve", "--innodb-buffer-pool-size=32M",
                                    "--innodb-log-file-size=16M", "--key-buffer-size=8M",
                                    "--aria-pagecache-buffer-size=8M",
                                    "--innodb-flush-log-at-trx-commit=2", "--innodb-doublewrite=0",
                                    // Its own: a starting mariadbd removes the temporary files
                                    // it finds in its tmpdir, another server's in a shared /tmp.
                                    "--tmpdir=" + dir_.Join("tmp")};
  if (as_mysql_user_) flags.push_back(std::string("--user=") + kOsUser);
  return flags;
}

Status MariadbServer::Init() {
  const std::string& dir = dir_.path();
  if (::chmod(dir.c_str(), 0755) != 0) return Status::IoError("chmod " + dir + ": " + Errno());
  // Made here so that both the test (mariadbd's early stderr) and mariadbd can append to it.
  MR_RETURN_IF_ERROR(WriteFile(log_path_, "", /*append=*/true));
  const std::string tmp = dir_.Join("tmp");
  if (::mkdir(tmp.c_str(), 0700) != 0) return Status::IoError("mkdir " + tmp + ": " + Errno());
  if (as_mysql_user_) {
    MR_RETURN_IF_ERROR(ChownToOsUser(dir, kOsUser, kPackage));
    MR_RETURN_IF_ERROR(ChownToOsUser(log_path_, kOsUser, kPackage));
    MR_RETURN_IF_ERROR(ChownToOsUser(tmp, kOsUser, kPackage));
  }
  std::vector<std::string> argv = {Binary("mariadb-install-db"), "--no-defaults",
                                   "--datadir=" + data_dir_, "--skip-test-db",
                                   "--auth-root-socket-user=" + os_user_};
  for (std::string& flag : CommonFlags())
    argv.push_back(std::move(flag));
  MR_ASSIGN_OR_RETURN(ProcessResult result, RunProcess(argv, CLocaleEnv(), seconds(120)));
  if (result.exit_code != 0) {
    return Status::Unavailable(ProcessFailure("mariadb-install-db", result));
  }
  return Status::Ok();
}

Status MariadbServer::StartServer() {
  const size_t log_start = FileSize(log_path_);
  const std::string port = std::to_string(port_);
  std::vector<std::string> argv = {Binary("mariadbd"),
                                   "--no-defaults",
                                   "--datadir=" + data_dir_,
                                   "--socket=" + socket_path_,
                                   "--port=" + port,
                                   "--bind-address=" + host_,
                                   "--pid-file=" + dir_.Join("mariadbd.pid"),
                                   "--log-error=" + log_path_,
                                   "--log-bin=" + dir_.Join("binlog"),
                                   "--server-id=1",
                                   "--binlog-format=ROW",
                                   "--binlog-row-image=FULL",
                                   "--binlog-row-metadata=FULL",
                                   "--gtid-strict-mode=OFF",
                                   "--character-set-server=utf8mb4",
                                   "--collation-server=utf8mb4_general_ci"};
  for (std::string& flag : CommonFlags())
    argv.push_back(std::move(flag));
  MR_ASSIGN_OR_RETURN(const pid_t pid, SpawnProcess(argv, CLocaleEnv(),
                                                    SpawnOptions{.stdout_path = log_path_,
                                                                 .stderr_path = log_path_,
                                                                 .die_with_thread = false}));
  pid_ = pid;
  const Status written = WriteFile(server_pid_path_, std::to_string(pid) + "\n", /*append=*/false);
  if (!written.ok()) {
    StopServer(SIGKILL).IgnoreError();
    return written;
  }

  // Ready once mariadb-admin ping gets an answer over the socket (it does before any login).
  bool exited = false;
  int wait_status = 0;
  const bool ready = WaitFor(
      [&] {
        exited = WaitForExit(pid, milliseconds(0), &wait_status);
        if (exited) return true;
        auto ping =
            RunProcess({Binary("mariadb-admin"), "--no-defaults", "--socket=" + socket_path_,
                        "--user=" + os_user_, "--connect-timeout=5", "ping"},
                       CLocaleEnv(), seconds(30));
        return ping.ok() && ping->exit_code == 0;
      },
      kStartTimeout);
  if (exited) {
    pid_ = -1;
    ::unlink(server_pid_path_.c_str());
    return Status::Unavailable("mariadbd (port " + port + ") exited with " +
                               std::to_string(ExitCode(wait_status)) + "; server log:\n" +
                               TailSince(log_path_, log_start));
  }
  if (!ready) {
    StopServer(SIGKILL).IgnoreError();
    return Status::DeadlineExceeded("mariadbd (port " + port + ") did not answer within " +
                                    std::to_string(kStartTimeout.count()) + " s; server log:\n" +
                                    TailSince(log_path_, log_start));
  }
  return Status::Ok();
}

Status MariadbServer::StopServer(int signal) {
  const pid_t pid = pid_;
  if (pid <= 0) return Status::Ok();
  const size_t log_start = FileSize(log_path_);
  int wait_status = 0;
  ::kill(pid, signal);
  bool timed_out = false;
  if (!WaitForExit(pid, kStopTimeout, &wait_status)) {
    timed_out = true;
    ::kill(pid, SIGKILL);
    WaitForExit(pid, seconds(10), &wait_status);
  }
  pid_ = -1;
  ::unlink(server_pid_path_.c_str());
  if (signal == SIGKILL) return Status::Ok();
  if (timed_out) {
    return Status::Unavailable(
        "mariadbd did not stop within " + std::to_string(kStopTimeout.count()) +
        " s and was killed; server log:\n" + TailSince(log_path_, log_start));
  }
  if (ExitCode(wait_status) != 0) {
    return Status::Unavailable("mariadbd exited with " + std::to_string(ExitCode(wait_status)) +
                               " on shutdown; server log:\n" + TailSince(log_path_, log_start));
  }
  return Status::Ok();
}

Status MariadbServer::CreateTestUser() {
  // As the OS user over the unix socket (unix_socket authentication, no password).
  std::string sql;
  for (const char* host : {"127.0.0.1", "localhost"}) {
    const std::string account = Quoted(user_) + "@" + Quoted(host);
    sql += "CREATE USER " + account + " IDENTIFIED BY " + Quoted(password_) + ";\n";
    sql += "GRANT ALL PRIVILEGES ON *.* TO " + account + " WITH GRANT OPTION;\n";
  }
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunClient({"--socket=" + socket_path_, "--user=" + os_user_}, /*env=*/{}, sql));
  if (result.exit_code == 0) return Status::Ok();
  return Status::Unavailable(ProcessFailure("mariadb (CREATE USER)", result));
}

Result<std::pair<std::string, uint64_t>> MariadbServer::BinlogEnd() const {
  MR_ASSIGN_OR_RETURN(std::string status, Sql("SHOW MASTER STATUS"));
  const size_t tab = status.find('\t');
  const size_t tab2 = status.find('\t', tab + 1);
  if (tab == std::string::npos) return Status::Internal("SHOW MASTER STATUS: " + status);
  return std::pair<std::string, uint64_t>(status.substr(0, tab),
                                          std::stoull(status.substr(tab + 1, tab2 - tab - 1)));
}

Result<std::string> MariadbServer::Sql(const std::string& sql, const std::string& database) const {
  std::vector<std::string> connection = {"--protocol=TCP", "--host=" + host_,
                                         "--port=" + std::to_string(port_), "--user=" + user_};
  if (!database.empty()) connection.push_back("--database=" + database);
  MR_ASSIGN_OR_RETURN(ProcessResult result, RunClient(connection, {"MYSQL_PWD=" + password_}, sql));
  if (result.exit_code != 0 && CouldNotConnect(result.err)) {
    return Status::Unavailable("mariadb could not connect to " + JdbcUrl() +
                               (database.empty() ? "" : "/" + database) + ": " + result.err);
  }
  if (result.exit_code != 0) return Status::Internal(ProcessFailure("mariadb", result));
  return WithoutTrailingNewline(std::move(result.out));
}

Status MariadbServer::Restart() {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  MR_RETURN_IF_ERROR(StopServer(SIGTERM));
  return StartServer();
}

Status MariadbServer::CrashRestart() {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  MR_RETURN_IF_ERROR(StopServer(SIGKILL));
  return StartServer();
}

}  // namespace millrace::testing
