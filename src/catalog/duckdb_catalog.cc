#include "catalog/duckdb_catalog.h"

#include "catalog/catalog_tables.h"
#include "catalog/catalog_version.h"
#include "common/logging.h"
#include "job/offset.h"
#include "table/load_labels.h"
#include "table/model_catalog.h"

namespace millrace::catalog {
namespace {

using job::Offset;

// Migration 1 -> 2: offsets were bare keys; they become {"fileName": key}.
Status MigrateOffsetsToJson(Connection& conn) {
  // The ALTER comes first: DuckDB cannot commit rows updated in a transaction that then alters
  // their table ("another transaction has altered this table").
  MR_RETURN_IF_ERROR(conn.Execute("ALTER TABLE __millrace.jobs DROP COLUMN definition"));
  MR_ASSIGN_OR_RETURN(auto rows, QueryTextRows(conn,
                                               "SELECT id, coalesce(current_offset, ''), "
                                               "coalesce(end_offset, '') FROM __millrace.jobs"));
  MR_ASSIGN_OR_RETURN(auto update,
                      Statement::Prepare(conn,
                                         "UPDATE __millrace.jobs SET current_offset = ?, "
                                         "end_offset = ? WHERE id = ?"));
  for (const auto& row : rows) {
    MR_RETURN_IF_ERROR(update.Reset()
                           .Str(Offset::FileName(row[1]).ToJson())
                           .Str(Offset::FileName(row[2]).ToJson())
                           .Int(std::stoll(row[0]))
                           .Run()
                           .status());
  }
  return Status::Ok();
}

// Migration 6 -> 7: each job's statement, which holds its credentials, is sealed.
Status SealStatements(Connection& conn, const SecretBox* secrets, const std::string& where) {
  MR_ASSIGN_OR_RETURN(auto rows, QueryTextRows(conn,
                                               "SELECT id, coalesce(insert_sql, '') FROM "
                                               "__millrace.jobs ORDER BY id"));
  if (rows.empty()) return Status::Ok();
  if (secrets == nullptr) {
    return Status::FailedPrecondition("the jobs in " + where +
                                      " hold credentials in clear and no key was given to seal "
                                      "them");
  }
  MR_ASSIGN_OR_RETURN(auto update, Statement::Prepare(conn,
                                                      "UPDATE __millrace.jobs SET insert_sql = ? "
                                                      "WHERE id = ?"));
  for (const auto& row : rows) {
    if (SecretBox::IsSealed(row[1])) continue;
    MR_ASSIGN_OR_RETURN(std::string sealed, secrets->Seal(row[1]));
    MR_RETURN_IF_ERROR(update.Reset().Str(sealed).Int(std::stoll(row[0])).Run().status());
  }
  return Status::Ok();
}

Status RunMigration(Connection& conn, const MigrationStep& step, const SecretBox* secrets,
                    const std::string& where) {
  switch (step.from) {
    case 1:
      return MigrateOffsetsToJson(conn);
    case 2:
      return CreateUserTables(conn);
    case 3:
      return CreateAuditTable(conn);
    case 4:
      MR_RETURN_IF_ERROR(conn.Execute(std::string(table::kModelTableDdl)));
      return conn.Execute(std::string(table::kLabelTableDdl));
    case 5:
      MR_RETURN_IF_ERROR(conn.Execute("ALTER TABLE __millrace.files ADD COLUMN reason VARCHAR"));
      return CreateReadingTable(conn);
    case 6:
      return SealStatements(conn, secrets, where);
    case 7:
      return CreateExternalCatalogsTable(conn);
    case 8:
      return AddGrantsCatalogColumn(conn);
    default:
      return Status::Internal("no migration from catalog version " + std::to_string(step.from));
  }
}

}  // namespace

Result<int> DuckDbCatalog::StoredVersion() {
  MR_ASSIGN_OR_RETURN(auto conn, sql_.Connect());
  return ReadStoredVersion(*conn, where_);
}

Status DuckDbCatalog::Open() {
  MR_ASSIGN_OR_RETURN(const int stored, StoredVersion());
  if (stored == 0) {
    return InTransaction(sql_, [](Connection& conn) { return CreateCatalogAtVersion(conn); });
  }
  MR_ASSIGN_OR_RETURN(auto steps, PlanMigration(stored, where_));
  if (steps.empty()) return Status::Ok();
  Status migrated = InTransaction(sql_, [&](Connection& conn) -> Status {
    for (const MigrationStep& step : steps) {
      Status s = RunMigration(conn, step, secrets_, where_);
      if (!s.ok()) {
        return s.WithContext("migrating the job catalog in " + where_ + " from version " +
                             std::to_string(step.from) + " (" + step.what + ")");
      }
    }
    MR_RETURN_IF_ERROR(conn.Execute(
        "CREATE TABLE IF NOT EXISTS __millrace.catalog_version (version INTEGER NOT NULL)"));
    MR_RETURN_IF_ERROR(conn.Execute("DELETE FROM __millrace.catalog_version"));
    return conn.Execute("INSERT INTO __millrace.catalog_version VALUES (" +
                        std::to_string(kCatalogVersion) + ")");
  });
  if (migrated.ok()) {
    MR_LOG(kInfo) << "migrated the job catalog in " << where_ << " from version " << stored
                  << " to " << kCatalogVersion;
  }
  return migrated;
}

}  // namespace millrace::catalog
