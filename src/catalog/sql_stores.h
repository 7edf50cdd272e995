// SqlStores: the catalog's four stores over one SQL database (sql_db.h: the embedded DuckDB
// file, or PostgreSQL in cluster mode), as a catalog owns them (DuckDbCatalog,
// duckdb_catalog.h; pgcatalog::PgCatalog): job::JobStore (sql_job_store.h), access::UserStore
// (sql_user_store.h), access::AuditStore (sql_audit_store.h) and external::CatalogStore
// (sql_external_catalog_store.h).
//
// Contract
// - `db` and `secrets` are borrowed and must outlive the stores; `where` names the database in
//   errors. The stores are used only once their catalog has opened the schema.
// - Each store method runs on a connection of its own, in a transaction of its own.
// - Thread-safety: the stores may be used from any thread.
#pragma once

#include <string>

#include "catalog/sql_audit_store.h"
#include "catalog/sql_db.h"
#include "catalog/sql_external_catalog_store.h"
#include "catalog/sql_job_store.h"
#include "catalog/sql_user_store.h"
#include "common/secret_box.h"

namespace millrace::catalog {

class SqlStores {
 public:
  SqlStores(SqlDatabase* db, const std::string& where, const SecretBox* secrets)
      : jobs_(db, where, secrets), users_(db, where), audit_(db), catalogs_(db, where, secrets) {}

  SqlJobStore* jobs() { return &jobs_; }
  SqlUserStore* users() { return &users_; }
  SqlAuditStore* audit() { return &audit_; }
  SqlCatalogStore* external_catalogs() { return &catalogs_; }

 private:
  SqlJobStore jobs_;
  SqlUserStore users_;
  SqlAuditStore audit_;
  SqlCatalogStore catalogs_;
};

}  // namespace millrace::catalog
