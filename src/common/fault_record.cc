#include "common/fault_record.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

namespace millrace {
namespace {

constexpr int kFaults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

std::atomic<int> g_record_fd{-1};

const char* FaultName(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "SIGSEGV\n";
    case SIGBUS:
      return "SIGBUS\n";
    case SIGILL:
      return "SIGILL\n";
    case SIGFPE:
      return "SIGFPE\n";
    default:
      return "SIGABRT\n";
  }
}

// Async-signal-safe only: write(2) and raise(3). SA_RESETHAND has put back the default action,
// so the raise (or the faulting instruction, once returned to) ends the process as the fault
// would have.
extern "C" void OnFault(int signal_number) {
  const int fd = g_record_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const char* name = FaultName(signal_number);
    [[maybe_unused]] const ssize_t n = ::write(fd, name, std::strlen(name));
  }
  ::raise(signal_number);
}

Status ErrnoStatus(const std::string& what) {
  return Status::IoError(what + ": " + std::strerror(errno));
}

}  // namespace

Result<std::string> TakeFaultRecord(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string();
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus("removing the fault record " + path);
  }
  // The first fault is the one the process died of; a second line can only come from another
  // thread faulting meanwhile.
  const size_t end = text.find('\n');
  return text.substr(0, end);
}

Status InstallFaultRecorder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("opening the fault record " + path);
  const int old = g_record_fd.exchange(fd);
  if (old >= 0) ::close(old);
  struct sigaction action {};
  action.sa_handler = OnFault;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
  for (int signal_number : kFaults) {
    if (::sigaction(signal_number, &action, nullptr) != 0) {
      return ErrnoStatus("installing the fault recorder");
    }
  }
  ProtectThisThread();
  return Status::Ok();
}

namespace {

// A thread's alternate signal stack, given back (SS_DISABLE first) when the thread ends.
class AlternateStack {
 public:
  AlternateStack() : memory_(std::make_unique<char[]>(kBytes)) {
    stack_t alternate{};
    alternate.ss_sp = memory_.get();
    alternate.ss_size = kBytes;
    installed_ = ::sigaltstack(&alternate, nullptr) == 0;
  }
  ~AlternateStack() {
    if (!installed_) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    ::sigaltstack(&off, nullptr);
  }
  AlternateStack(const AlternateStack&) = delete;
  AlternateStack& operator=(const AlternateStack&) = delete;

 private:
  static constexpr size_t kBytes = 64 << 10;
  std::unique_ptr<char[]> memory_;
  bool installed_ = false;
};

}  // namespace

void ProtectThisThread() {
  thread_local AlternateStack stack;
}

}  // namespace millrace
