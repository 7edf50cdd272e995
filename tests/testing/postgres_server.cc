#include "testing/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "testing/s3rver.h"

namespace millrace::testing {
namespace {

using std::chrono::seconds;

constexpr char kBinDir[] = "/usr/lib/postgresql/15/bin";
constexpr char kOsUser[] = "postgres";  // the OS user, and the bootstrap superuser's name
constexpr int kStartAttempts = 5;

std::string Errno() {
  return std::strerror(errno);
}

// Server programs speak English whatever the caller's locale: Start looks for their messages.
std::vector<std::string> ServerEnv() {
  return {"LC_ALL=C", "LANG=C"};
}

// A port that was free a moment ago: bound on 127.0.0.1 with port 0, then released.
Result<int> PickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("socket: " + Errno());
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string error = Errno();
    ::close(fd);
    return Status::IoError("cannot pick a free port: " + error);
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

Status WriteFile(const std::string& path, const std::string& text, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

// A single-quoted string literal (postgresql.conf and SQL both double the quote).
std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

size_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<size_t>(size);
}

// The last `max_lines` lines of what the file got after its first `from` bytes.
std::string TailSince(const std::string& path, size_t from, size_t max_lines = 30) {
  std::string text = ReadFile(path);
  text.erase(0, std::min(from, text.size()));
  size_t start = text.size();
  if (start > 0 && text[start - 1] == '\n') --start;
  for (size_t lines = 0; lines < max_lines; ++lines) {
    const size_t newline = start == 0 ? std::string::npos : text.rfind('\n', start - 1);
    if (newline == std::string::npos) return text;
    start = newline;
  }
  return text.substr(start + 1);
}

std::string Failure(const std::string& what, const ProcessResult& result) {
  return what + " exited with " + std::to_string(result.exit_code) + ": " + result.err + result.out;
}

std::string Runuser() {
  for (const char* path : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "runuser";
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
  for (const char* program : {"initdb", "pg_ctl", "psql"}) {
    if (::access(Binary(program).c_str(), X_OK) != 0) {
      return Status::FailedPrecondition(Binary(program) +
                                        " is missing: PostgreSQL 15 is not installed "
                                        "(scripts/install_deps.sh installs postgresql-15)");
    }
  }
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  MR_RETURN_IF_ERROR(server->Init());
  MR_RETURN_IF_ERROR(server->StartWatchdog());
  MR_RETURN_IF_ERROR(server->StartOnFreePort());
  MR_RETURN_IF_ERROR(server->CreateTestRole());
  return server;
}

PostgresServer::~PostgresServer() {
  // Fails harmlessly when the server is not running (never started, or a restart failed).
  StopServer("immediate").IgnoreError();
  if (watchdog_fd_ >= 0) {
    // The server is gone and TempDir removes the directory: the watchdog has nothing to do.
    ::send(watchdog_fd_, "done\n", 5, MSG_NOSIGNAL);
    ::close(watchdog_fd_);
  }
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
  if (as_postgres_user_) {
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    ::getpwnam_r(kOsUser, &entry, buf.data(), buf.size(), &found);
    if (found == nullptr) {
      return Status::FailedPrecondition(
          "running as root, PostgreSQL needs the `postgres` OS user (package postgresql-15)");
    }
    if (::chown(dir.c_str(), entry.pw_uid, entry.pw_gid) != 0) {
      return Status::IoError("chown " + dir + ": " + Errno());
    }
  }
  MR_ASSIGN_OR_RETURN(
      ProcessResult initdb,
      RunProcess(AsOwner({Binary("initdb"), "-D", data_dir_, "-U", kOsUser, "--encoding=UTF8",
                          "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256",
                          "--no-sync", "--no-instructions"}),
                 ServerEnv(), seconds(120)));
  if (initdb.exit_code != 0) return Status::Unavailable(Failure("initdb", initdb));

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
  // A socket pair rather than a pipe: send(MSG_NOSIGNAL) cannot raise SIGPIPE in the test.
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status::IoError("socketpair: " + Errno());
  }
  // Reads one line; EOF (every copy of the test's end closed: the test process is gone) stops
  // the server and removes the directory, "done" (from the destructor) does nothing.
  std::vector<std::string> args = {
      "/bin/sh", "-c",
      "dir=$1; shift; read -r line; "
      "if [ \"$line\" != done ]; then \"$@\" >/dev/null 2>&1; rm -rf -- \"$dir\"; fi",
      "millrace-pg-watchdog", dir_.path()};
  for (std::string& arg : AsOwner({Binary("pg_ctl"), "stop", "-D", data_dir_, "-m", "immediate"}))
    args.push_back(std::move(arg));
  std::vector<char*> argv;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);

