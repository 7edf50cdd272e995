// access::AuditStore in the embedded DuckDB database: table __millrace.audit, numbered by the
// sequence __millrace.audit_seq. Opened by DuckDbCatalog (duckdb_catalog.h), which owns it; each
// method is a transaction of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "access/audit_log.h"
#include "common/result.h"
#include "engine/database.h"

namespace millrace::catalog {

class DuckDbAuditStore final : public access::AuditStore {
 public:
  explicit DuckDbAuditStore(engine::Database* db) : db_(db) {}  // db is borrowed

  Status AppendAudit(const access::AuditEvent& event, int64_t keep) override;
  Result<std::vector<access::AuditEvent>> LoadAudit(int64_t limit, int64_t before) override;

 private:
  engine::Database* const db_;
};

}  // namespace millrace::catalog
