// access::AuditStore, one of the catalog's stores (sql_stores.h): table __millrace.audit,
// numbered by the sequence __millrace.audit_seq.
#pragma once

#include <cstdint>
#include <vector>

#include "access/audit_log.h"
#include "catalog/sql_db.h"
#include "common/result.h"

namespace millrace::catalog {

class SqlAuditStore final : public access::AuditStore {
 public:
  explicit SqlAuditStore(SqlDatabase* db) : db_(db) {}  // db is borrowed

  Status AppendAudit(const access::AuditEvent& event, int64_t keep) override;
  Result<std::vector<access::AuditEvent>> LoadAudit(int64_t limit, int64_t before) override;

 private:
  SqlDatabase* const db_;
};

}  // namespace millrace::catalog
