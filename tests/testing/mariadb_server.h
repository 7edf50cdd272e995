// Test support: a real MariaDB 10.11 server (Debian package mariadb-server) in a fresh temporary
// directory, with the binary log set up for change data capture, for tests of the MySQL and
// MariaDB source and CDC.
//
// Contract
// - Programs: mariadb-install-db, mariadb, mariadb-admin (/usr/bin) and mariadbd (/usr/sbin);
//   Start fails with FAILED_PRECONDITION when one is missing (scripts/install_deps.sh installs
//   mariadb-server and mariadb-client). Each runs with --no-defaults: no /etc/mysql or ~/.my.cnf
//   setting applies. The system service (mariadb.service) is neither used nor touched.
// - Start makes a temporary directory (TempDir, mode 0755) holding the data directory (data/),
//   the unix socket (mariadb.sock), mariadbd's pid file (mariadbd.pid), the binary logs
//   (binlog.000001..., binlog.index), the server log (mariadb.log: --log-error, plus anything
//   mariadbd writes to stdout/stderr before it opens that) and server.pid (see the watchdog).
//   The socket lives there, so TMPDIR must be short enough for a unix socket path (~100 bytes).
// - mariadbd refuses to run as root without --user. When geteuid() == 0 the directory and the
//   log are chown'ed to the `mysql` OS user (created by the Debian package), and
//   mariadb-install-db and mariadbd get --user=mysql: mariadbd drops to that user itself right
//   after start, as the packaged service does, so the test server never holds root's
//   privileges and what it writes (binlogs, SELECT ... INTO OUTFILE) is owned by mysql as in
//   production. --user=root works too, but would run a network server as root for nothing.
//   TMPDIR must then be traversable by mysql (/tmp is). As root, mariadb-install-db also
//   re-applies the package's owner and mode to /usr/lib/mysql/plugin/auth_pam_tool_dir (the
//   same values). Otherwise everything runs as the current user, without --user.
// - mariadb-install-db --skip-test-db --auth-root-socket-user=<current OS user>: the accounts
//   root@localhost and <current OS user>@localhost (one account when root) authenticate with
//   unix_socket only (the install's proxies_priv row for the host name draws a harmless
//   "ignored in --skip-name-resolve mode" warning in the log), so
//   Start connects over the socket as the OS user it runs as, without a password.
// - Server flags (the ones marked * also go to mariadb-install-db's bootstrap): --datadir,
//   --socket, --port, --bind-address=127.0.0.1, --pid-file, --log-error, --skip-name-resolve*,
//   --log-bin=<dir>/binlog --server-id=1 --binlog-format=ROW --binlog-row-image=FULL
//   --binlog-row-metadata=FULL --gtid-strict-mode=OFF (GTIDs are always on in MariaDB: domain 0,
//   server 1), --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci (Debian's
//   packaged defaults; with --no-defaults the server would be latin1), small memory
//   (--innodb-buffer-pool-size=32M*, --innodb-log-file-size=16M*, --key-buffer-size=8M*,
//   --aria-pagecache-buffer-size=8M*), and --innodb-flush-log-at-trx-commit=2* with
//   --innodb-doublewrite=0*: a commit is written to the OS (not fsync'ed) before it returns,
//   so a committed row survives CrashRestart (a process crash) though not a machine crash.
// - Port: a free one is found by binding 127.0.0.1:0 and closing the socket; if mariadbd then
//   cannot bind it ("Bind on TCP/IP port" in its log: another process took it), Start retries
//   with a new port, 5 attempts in all. Restart and CrashRestart keep the port.
// - mariadbd is a child of the test process without a parent-death signal (Restart may be
//   called from any thread), reaped by the test: it leaves no zombie. Start returns once
//   `mariadb-admin ping` over the unix socket answers (polled with WaitFor, 60 s deadline;
//   an exit of mariadbd fails at once with the tail of the log) and the test user exists:
//   millrace_test@127.0.0.1 and millrace_test@localhost, password password()
//   (mysql_native_password, the default), GRANT ALL PRIVILEGES ON *.* WITH GRANT OPTION. In
//   MariaDB 10.11 ALL on *.* holds everything a binlog client needs: REPLICATION SLAVE (binlog
//   dump), BINLOG MONITOR (the former REPLICATION CLIENT: SHOW BINLOG STATUS, SHOW BINARY
//   LOGS), REPLICATION SLAVE ADMIN, BINLOG ADMIN, BINLOG REPLAY, SUPER. It takes 3 to 4 s on a
//   quiet 2-core machine, up to 7 s on a loaded one: mariadb-install-db (it loads the system,
//   help and sys schema tables) is most of it; mariadbd answers 0.3 to 1 s after its spawn.
// - Sql runs `mariadb --batch --skip-column-names` over TCP to 127.0.0.1:port() as user() with
//   the password (MYSQL_PWD, so password authentication is exercised), in `database` ("" for
//   none), utf8mb4, reading sql from a file on stdin: a script, each statement autocommitted
//   unless it says BEGIN, stopping at the first error. It returns stdout without its trailing
//   newline: rows one a line, columns separated by tabs, NULL as "NULL", and tab, newline and
//   backslash in values escaped as \t, \n and \\ (batch mode). Errors: UNAVAILABLE when the
//   client cannot connect or log in (an error before any statement: refused, access denied,
//   unknown database) or loses the connection (client errors 2000-2999), INTERNAL for other
//   failures (e.g. an SQL error); the message holds the client's stderr.
// - Restart: SIGTERM (a clean shutdown; SIGKILL after 60 s), wait for mariadbd to exit, start
//   again (same directory and port). CrashRestart: SIGKILL (no shutdown: the next start runs
//   InnoDB and binlog crash recovery), wait, start again.
// - The destructor kills mariadbd (SIGKILL) and removes the directory. A watchdog (a detached
//   `sh`, testing/server_process.h) kills the pid written in server.pid (by Start, right after
//   the spawn; removed once the server is reaped) and removes the directory if the test process
//   dies without running the destructor (crash, SIGKILL, ctest timeout).
// - Thread-safety: Sql and the accessors may be called concurrently from several threads (a
//   statement issued during a restart fails to connect). Restart and CrashRestart are
//   serialized with each other.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"

