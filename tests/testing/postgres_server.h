// Test support: a real PostgreSQL 15 server (Debian package postgresql-15) in a fresh temporary
// directory, for tests of the PostgreSQL source and change data capture.
//
// Contract
// - Binaries (initdb, pg_ctl, psql) come from /usr/lib/postgresql/15/bin; Start fails with
//   FAILED_PRECONDITION when they are missing (scripts/install_deps.sh installs them).
// - Start makes a temporary directory (TempDir, mode 0755) holding the data directory
//   (data/), the unix socket and the server log (postgres.log). The socket lives in that
//   directory, so TMPDIR must be short enough for a unix socket path (~100 bytes).
// - PostgreSQL refuses to run as root: when geteuid() == 0 the directory is chown'ed to the
//   `postgres` OS user (created by the Debian package) and initdb/pg_ctl run through
//   `runuser -u postgres --`; TMPDIR must then be traversable by that user (/tmp is). Otherwise
//   they run as the current user. psql always runs as the current user (it is only a client).
// - initdb: -U postgres, UTF8, locale C, --auth-local=trust --auth-host=scram-sha-256, no sync.
//   pg_hba.conf is then exactly: `local all all trust`, `host all all 127.0.0.1/32
//   scram-sha-256`, `host replication all 127.0.0.1/32 scram-sha-256`.
// - postgresql.conf gets: listen_addresses='127.0.0.1', the socket directory,
//   wal_level=logical, max_replication_slots=20, max_wal_senders=20, fsync=off,
//   synchronous_commit=on (a commit another session has seen survives CrashRestart; with
//   off, a row read by a snapshot could vanish in the crash), full_page_writes=off,
//   shared_buffers=32MB, max_connections=60, no logging collector (pg_ctl -l writes the log). The
//   port is passed at each start.
// - Port: a free one is found by binding 127.0.0.1:0 and closing the socket; if the server
//   then cannot bind it (another process took it meanwhile), Start retries with a new port,
//   5 attempts in all. Restart and CrashRestart keep the port.
// - Start returns once the server accepts connections (pg_ctl start -w) and the role user()
//   exists: LOGIN SUPERUSER REPLICATION with password password() (stored as SCRAM-SHA-256),
//   created as `postgres` over the unix socket (trust). On failure the error holds the tail of
//   the server log. It takes about 1.2 s (initdb about 1 s of it).
// - Sql connects over TCP to 127.0.0.1 as user() with PGPASSWORD (so password authentication
//   is exercised), runs `psql -X -A -t -q -v ON_ERROR_STOP=1 -f <file holding sql>` in
//   `database` (a script: statements run one by one, each in its own transaction unless sql
//   says BEGIN), and returns stdout without its trailing newline: rows one a line, columns
//   separated by '|'. Errors: UNAVAILABLE when psql cannot connect (exit 2), INTERNAL for
//   other failures (e.g. an SQL error); the message holds psql's stderr.
// - Restart: pg_ctl stop -m fast, then start again (same directory and port). CrashRestart:
//   pg_ctl stop -m immediate (no checkpoint; the next start runs crash recovery), then start.
//   With fsync=off, committed data survives both as long as the machine stays up.
// - The destructor stops the server (pg_ctl stop -m immediate) and removes the directory.
//   The postmaster is a daemon (pg_ctl detaches it), not a child of the test process; a
//   watchdog (a detached `sh` that waits for the test process to go away) stops it and removes
//   the directory if the test process dies without running the destructor (crash, SIGKILL,
//   ctest timeout). Only a SIGKILL of the watchdog itself can leave a server behind.
// - Thread-safety: Sql and the accessors may be called concurrently from several threads (a
//   statement issued during a restart fails to connect). Restart and CrashRestart are
//   serialized with each other.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"

namespace millrace::testing {

class PostgresServer {
 public:
  // The absolute path of a PostgreSQL 15 program, e.g. Binary("pg_recvlogical").
  static std::string Binary(const std::string& program);

  // initdb + start; see the contract.
  static Result<std::unique_ptr<PostgresServer>> Start();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // "127.0.0.1"
  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // "millrace_test": a SUPERUSER with REPLICATION.
  const std::string& user() const { return user_; }
  const std::string& password() const { return password_; }
  // "jdbc:postgresql://127.0.0.1:<port>/<database>"
  std::string JdbcUrl(const std::string& database) const;
  // The server log, for failure messages.
  const std::string& log_path() const { return log_path_; }
  // The postmaster's process id (postmaster.pid's first line; its backends are its children),
  // 0 when it cannot be read.
  pid_t pid() const;

  // Runs `sql` through psql as user() over TCP in `database`; stdout without its trailing
  // newline, or an error holding psql's stderr.
  Result<std::string> Sql(const std::string& sql, const std::string& database = "postgres") const;

  // Stops the server (fast shutdown) and starts it again on the same port and directory.
  Status Restart();
  // Stops the server with an immediate shutdown (like a crash: no checkpoint) and starts it
  // again; the start runs crash recovery.
  Status CrashRestart();

 private:
  PostgresServer();
  Status Init();
  Status StartOnFreePort();
  Status StartServer();
  Status StopServer(const std::string& mode);
  Status CreateTestRole();
  Status StartWatchdog();
  // The server programs' command prefix: `runuser -u postgres --` when running as root.
  std::vector<std::string> AsOwner(std::vector<std::string> argv) const;

  TempDir dir_;
  const std::string host_ = "127.0.0.1";
  const std::string user_ = "millrace_test";
  const std::string password_ = "millrace-pw";
  std::string data_dir_;
  std::string log_path_;
  int port_ = 0;
  bool as_postgres_user_ = false;  // running as root: server programs run as `postgres`
  std::mutex lifecycle_mu_;        // serializes Restart, CrashRestart
  Watchdog watchdog_;              // destroyed before dir_
};

}  // namespace millrace::testing
