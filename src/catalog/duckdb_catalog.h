// The catalog in the embedded DuckDB database: its tables live in schema __millrace of the same
// database file as the users' tables, so a task's rows and its bookkeeping commit in one
// transaction (DuckDbSink, duckdb_sink.h).
//
// DuckDbCatalog opens the catalog and owns its four stores (SqlStores, sql_stores.h), one per
// interface, over the embedded database (duckdb_sql.h):
// - SqlJobStore (sql_job_store.h): job::JobStore, jobs, tasks, ledgers, reading marks;
// - SqlUserStore (sql_user_store.h): access::UserStore, users and grants;
// - SqlAuditStore (sql_audit_store.h): access::AuditStore, the audit log;
// - SqlCatalogStore (sql_external_catalog_store.h): external::CatalogStore, the external
//   catalogs.
// The server (cli) wires them into the job layer and access control, which know only the
// interfaces; with --cluster the same stores run over PostgreSQL (pgcatalog::PgCatalog), and
// this catalog keeps only the embedded tables' definitions.
//
// Contract
// - Open() brings the catalog to kCatalogVersion (catalog_version.h): a new one is created at
//   it, an older one is migrated forward in one transaction (a crash during a migration leaves
//   the old version intact), a newer one is refused with an error that names both versions.
//   No store may be used before Open succeeds.
// - `secrets` (borrowed) seals each job's statement, which holds its credentials
//   (SqlJobStore), and each external catalog's properties; without it neither can be stored
//   or loaded, and a catalog holding jobs cannot be upgraded to version 7.
// - Thread-safety: Open once, then the stores may be used from any thread.
#pragma once

#include <string>

#include "catalog/duckdb_sql.h"
#include "catalog/sql_stores.h"
#include "common/result.h"
#include "common/secret_box.h"
#include "engine/database.h"

namespace millrace::catalog {

// The stores (SqlStores: jobs(), users(), audit(), external_catalogs()) keep the address of
// sql_, made after them and used only once the catalog is open.
class DuckDbCatalog : public SqlStores {
 public:
  // `db` must outlive the catalog; `where` names it in errors (the database file).
  DuckDbCatalog(engine::Database* db, std::string where, const SecretBox* secrets = nullptr)
      : SqlStores(&sql_, where, secrets), sql_(db), where_(std::move(where)), secrets_(secrets) {}

  Status Open();
  // The schema version the catalog is at (0 when the database has none yet).
  Result<int> StoredVersion();

 private:
  DuckDbSqlDatabase sql_;  // the stores' view of the database
  const std::string where_;
  const SecretBox* const secrets_;
};

}  // namespace millrace::catalog
