#include "common/fail_point.h"

#include <unistd.h>

#include <cstdio>

namespace millrace {

Result<FailPoints> FailPoints::Parse(std::string_view spec) {
  FailPoints points;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name(item.substr(0, eq));
    const std::string_view action = eq == std::string_view::npos ? "crash" : item.substr(eq + 1);
    if (action == "crash") {
      points.actions_[name] = Action::kCrash;
    } else if (action == "error") {
      points.actions_[name] = Action::kError;
    } else {
      return Status::InvalidArgument("fail point " + name + ": unknown action '" +
                                     std::string(action) + "' (crash or error)");
    }
  }
  return points;
}

Result<FailPoints> FailPoints::FromEnv(const EnvLookup& env) {
  auto spec = env("MILLRACE_FAIL_POINTS");
  if (!spec) return FailPoints();
  auto points = Parse(*spec);
  if (!points.ok()) return points.status().WithContext("MILLRACE_FAIL_POINTS");
  return points;
}

Status FailPoints::Check(std::string_view name) const {
  if (actions_.empty()) return Status::Ok();
  auto it = actions_.find(name);
  if (it == actions_.end()) return Status::Ok();
  if (it->second == Action::kCrash) {
    std::fprintf(stderr, "fail point %s: crashing\n", it->first.c_str());
    _exit(137);
  }
  return Status::Internal("fail point " + it->first + " triggered");
}

}  // namespace millrace
