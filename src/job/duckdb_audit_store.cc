// DuckDbCatalogStore as an access::AuditStore: the audit log in __millrace.audit.
#include "job/catalog_sql.h"
#include "job/duckdb_catalog.h"

namespace millrace::job {

using catalog_sql::Statement;
using catalog_sql::Text;
using engine::Connection;

Status catalog_sql::CreateAuditTable(Connection& conn) {
  return conn.Execute(R"sql(
      CREATE SEQUENCE __millrace.audit_seq;
      CREATE TABLE __millrace.audit (
        seq BIGINT NOT NULL, time_us BIGINT NOT NULL, user_name VARCHAR NOT NULL,
        host VARCHAR NOT NULL, kind VARCHAR NOT NULL, action VARCHAR NOT NULL,
        statement VARCHAR NOT NULL, error VARCHAR NOT NULL);
  )sql");
}

Status DuckDbCatalogStore::AppendAudit(const access::AuditEvent& e, int64_t keep) {
  return InTransaction([&](Connection& conn) -> Status {
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

Result<std::vector<access::AuditEvent>> DuckDbCatalogStore::LoadAudit(int64_t limit,
                                                                      int64_t before) {
  MR_ASSIGN_OR_RETURN(auto conn, db_->Connect());
  MR_ASSIGN_OR_RETURN(auto select, Statement::Prepare(*conn,
                                                      "SELECT time_us, user_name, host, kind, "
                                                      "action, statement, error, seq FROM "
                                                      "__millrace.audit WHERE seq < ? "
                                                      "ORDER BY seq DESC LIMIT ?"));
  MR_ASSIGN_OR_RETURN(auto rows, select.Int(before).Int(limit).Query());
  std::vector<access::AuditEvent> events;
  MR_RETURN_IF_ERROR(
      catalog_sql::ForEachRow(*rows, [&](const engine::DataChunk& c, size_t r) -> Status {
        events.push_back(access::AuditEvent{catalog_sql::Int(c, 0, r), Text(c, 1, r), Text(c, 2, r),
                                            Text(c, 3, r), Text(c, 4, r), Text(c, 5, r),
                                            Text(c, 6, r), catalog_sql::Int(c, 7, r)});
        return Status::Ok();
      }));
  return events;
}

}  // namespace millrace::job
