// The audit log: who logged in (or failed to), who changed users and grants, who ran job
// statements and DDL — each with user, address, time and outcome. Kept in the catalog (the
// newest `keep` events) and read by administrators through audit_log().
//
// Contract
// - AuditStore keeps events in the order appended, each append one transaction that also
//   drops the events older than the newest `keep`. The embedded store is the job catalog
//   (catalog::SqlAuditStore, table __millrace.audit); cluster mode keeps it in PostgreSQL
//   behind the same interface.
// - AuditLog::Record stamps the time from the injected Clock and appends. Statements are
//   recorded as their handler lets them be logged (sql::Router::LoggableStatement: passwords
//   and secret keys masked). A failed append does not fail the audited action (it already
//   happened): it is logged as an error and counted.
// - audit_log() (MakeAuditLogFunction) lists the newest events first, to holders of
//   ADMIN_PRIV only: anyone else gets MySQL error 1227's wording.
// - Thread-safety: all methods may be called concurrently.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "access/access_control.h"
#include "common/clock.h"
#include "common/result.h"
#include "engine/table_function.h"

namespace millrace::access {

struct AuditEvent {
  int64_t time_us = 0;  // microseconds since the Unix epoch
  std::string user;
  std::string host;
  std::string kind;       // "LOGIN", "USER", "GRANT", "JOB", "CATALOG", "DDL"
  std::string action;     // "LOGIN", "CREATE USER", "DROP TABLE d.t", "CREATE JOB", ...
  std::string statement;  // as it may be logged; empty for a login
  std::string error;      // empty when it succeeded; else why it failed or was refused
  int64_t seq = 0;        // given by the store when appended: increasing, later is larger
};

class AuditStore {
 public:
  virtual ~AuditStore() = default;
  virtual Status AppendAudit(const AuditEvent& event, int64_t keep) = 0;
  // The newest `limit` events whose seq is below `before` (kFromNewest: any), newest first:
  // a keyset page (the console's audit page) in one query.
  static constexpr int64_t kFromNewest = INT64_MAX;
  virtual Result<std::vector<AuditEvent>> LoadAudit(int64_t limit, int64_t before) = 0;
};

class AuditLog {
 public:
  static constexpr int64_t kDefaultKeep = 100'000;

  // `store` and `clock` are borrowed and must outlive the log.
  AuditLog(AuditStore* store, Clock* clock, int64_t keep = kDefaultKeep)
      : store_(store), clock_(clock), keep_(keep) {}

  void Record(AuditEvent event);
  Result<std::vector<AuditEvent>> Newest() {
    return store_->LoadAudit(keep_, AuditStore::kFromNewest);
  }
  // Up to `limit` events older than seq `before`, newest first.
  Result<std::vector<AuditEvent>> Page(int64_t before, int64_t limit) {
    return store_->LoadAudit(limit, before);
  }
  // Appends that failed since start.
  int64_t failed_appends() const { return failed_appends_.load(); }

 private:
  AuditStore* store_;
  Clock* clock_;
  const int64_t keep_;
  std::atomic<int64_t> failed_appends_{0};
};

// audit_log(): the table function administrators read the log with. `connection_user` names
// the user behind a DuckDB connection (sql::Router::SessionUser; nullopt: Millrace's own).
std::shared_ptr<engine::TableFunction> MakeAuditLogFunction(
    AuditLog* log, const AccessControl* access,
    std::function<std::optional<std::string>(uint64_t)> connection_user);

}  // namespace millrace::access
