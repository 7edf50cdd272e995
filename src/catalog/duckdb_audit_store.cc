#include "catalog/duckdb_audit_store.h"

#include "catalog/catalog_sql.h"

namespace millrace::catalog {

Status DuckDbAuditStore::AppendAudit(const access::AuditEvent& e, int64_t keep) {
  return InTransaction(*db_, [&](Connection& conn) -> Status {
    MR_ASSIGN_OR_RETURN(
        auto insert, Statement::Prepare(conn,
                                        "INSERT INTO __millrace.audit VALUES "
                                        "(nextval('__millrace.audit_seq'), ?, ?, ?, ?, ?, ?, ?)"));
    insert.Int(e.time_us).Str(e.user).Str(e.host).Str(e.kind).Str(e.action).Str(e.statement);
    MR_RETURN_IF_ERROR(insert.Str(e.error).Run().status());
    // The newest `keep` stay: sequence numbers are dense, so the cut is one comparison.
    MR_ASSIGN_OR_RETURN(auto trim, Statement::Prepare(conn,
                                                      "DELETE FROM __millrace.audit WHERE seq <= "
                                                      "currval('__millrace.audit_seq') - ?"));
    return trim.Int(keep).Run().status();
  });
}

Result<std::vector<access::AuditEvent>> DuckDbAuditStore::LoadAudit(int64_t limit, int64_t before) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto select, Statement::Prepare(*conn,
                                                      "SELECT time_us, user_name, host, kind, "
                                                      "action, statement, error, seq FROM "
                                                      "__millrace.audit WHERE seq < ? "
                                                      "ORDER BY seq DESC LIMIT ?"));
  MR_ASSIGN_OR_RETURN(auto rows, select.Int(before).Int(limit).Query());
  std::vector<access::AuditEvent> events;
  MR_RETURN_IF_ERROR(ForEachRow(*rows, [&](const engine::DataChunk& c, size_t r) -> Status {
    events.push_back(access::AuditEvent{Int(c, 0, r), Text(c, 1, r), Text(c, 2, r), Text(c, 3, r),
                                        Text(c, 4, r), Text(c, 5, r), Text(c, 6, r), Int(c, 7, r)});
    return Status::Ok();
  }));
  return events;
}

}  // namespace millrace::catalog
