#include "common/fail_point.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

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
    } else if (action == "abort") {
      points.actions_[name] = Action::kAbort;
    } else if (action == "error") {
      points.actions_[name] = Action::kError;
    } else if (action == "wait") {
      points.actions_[name] = Action::kWait;
    } else if (action == "stop") {
      points.actions_[name] = Action::kStop;
    } else {
      return Status::InvalidArgument("fail point " + name + ": unknown action '" +
                                     std::string(action) + "' (crash, abort, error, wait or stop)");
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

Status FailPoints::Check(std::string_view name, std::string_view scope) const {
  if (actions_.empty()) return Status::Ok();
  if (auto it = actions_.find(name); it != actions_.end()) {
    MR_RETURN_IF_ERROR(Trigger(it->first, it->second));
  }
  if (scope.empty()) return Status::Ok();
  const std::string scoped = std::string(name) + "/" + std::string(scope);
  if (auto it = actions_.find(scoped); it != actions_.end()) {
    MR_RETURN_IF_ERROR(Trigger(it->first, it->second));
  }
  return Status::Ok();
}

Status FailPoints::Trigger(const std::string& name, Action action) const {
  WaitState& w = *waits_;
  MutexLock lock(&w.mu);
  ++w.hits[name];
  w.cv.notify_all();
  switch (action) {
    case Action::kCrash:
      std::fprintf(stderr, "fail point %s: crashing\n", name.c_str());
      _exit(137);
    case Action::kAbort:
      std::fprintf(stderr, "fail point %s: aborting\n", name.c_str());
      std::abort();
    case Action::kError:
      return Status::Internal("fail point " + name + " triggered");
    case Action::kWait:
      WaitOn(w.cv, &w.mu, [&]() NO_THREAD_SAFETY_ANALYSIS { return w.released[name]; });
      return Status::Ok();
    case Action::kStop:
      if (w.hits[name] > 1) return Status::Ok();
      std::fprintf(stderr, "fail point %s: stopping (SIGSTOP)\n", name.c_str());
      raise(SIGSTOP);  // under w.mu: every thread of the process stops with it anyway
      return Status::Ok();
  }
  return Status::Ok();
}

void FailPoints::Release(std::string_view name) const {
  WaitState& w = *waits_;
  MutexLock lock(&w.mu);
  w.released[std::string(name)] = true;
  w.cv.notify_all();
}

int FailPoints::Hits(std::string_view name) const {
  WaitState& w = *waits_;
  MutexLock lock(&w.mu);
  auto it = w.hits.find(name);
  return it == w.hits.end() ? 0 : it->second;
}

}  // namespace millrace
