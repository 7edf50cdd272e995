// Fail points: named places in crash windows where a test can make the process fail.
//
// Contract
// - MILLRACE_FAIL_POINTS="name=action[,name=action...]" is read once by FailPoints::FromEnv.
//   Actions: "crash" (the process exits at once with status 137, as after kill -9: no
//   destructors, no flushing), "abort" (std::abort: the process dies of SIGABRT, as after a
//   crash in code we do not own; common/fault_record.h records it), "error" (Check returns an
//   INTERNAL status naming the point), "wait" (Check blocks until Release(name) is called; for
//   in-process tests that hold a thread inside a window while they look at the rest of the system),
//   "stop" (the process stops itself with SIGSTOP at the point's first hit, as a server frozen
//   there; the test sends SIGCONT).
// - A point may be scoped: Check(name, scope) triggers "name" and "name/scope" entries, so a
//   test can stop one job's task ("task.before_commit/jobA") and let the others run.
// - Check is cheap when no fail point is configured.
// - A FailPoints object is built at start-up and passed down; its actions are immutable
//   afterwards, so Check, Release and Hits may be called from any thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/flags.h"
#include "common/result.h"
#include "common/thread_annotations.h"

namespace millrace {

class FailPoints {
 public:
  FailPoints() = default;
  // An unparsable MILLRACE_FAIL_POINTS is an error, never silently ignored.
  static Result<FailPoints> FromEnv(const EnvLookup& env);
  // Parses "name=action,...". Unknown actions are INVALID_ARGUMENT.
  static Result<FailPoints> Parse(std::string_view spec);

  Status Check(std::string_view name, std::string_view scope = {}) const;
  bool empty() const { return actions_.empty(); }

  // Lets every thread waiting at the "wait" point `name` (as configured, scope included) go on,
  // and the ones that reach it later pass without waiting.
  void Release(std::string_view name) const;
  // How many times the configured point `name` was reached.
  int Hits(std::string_view name) const;

 private:
  enum class Action { kCrash, kAbort, kError, kWait, kStop };
  Status Trigger(const std::string& name, Action action) const;

  std::map<std::string, Action, std::less<>> actions_;
  // State of "wait" points; shared so a FailPoints stays copyable (Result<FailPoints>).
  struct WaitState {
    Mutex mu;
    std::condition_variable cv;
    std::map<std::string, int, std::less<>> hits GUARDED_BY(mu);
    std::map<std::string, bool, std::less<>> released GUARDED_BY(mu);
  };
  std::shared_ptr<WaitState> waits_ = std::make_shared<WaitState>();
};

}  // namespace millrace
