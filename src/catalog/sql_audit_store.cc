#include "catalog/sql_audit_store.h"

#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"

namespace millrace::catalog {

Status SqlAuditStore::AppendAudit(const access::AuditEvent& e, int64_t keep) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    const auto& table = AuditTable();
    MR_ASSIGN_OR_RETURN(
        auto insert,
        Statement::Prepare(
            conn, "INSERT INTO " + table.qualified() + " (seq, " + table.Names(table.Writable()) +
                      ") VALUES (nextval('__millrace.audit_seq'), " + table.Marks() + ")"));
    table.Write(e, insert);
    MR_RETURN_IF_ERROR(insert.Run().status());
    // The newest `keep` stay: sequence numbers are dense, so the cut is one comparison.
    MR_ASSIGN_OR_RETURN(auto trim, Statement::Prepare(conn,
                                                      "DELETE FROM __millrace.audit WHERE seq <= "
                                                      "currval('__millrace.audit_seq') - ?"));
    return trim.Int(keep).Run().status();
  });
}

Result<std::vector<access::AuditEvent>> SqlAuditStore::LoadAudit(int64_t limit, int64_t before) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(
      auto select, Statement::Prepare(
                       *conn, AuditTable().Select() + " WHERE seq < ? ORDER BY seq DESC LIMIT ?"));
  select.Int(before).Int(limit);
  return AuditTable().ReadAll(select);
}

}  // namespace millrace::catalog
