// An external table as the PostgreSQL sink writes it: the table PostgreSQL describes, and the
// DuckDB temporary table a job's rows are staged in before they are copied.
//
// Contract
// - DescribeTarget reads the table's columns, types and primary key (cdc::DescribeTable; a
//   domain as its base type). A missing table is NOT_FOUND naming it; a column whose values
//   cannot be copied from DuckDB's text (arrays) is INVALID_ARGUMENT naming it.
// - The staging table has the target's columns, named as PostgreSQL names them, each of the
//   DuckDB type its PostgreSQL type maps to (pg/pg_types.h): a job's INSERT writes it as it
//   would a DuckDB table (its casts, NOT NULL checks — but with the delete sign, whose deleted
//   keys carry no values — and bad-row filtering included), and the
//   rows become PostgreSQL's own values when copied. It lives in the temporary catalog of the
//   connection that loads (never visible to another session).
// - A table with a primary key is a Doris UNIQUE table (TargetModel): its staging table has the
//   same key, so the loader leaves the newest row of each key of the batch there (by file, then
//   line). Without one it is DUPLICATE: every row kept.
// - WriteStaged sends the staged rows with one COPY ... FROM STDIN (text format), each value as
//   DuckDB prints it (what PostgreSQL reads back as the same value: numbers, timestamps in UTC,
//   intervals, UUIDs, JSON) and bytea in hex: into the table itself when it is DUPLICATE; for a
//   UNIQUE table into a temporary table (dropped after its use), then INSERT ... ON CONFLICT (key)
//   DO UPDATE of every other column (the staged rows hold each key once, as PostgreSQL requires of
//   one statement); with the delete sign, the keys whose row has the sign 1 are deleted first
//   and only the others upserted. `empty_first`: the table's rows are deleted first (a change
//   stream's TRUNCATE before the staged rows). PostgreSQL's refusal of a value or a constraint
//   is the statement's error. Returns the rows sent.
// - Thread-safety: the functions use the given connections (one thread at a time).
#pragma once

#include <cstdint>
#include <string>

#include "cdc/source_table.h"
#include "common/result.h"
#include "engine/database.h"
#include "pg/pg_connection.h"
#include "table/table_def.h"

namespace millrace::pgsink {

struct ExternalTarget {
  std::string catalog;     // the external catalog the job names
  cdc::SourceTable table;  // as PostgreSQL describes it; an empty key: a DUPLICATE-like table
  // The job gives Doris's delete sign: the staging table keeps it as a column, each key's newest
  // row with its sign, and a key whose newest row has the sign 1 is deleted from the target.
  bool delete_sign = false;
  std::string staging_name;  // the staging table's name, unquoted
  std::string staging;       // the DuckDB table the job's INSERT writes: temp.main."..."

  // "catalog.schema.table", for messages.
  std::string Display() const { return catalog + "." + table.schema + "." + table.name; }
};

// The staging table's name as the job's INSERT writes it: temp.main."<staging_name>". One name
// serves every job: each job's sink stages on a connection of its own.
std::string StagingTable(const std::string& staging_name);
inline constexpr char kStagingName[] = "__millrace_staged";

// `staging_name` names the temporary table (unquoted). The delete sign is refused on a table
// without a primary key (INVALID_ARGUMENT), as on a Doris DUPLICATE table.
Result<ExternalTarget> DescribeTarget(pg::PgConnection& conn, const std::string& catalog,
                                      const std::string& schema, const std::string& table,
                                      const std::string& staging_name, bool delete_sign = false);
// The target as a Doris table: its columns with their DuckDB types; UNIQUE KEY(its primary key)
// when it has one, else DUPLICATE.
table::TableDef TargetModel(const ExternalTarget& target);
// CREATE OR REPLACE TEMP TABLE of the staging table (empty), with the target's primary key.
std::string StagingDdl(const ExternalTarget& target);
Result<int64_t> WriteStaged(engine::Connection& duck, pg::PgConnection& pg,
                            const ExternalTarget& target, bool empty_first = false);

}  // namespace millrace::pgsink