  // Only async-signal-safe calls between fork and exec: the test may have other threads.
  const pid_t child = ::fork();
  if (child < 0) {
    const std::string error = Errno();
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::Internal("fork failed: " + error);
  }
  if (child == 0) {
    // The watchdog is a grandchild in its own session: reparented away from the test process,
    // it is not among the descendants a ctest timeout kills, nor in the terminal's group.
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    if (fds[0] == 0) {
      ::fcntl(0, F_SETFD, 0);
    } else {
      ::dup2(fds[0], 0);
    }
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
    }
    // Hold no copy of the test's end (nor any other descriptor of the test).
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 4096; ++fd)
        ::close(fd);
    }
    ::execv("/bin/sh", argv.data());
    ::_exit(127);
  }
  ::close(fds[0]);
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  watchdog_fd_ = fds[1];
  return Status::Ok();
}

Status PostgresServer::StartServer() {
  const size_t log_start = FileSize(log_path_);
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunProcess(AsOwner({Binary("pg_ctl"), "start", "-w", "-t", "60", "-D", data_dir_, "-l",
                          log_path_, "-o", "-p " + std::to_string(port_)}),
                 ServerEnv(), seconds(90)));
  if (result.exit_code == 0) return Status::Ok();
  return Status::Unavailable(Failure("pg_ctl start (port " + std::to_string(port_) + ")", result) +
                             "\nserver log:\n" + TailSince(log_path_, log_start));
}

Status PostgresServer::StartOnFreePort() {
  Status status;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    MR_ASSIGN_OR_RETURN(port_, PickFreePort());
    status = StartServer();
    // Another process took the port between PickFreePort and the server's bind: try another.
    if (status.ok() || status.message().find("could not bind") == std::string::npos) {
      return status;
    }
  }
  return status.WithContext("no free port after " + std::to_string(kStartAttempts) + " attempts");
}

Status PostgresServer::StopServer(const std::string& mode) {
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunProcess(AsOwner({Binary("pg_ctl"), "stop", "-w", "-t", "60", "-D", data_dir_, "-m", mode}),
                 ServerEnv(), seconds(90)));
  if (result.exit_code == 0) return Status::Ok();
  return Status::Unavailable(Failure("pg_ctl stop -m " + mode, result));
}

Status PostgresServer::CreateTestRole() {
  // As the bootstrap superuser over the unix socket, which pg_hba.conf trusts.
  const std::string sql =
      "CREATE ROLE " + user_ + " LOGIN SUPERUSER REPLICATION PASSWORD " + Quoted(password_);
  MR_ASSIGN_OR_RETURN(
      ProcessResult result,
      RunProcess({Binary("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", dir_.path(), "-p",
                  std::to_string(port_), "-U", kOsUser, "-d", "postgres", "-c", sql},
                 ServerEnv(), seconds(60)));
  if (result.exit_code == 0) return Status::Ok();
  return Status::Unavailable(Failure("psql (CREATE ROLE)", result));
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
  if (result.exit_code != 0) return Status::Internal(Failure("psql", result));
  std::string out = std::move(result.out);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
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