namespace millrace::testing {

class MariadbServer {
 public:
  // The absolute path of a MariaDB program, e.g. Binary("mariadb-binlog"): /usr/bin, or
  // /usr/sbin for mariadbd.
  static std::string Binary(const std::string& program);

  // mariadb-install-db + mariadbd; see the contract.
  static Result<std::unique_ptr<MariadbServer>> Start();
  ~MariadbServer();
  MariadbServer(const MariadbServer&) = delete;
  MariadbServer& operator=(const MariadbServer&) = delete;

  // "127.0.0.1"
  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // "millrace_test": ALL PRIVILEGES on *.* WITH GRANT OPTION (replication included).
  const std::string& user() const { return user_; }
  const std::string& password() const { return password_; }
  // "jdbc:mysql://127.0.0.1:<port>"
  std::string JdbcUrl() const;
  // The server log, for failure messages.
  const std::string& log_path() const { return log_path_; }
  // The unix socket (the test user may log in over it too, as millrace_test@localhost).
  const std::string& socket_path() const { return socket_path_; }
  // The running mariadbd, or -1 while it is stopped (changes at each restart).
  pid_t pid() const { return pid_; }

  // Runs `sql` through the mariadb client as user() over TCP in `database`; stdout without its
  // trailing newline, or an error holding the client's stderr.
  Result<std::string> Sql(const std::string& sql, const std::string& database = "") const;
  // Where the binlog ends now (SHOW MASTER STATUS): its file and byte position.
  Result<std::pair<std::string, uint64_t>> BinlogEnd() const;

  // Stops the server cleanly (SIGTERM) and starts it again on the same port and directory.
  Status Restart();
  // Kills the server (SIGKILL, like a crash) and starts it again; the start runs crash
  // recovery.
  Status CrashRestart();

 private:
  MariadbServer();
  Status Init();
  Status StartServer();
  Status StopServer(int signal);
  Status CreateTestUser();
  // Flags for both mariadb-install-db's bootstrap and mariadbd.
  std::vector<std::string> CommonFlags() const;

  TempDir dir_;
  const std::string host_ = "127.0.0.1";
  const std::string user_ = "millrace_test";
  const std::string password_ = "millrace-pw";
  std::string data_dir_;
  std::string socket_path_;
  std::string log_path_;
  std::string server_pid_path_;  // server.pid: what the watchdog kills
  std::string os_user_;          // the OS user running the test (the socket login)
  int port_ = 0;
  bool as_mysql_user_ = false;  // running as root: mariadbd --user=mysql
  std::atomic<pid_t> pid_ = -1;
  std::mutex lifecycle_mu_;  // serializes Restart, CrashRestart
  Watchdog watchdog_;        // destroyed before dir_
};

}  // namespace millrace::testing
