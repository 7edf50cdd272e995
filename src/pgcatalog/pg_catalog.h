// PgCatalog: the catalog in PostgreSQL, for cluster mode (`millrace serve --cluster
// postgresql://...`): jobs, task history, users, grants, the audit log and the external
// catalogs in schema __millrace of that database, through the same stores as the embedded
// catalog (catalog/sql_*_store.h) over PostgreSQL (pg_sql.h). The embedded tables' own
// definitions (table models, load labels) stay in the embedded database: a cluster's jobs
// write external tables.
//
// Contract
// - Open() creates the schema at catalog::kCatalogVersion when the database has none (in one
//   transaction, with the cluster's own table of leases: leases.h), accepts one at that version
//   (making the leases' table if it lacks it), and refuses a newer one (FAILED_PRECONDITION
//   naming both versions) or an older one (none was ever written). Servers opening a new
//   database at once: the one whose CREATE loses reads what the winner made. No store may be
//   used before Open succeeds.
// - `secrets` (borrowed) seals each job's statement and each external catalog's properties,
//   as in the embedded catalog: every server sharing the catalog needs the same key.
// - Thread-safety: Open once, then the stores may be used from any thread.
#pragma once

#include <string>

#include "catalog/sql_stores.h"
#include "common/result.h"
#include "common/secret_box.h"
#include "pg/pg_connection.h"
#include "pgcatalog/leases.h"
#include "pgcatalog/pg_sql.h"

namespace millrace::pgcatalog {

// The stores (catalog::SqlStores: jobs(), users(), audit(), external_catalogs()) keep the
// address of sql_, made after them and used only once the catalog is open.
class PgCatalog : public catalog::SqlStores {
 public:
  PgCatalog(const pg::ConnectParams& params, const SecretBox* secrets)
      : PgCatalog(params, "PostgreSQL " + pg::Describe(params), secrets) {}

  Status Open();
  // The schema version the catalog is at (0 when the database has none yet).
  Result<int> StoredVersion();
  const std::string& where() const { return where_; }
  // The catalog's database, for the sinks that write a task's records there
  // (pg_bookkeeping_sink.h).
  catalog::SqlDatabase* sql() { return &sql_; }
  // Which server runs each job (leases.h).
  Leases* leases() { return &leases_; }

 private:
  PgCatalog(const pg::ConnectParams& params, const std::string& where, const SecretBox* secrets)
      : SqlStores(&sql_, where, secrets), sql_(params), where_(where), leases_(&sql_) {}
  Status Create();

  PgSqlDatabase sql_;
  const std::string where_;
  Leases leases_;
};

}  // namespace millrace::pgcatalog
