// The catalog's tables in the embedded DuckDB database (schema __millrace), declared in one
// place: their DDL at kCatalogVersion and the tables each migration adds, the column lists the
// stores insert and read by, and the row readers and writers that more than one of the DuckDB
// stores (and the DuckDB sink) share. Internal to the catalog module.
#pragma once

#include <cstddef>
#include <vector>

#include "catalog/catalog_sql.h"
#include "common/result.h"
#include "engine/database.h"
#include "engine/internal_schema.h"
#include "engine/query_result.h"
#include "job/job_model.h"

namespace millrace::catalog {

inline constexpr const char* kSchema = engine::kInternalSchema;

// Column lists, in the order the stores bind and read them.
extern const char* const kJobColumns;
extern const char* const kTaskColumns;
extern const char* const kFileColumns;

// Every table of the catalog at kCatalogVersion (jobs, tasks, ledger, users, audit, table
// models, load labels, reading marks), in the connection's transaction.
Status CreateTables(Connection& conn);
// The tables later versions added, for the migrations (catalog_version.h).
Status CreateUserTables(Connection& conn);    // version 3
Status CreateAuditTable(Connection& conn);    // version 4
Status CreateReadingTable(Connection& conn);  // version 6

// The five LoadStatistic columns, in the order every table stores them.
job::LoadStatistic ReadStats(const DataChunk& c, size_t* col, size_t r);
void BindStats(Statement& stmt, const job::LoadStatistic& s);
// The rows of a query over filtered_rows that selects task_id, file, line, column_name, value,
// reason, time_us in that order.
Result<std::vector<job::FilteredRow>> ReadFilteredRows(engine::QueryResult& result);
// Records files in the ledger; an existing row of the same key is replaced.
Status InsertLedger(Connection& conn, const std::vector<job::LedgerEntry>& entries);

}  // namespace millrace::catalog
