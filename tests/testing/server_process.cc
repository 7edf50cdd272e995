#include "testing/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/temp_dir.h"
#include "testing/wait_for.h"

extern char** environ;

namespace millrace::testing {
namespace {

using std::chrono::milliseconds;

std::string Errno() {
  return std::strerror(errno);
}

// PATH lookup done before fork, so the child only calls async-signal-safe functions.
std::string FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

std::string_view VariableName(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

// The process environment with `extra` applied in order: a later entry replaces an earlier one
// of the same name (getenv would otherwise see the first).
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** var = environ; *var != nullptr; ++var)
    env.emplace_back(*var);
  for (const std::string& entry : extra) {
    std::erase_if(env, [&](const std::string& existing) {
      return VariableName(existing) == VariableName(entry);
    });
    env.push_back(entry);
  }
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool WaitForExit(pid_t pid, milliseconds timeout, int* wait_status) {
  return WaitFor(
      [&] {
        const pid_t done = ::waitpid(pid, wait_status, WNOHANG);
        return done == pid || (done < 0 && errno != EINTR);
      },
      timeout);
}

int ExitCode(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

Result<pid_t> SpawnProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env, const SpawnOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("SpawnProcess: empty argv");
  const std::string program = FindExecutable(argv[0]);
  std::vector<std::string> args = argv;
  std::vector<std::string> env = MergedEnvironment(extra_env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(env);
  const std::string stdin_path = options.stdin_path.empty() ? "/dev/null" : options.stdin_path;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Internal("fork failed: " + Errno());
  if (pid == 0) {
    if (options.die_with_thread) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
    }
    const int in = ::open(stdin_path.c_str(), O_RDONLY);
    if (in < 0) ::_exit(126);
    ::dup2(in, 0);
    const std::string* paths[] = {&options.stdout_path, &options.stderr_path};
    for (int fd = 1; fd <= 2; ++fd) {
      if (paths[fd - 1]->empty()) continue;
      const int out = ::open(paths[fd - 1]->c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (out < 0) ::_exit(126);
      ::dup2(out, fd);
    }
    ::execve(program.c_str(), c_args.data(), c_env.data());
    ::_exit(127);
  }
  return pid;
}

Result<pid_t> SpawnProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env,
                           const std::string& stdout_path, const std::string& stderr_path) {
  return SpawnProcess(argv, extra_env,
                      SpawnOptions{.stdout_path = stdout_path, .stderr_path = stderr_path});
}

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& extra_env, milliseconds timeout,
                                 const std::string& stdin_path) {
  TempDir dir;
  const std::string out_path = dir.Join("stdout");
  const std::string err_path = dir.Join("stderr");
  MR_ASSIGN_OR_RETURN(pid_t pid, SpawnProcess(argv, extra_env,
                                              SpawnOptions{.stdin_path = stdin_path,
                                                           .stdout_path = out_path,
                                                           .stderr_path = err_path}));
  int wait_status = 0;
  if (!WaitForExit(pid, timeout, &wait_status)) {
    ::kill(pid, SIGKILL);
    WaitForExit(pid, std::chrono::seconds(5), &wait_status);
    return Status::DeadlineExceeded(argv[0] + " did not finish within " +
                                    std::to_string(timeout.count()) +
                                    " ms; stderr: " + ReadFile(err_path));
  }
  return ProcessResult{ExitCode(wait_status), ReadFile(out_path), ReadFile(err_path)};
}

std::string WithoutTrailingNewline(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string ProcessFailure(const std::string& what, const ProcessResult& result) {
  return what + " exited with " + std::to_string(result.exit_code) + ": " + result.err + result.out;
}

std::vector<std::string> CLocaleEnv() {
  return {"LC_ALL=C", "LANG=C"};
}

Status WriteFile(const std::string& path, const std::string& text, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

size_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<size_t>(size);
}

std::string TailSince(const std::string& path, size_t from, size_t max_lines) {
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

std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

Status RequirePrograms(const std::vector<std::string>& paths, const std::string& hint) {
  for (const std::string& path : paths) {
    if (::access(path.c_str(), X_OK) != 0) {
      return Status::FailedPrecondition(path + " is missing: " + hint);
    }
  }
  return Status::Ok();
}

std::string Runuser() {
  for (const char* path : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "runuser";
}

Status ChownToOsUser(const std::string& path, const std::string& os_user,
                     const std::string& package) {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  ::getpwnam_r(os_user.c_str(), &entry, buf.data(), buf.size(), &found);
  if (found == nullptr) {
    return Status::FailedPrecondition("running as root, the server needs the `" + os_user +
                                      "` OS user (package " + package + ")");
  }
  if (::chown(path.c_str(), entry.pw_uid, entry.pw_gid) != 0) {
    return Status::IoError("chown " + path + ": " + Errno());
  }
  return Status::Ok();
}

std::string CurrentOsUser() {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  ::getpwuid_r(::geteuid(), &entry, buf.data(), buf.size(), &found);
  return found != nullptr ? std::string(found->pw_name) : std::to_string(::geteuid());
}

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

Status StartOnFreePort(int* port, std::string_view bind_failure,
                       const std::function<Status()>& start) {
  Status status;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    MR_ASSIGN_OR_RETURN(*port, PickFreePort());
    status = start();
    // Another process took the port between PickFreePort and the server's bind: try another.
    if (status.ok() || status.message().find(bind_failure) == std::string::npos) return status;
  }
  return status.WithContext("no free port after " + std::to_string(kStartAttempts) + " attempts");
}

Watchdog::~Watchdog() {
  if (fd_ < 0) return;
  ::send(fd_, "done\n", 5, MSG_NOSIGNAL);
  ::close(fd_);
}

Status Watchdog::Start(const std::string& name, const std::string& dir,
                       const std::vector<std::string>& stop_argv) {
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
      name, dir};
  args.insert(args.end(), stop_argv.begin(), stop_argv.end());
  std::vector<char*> argv = CStrings(args);

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
  fd_ = fds[1];
  return Status::Ok();
}

}  // namespace millrace::testing
