#include "pgcatalog/pg_catalog.h"

#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"
#include "catalog/catalog_version.h"
#include "common/logging.h"

namespace millrace::pgcatalog {

Result<int> PgCatalog::StoredVersion() {
  MR_ASSIGN_OR_RETURN(auto conn, sql_.Connect());
  return catalog::ReadStoredVersion(*conn, where_);
}

namespace {

// What servers sharing the catalog need beside its tables: the leases' tables, and one name per
// job (two servers creating a job of one name at once: the second is refused, ALREADY_EXISTS).
Status CreateClusterParts(catalog::SqlConnection& conn) {
  MR_RETURN_IF_ERROR(Leases::CreateTables(conn));
  return conn.Execute("CREATE UNIQUE INDEX IF NOT EXISTS jobs_name ON __millrace.jobs (name)");
}

}  // namespace

Status PgCatalog::Create() {
  return catalog::InTransaction(sql_, [](catalog::SqlConnection& conn) -> Status {
    MR_RETURN_IF_ERROR(catalog::CreateCatalogAtVersion(conn));
    return CreateClusterParts(conn);
  });
}

Status PgCatalog::Open() {
  MR_ASSIGN_OR_RETURN(int stored, StoredVersion());
  if (stored == 0) {
    Status created = Create();
    if (created.ok()) {
      MR_LOG(kInfo) << "created the job catalog in " << where_ << " at version "
                    << catalog::kCatalogVersion;
      return Status::Ok();
    }
    // Another server may have made it meanwhile (its CREATE SCHEMA won): read what is there.
    MR_ASSIGN_OR_RETURN(stored, StoredVersion());
    if (stored == 0) return created.WithContext("creating the job catalog in " + where_);
  }
  MR_ASSIGN_OR_RETURN(auto steps, catalog::PlanMigration(stored, where_));
  if (steps.empty()) {
    // A catalog created before the cluster's leases, servers and names.
    MR_ASSIGN_OR_RETURN(auto conn, sql_.Connect());
    return CreateClusterParts(*conn);
  }
  return Status::FailedPrecondition(
      "the job catalog in " + where_ + " is at version " + std::to_string(stored) +
      ", which no cluster catalog was written at (a cluster's catalog starts at version " +
      std::to_string(catalog::kCatalogVersion) + ")");
}

}  // namespace millrace::pgcatalog
