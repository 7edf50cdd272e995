#include "pgcatalog/pg_catalog.h"

#include "catalog/catalog_sql.h"
#include "catalog/catalog_tables.h"
#include "catalog/catalog_version.h"
#include "common/logging.h"

namespace millrace::pgcatalog {

Result<int> PgCatalog::StoredVersion() {
  MR_ASSIGN_OR_RETURN(auto conn, sql_.Connect());
  MR_ASSIGN_OR_RETURN(auto tables, catalog::QueryTextRows(*conn,
                                                          "SELECT count(*) FROM "
                                                          "information_schema.tables WHERE "
                                                          "table_schema = '__millrace' AND "
                                                          "table_name = 'catalog_version'",
                                                          1));
  if (tables.empty() || tables[0][0] == "0") return 0;
  MR_ASSIGN_OR_RETURN(
      auto rows,
      catalog::QueryTextRows(*conn, "SELECT max(version) FROM __millrace.catalog_version", 1));
  if (rows.size() != 1 || rows[0][0].empty()) {
    return Status::DataLoss("the job catalog in " + where_ + " has an empty catalog_version");
  }
  return std::stoi(rows[0][0]);
}

Status PgCatalog::Create() {
  return catalog::InTransaction(sql_, [](catalog::SqlConnection& conn) -> Status {
    MR_RETURN_IF_ERROR(catalog::CreateTables(conn));
    MR_RETURN_IF_ERROR(Leases::CreateTable(conn));
    return conn.Execute("INSERT INTO __millrace.catalog_version VALUES (" +
                        std::to_string(catalog::kCatalogVersion) + ")");
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
    // A catalog created before the cluster's leases had a table for them.
    MR_ASSIGN_OR_RETURN(auto conn, sql_.Connect());
    return Leases::CreateTable(*conn);
  }
  return Status::FailedPrecondition(
      "the job catalog in " + where_ + " is at version " + std::to_string(stored) +
      ", which no cluster catalog was written at (a cluster's catalog starts at version " +
      std::to_string(catalog::kCatalogVersion) + ")");
}

}  // namespace millrace::pgcatalog
