// Fail points: named places in crash windows where a test can make the process fail.
//
// Contract
// - MILLRACE_FAIL_POINTS="name=action[,name=action...]" is read once by FailPoints::FromEnv.
//   Actions: "crash" (the process exits at once with status 137, as after kill -9: no
//   destructors, no flushing), "error" (Check returns an INTERNAL status naming the point).
// - Check(name) is cheap when no fail point is configured.
// - A FailPoints object is built at start-up and passed down; it is immutable afterwards, so
//   Check may be called from any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/flags.h"
#include "common/result.h"

namespace millrace {

class FailPoints {
 public:
  FailPoints() = default;
  // An unparsable MILLRACE_FAIL_POINTS is an error, never silently ignored.
  static Result<FailPoints> FromEnv(const EnvLookup& env);
  // Parses "name=action,...". Unknown actions are INVALID_ARGUMENT.
  static Result<FailPoints> Parse(std::string_view spec);

  Status Check(std::string_view name) const;
  bool empty() const { return actions_.empty(); }

 private:
  enum class Action { kCrash, kError };
  std::map<std::string, Action, std::less<>> actions_;
};

}  // namespace millrace
