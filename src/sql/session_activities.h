// SessionActivities: what each client session is doing, for SHOW PROCESSLIST, KILL and the
// bounds of statements (query_timeout, insert_timeout). The router owns one; each session
// records its statements in it.
//
// Contract
// - A session is Added when it starts and Removed when it ends; it records each statement as
//   it begins (Begin) and when it ends (End, which also clears an interrupt aimed at it).
// - Kill and InterruptOverdue interrupt a running statement through its connection, under the
//   table's lock: the statement cannot end, and the next begin, meanwhile, so an interrupt
//   never reaches a statement it was not meant for. An idle session is never interrupted.
// - Thread-safety: every method may be called from any thread. The kill hook is called under
//   the table's lock and must not block.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "engine/database.h"
#include "sql/session_info.h"

namespace millrace::sql {

class SessionActivities {
 public:
  explicit SessionActivities(Clock* clock) : clock_(clock) {}

  // `connection` is the session's DuckDB connection id (engine::Connection::id()); `conn` and
  // `info` are borrowed until Remove.
  void Add(uint64_t connection, engine::Connection* conn, const SessionInfo* info) EXCLUDES(mu_);
  void Remove(uint64_t connection) EXCLUDES(mu_);
  void SetKillHook(uint64_t connection, std::function<void()> hook) EXCLUDES(mu_);
  // True once KILL [CONNECTION] named the session.
  bool Killed(uint64_t connection) const EXCLUDES(mu_);

  // A statement begins (`statement` as it may be logged), with its bound: past it the
  // statement is interrupted by InterruptOverdue.
  void Begin(uint64_t connection, std::string statement, std::optional<std::string> database,
             StatementBound bound) EXCLUDES(mu_);
  // The session's statement ended; it keeps whether it timed out (TimedOut) until the next.
  void End(uint64_t connection, std::optional<std::string> database) EXCLUDES(mu_);
  // The bound the session's last statement ran past, if it did.
  std::optional<StatementBound> TimedOut(uint64_t connection) const EXCLUDES(mu_);

  // The sessions as SHOW PROCESSLIST shows them, by id.
  std::vector<ProcessInfo> Processes() const EXCLUDES(mu_);
  // Router::Kill's contract; UNKNOWN_THREAD (1094) when no session has MySQL id `id`.
  Status Kill(uint32_t id, bool end_session) EXCLUDES(mu_);
  // The user of the session on DuckDB connection `connection`, or nullopt.
  std::optional<std::string> User(uint64_t connection) const EXCLUDES(mu_);
  // Interrupts every statement past its bound; returns how many.
  int InterruptOverdue() EXCLUDES(mu_);

 private:
  struct Activity {
    engine::Connection* conn = nullptr;
    const SessionInfo* info = nullptr;
    std::optional<std::string> database;
    std::string statement;  // "" when idle
    Clock::SteadyTime since;
    bool killed = false;
    std::function<void()> on_kill;
    Clock::SteadyTime deadline = Clock::SteadyTime::max();
    StatementBound bound;
    bool timed_out = false;
  };

  Clock* const clock_;
  mutable Mutex mu_;
  std::map<uint64_t, Activity> activities_ GUARDED_BY(mu_);
};

}  // namespace millrace::sql
