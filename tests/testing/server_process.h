// Test support: child processes, and what the database servers that tests start
// (PostgresServer, MariadbServer) share: a free port, log tails, the OS user a server runs as,
// and a watchdog that stops a server when the test process dies.
//
// Contract
// - SpawnProcess starts argv[0] (looked up in PATH) with the current environment plus
//   `extra_env` ("NAME=value", replacing variables of the same name). stdin reads
//   options.stdin_path (/dev/null when ""); stdout and stderr are appended to the files given
//   ("" keeps the parent's). With die_with_thread (the default) the child gets SIGKILL when the
//   thread that spawned it exits (PR_SET_PDEATHSIG); a server that any thread may stop later
//   turns it off and relies on a Watchdog instead.
// - RunProcess runs argv to completion (SIGKILL after `timeout`: DEADLINE_EXCEEDED) and returns
//   its exit code and output; stdin reads `stdin_path` ("" is /dev/null).
// - PickFreePort returns a port that was free on 127.0.0.1 a moment ago (bound with port 0 and
//   released): another process may take it before the server binds it, so StartOnFreePort
//   picks one, runs `start`, and picks again when start's error holds `bind_failure` (the
//   server's "address in use" text), kStartAttempts attempts in all.
// - Watchdog::Start forks a detached `sh` (its own session, a grandchild reparented away from
//   the test process, so not among the descendants a ctest timeout kills) holding one end of a
//   socket pair. When the test process goes away without destroying the Watchdog (crash,
//   SIGKILL, timeout), the socket reads EOF and the sh runs `stop_argv` and removes `dir`;
//   destroying the Watchdog tells it to do nothing. Only a SIGKILL of the sh itself can leave a
//   server behind.
// - Thread-safety: every function may be called concurrently; a Watchdog is owned by one server.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace::testing {

struct SpawnOptions {
  std::string stdin_path;   // "" reads /dev/null
  std::string stdout_path;  // appended to; "" keeps the parent's
  std::string stderr_path;  // appended to; "" keeps the parent's
  // SIGKILL the child when the spawning thread exits.
  bool die_with_thread = true;
};

Result<pid_t> SpawnProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env, const SpawnOptions& options);
// The same with stdout and stderr to the files given, dying with the spawning thread.
Result<pid_t> SpawnProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env,
                           const std::string& stdout_path, const std::string& stderr_path);

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// Waits up to `timeout` for the child `pid`; true (with its wait status) once it exited. A zero
// timeout checks once without waiting.
bool WaitForExit(pid_t pid, std::chrono::milliseconds timeout, int* wait_status);
// The exit code of a wait status: the code, or 128 + the signal number when killed.
int ExitCode(int wait_status);
// The whole content of a file; "" when it cannot be read.
std::string ReadFile(const std::string& path);

// Runs argv to completion (killing it after `timeout`) and returns its exit code and output.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& extra_env = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                 const std::string& stdin_path = "");
// `text` without one trailing newline (a client's output as rows).
std::string WithoutTrailingNewline(std::string text);
// "<what> exited with <code>: <stderr><stdout>", for error messages.
std::string ProcessFailure(const std::string& what, const ProcessResult& result);

// Server programs speak English whatever the caller's locale: callers look for their messages.
std::vector<std::string> CLocaleEnv();

Status WriteFile(const std::string& path, const std::string& text, bool append);
// The size of a file; 0 when it does not exist.
size_t FileSize(const std::string& path);
// The last `max_lines` lines of what the file got after its first `from` bytes.
std::string TailSince(const std::string& path, size_t from, size_t max_lines = 30);
// A single-quoted literal, quotes doubled (postgresql.conf, SQL). MariaDB also reads backslash
// as an escape: callers pass text without one.
std::string Quoted(const std::string& text);

// FAILED_PRECONDITION "<path> is missing: <hint>" for the first of `paths` that is not an
// executable file.
Status RequirePrograms(const std::vector<std::string>& paths, const std::string& hint);
// The absolute path of runuser (util-linux), or "runuser".
std::string Runuser();
// chown `path` to the OS user `os_user`; FAILED_PRECONDITION naming `package` when the user
// does not exist.
Status ChownToOsUser(const std::string& path, const std::string& os_user,
                     const std::string& package);
// The name of the OS user this process runs as (geteuid).
std::string CurrentOsUser();

// A port free on 127.0.0.1 a moment ago.
Result<int> PickFreePort();
inline constexpr int kStartAttempts = 5;
// Sets *port to a free port and runs start(), again with a new port while start fails with an
// error holding `bind_failure`; see the contract.
Status StartOnFreePort(int* port, std::string_view bind_failure,
                       const std::function<Status()>& start);

class Watchdog {
 public:
  Watchdog() = default;
  // Tells the sh to do nothing: the owner stopped the server and removes `dir` itself.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the sh (named `name` in ps) that runs stop_argv and removes `dir` when the test
  // process dies. Call once.
  Status Start(const std::string& name, const std::string& dir,
               const std::vector<std::string>& stop_argv);

 private:
  int fd_ = -1;  // our end of the socket pair
};

}  // namespace millrace::testing
