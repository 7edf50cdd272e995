// The fault record, in forked children that die: a fault is recorded for the next process, a
// kill is not, and a stack overflow on a protected thread is a fault too.
#include "common/fault_record.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <thread>

#include "testing/temp_dir.h"

namespace millrace {
namespace {

// Runs `die` in a child that installed the recorder at `path`; returns its wait status.
int RunChild(const std::string& path, const std::function<void()>& die) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!InstallFaultRecorder(path).ok()) _exit(3);
    die();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// Recurses until the stack runs out (the bound is never reached); the volatile buffer keeps
// each frame.
int Deep(int n) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(n);
  if (n == INT32_MAX) return frame[0];
  return Deep(n + 1) + frame[0];
}

TEST(FaultRecordTest, NoRecordIsNoFault) {
  testing::TempDir dir;
  EXPECT_EQ(TakeFaultRecord(dir.Join("none")).value(), "");
}

TEST(FaultRecordTest, AnAbortIsRecordedAndTheProcessStillDiesOfIt) {
  testing::TempDir dir;
  const std::string path = dir.Join("fault");
  const int status = RunChild(path, [] { std::abort(); });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  EXPECT_EQ(TakeFaultRecord(path).value(), "SIGABRT");
  // Taken: the process after the next one does not see it.
  EXPECT_EQ(TakeFaultRecord(path).value(), "");
}

TEST(FaultRecordTest, AKillIsNotAFault) {
  testing::TempDir dir;
  const std::string path = dir.Join("fault");
  const int status = RunChild(path, [] { ::raise(SIGKILL); });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(TakeFaultRecord(path).value(), "");
}

TEST(FaultRecordTest, AStackOverflowOnAProtectedThreadIsRecorded) {
  testing::TempDir dir;
  const std::string path = dir.Join("fault");
  const int status = RunChild(path, [] {
    std::thread t([] {
      ProtectThisThread();
      [[maybe_unused]] const int never = Deep(0);
    });
    t.join();
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  EXPECT_EQ(TakeFaultRecord(path).value(), "SIGSEGV");
}

}  // namespace
}  // namespace millrace
