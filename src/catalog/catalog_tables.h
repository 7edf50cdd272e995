// The catalog's tables in the embedded DuckDB database (schema __millrace), each declared once
// (table_decl.h): the DDL at kCatalogVersion, the stores' inserts, updates and row readers all
// come from these declarations. Also the tables each migration adds, and the ledger writer the
// job store and the DuckDB sink share. Internal to the catalog module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "access/audit_log.h"
#include "access/user_store.h"
#include "catalog/table_decl.h"
#include "common/result.h"
#include "job/job_model.h"

namespace millrace::catalog {

// A job's property as given (jobs keep their properties a row each).
struct PropertyRow {
  int64_t job_id = 0;
  std::string key;
  std::string value;
};

// A privilege a user holds on an object (grants keep a row per privilege).
struct GrantRow {
  std::string user_name;
  std::string database_name;
  std::string table_name;
  std::string privilege;
  std::string catalog_name;  // "": the embedded catalog (version 9)
};

// An external catalog as stored: its properties (the password among them) as sealed JSON.
struct CatalogRow {
  std::string name;
  std::string comment;
  std::string sealed_properties;
  int64_t create_time_us = 0;
  int64_t update_time_us = 0;
};

// jobs.insert_sql is written and read as stored (sealed): SqlJobStore seals and opens it.
const Table<job::JobRecord>& JobsTable();
const Table<PropertyRow>& JobPropertiesTable();
// tasks.job_name is not stored (it is the job's).
const Table<job::TaskRecord>& TasksTable();
const Table<job::LedgerEntry>& FilesTable();
// Written by the job layer's BatchLoader inside a task's transaction; read here.
const Table<job::FilteredRow>& FilteredRowsTable();
const Table<job::ReadingMark>& ReadingTable();
const Table<access::UserRecord>& UsersTable();
const Table<GrantRow>& GrantsTable();
// audit.seq comes from the sequence __millrace.audit_seq when a row is appended.
const Table<access::AuditEvent>& AuditTable();
const Table<CatalogRow>& ExternalCatalogsTable();

// Every table of the catalog at kCatalogVersion (jobs, tasks, ledger, users, audit, reading
// marks, external catalogs; and in the embedded database the Doris definitions of its tables
// and their load labels), in the connection's transaction.
Status CreateTables(Connection& conn);
// CreateTables and kCatalogVersion recorded, in the connection's transaction.
Status CreateCatalogAtVersion(Connection& conn);
// The schema version the catalog in `conn`'s database is at: 0 when it has none, 1 when it has
// the job tables and no version (the first release's); `where` names the database in errors.
Result<int> ReadStoredVersion(Connection& conn, const std::string& where);
// The tables later versions added, for the migrations (catalog_version.h).
Status CreateUserTables(Connection& conn);             // version 3
Status CreateAuditTable(Connection& conn);             // version 4
Status CreateReadingTable(Connection& conn);           // version 6
Status CreateExternalCatalogsTable(Connection& conn);  // version 8
Status AddGrantsCatalogColumn(Connection& conn);       // version 9

// Records files in the ledger; an existing row of the same key is replaced.
Status InsertLedger(Connection& conn, const std::vector<job::LedgerEntry>& entries);

}  // namespace millrace::catalog
