// The target tables of a FROM POSTGRES ... TO DATABASE job: made from the source's description
// where missing, bound to the source by column name, and kept in step with the source's columns
// as the change stream announces them.
//
// Contract
// - TargetDdl is Doris's CREATE TABLE for a source table: its columns with their Doris types
//   (pg/pg_types.h), the primary key leading as the UNIQUE KEY (a STRING key column becomes
//   VARCHAR(65533), as Doris keys cannot be STRING), DISTRIBUTED BY HASH(key) BUCKETS 1, and
//   the given PROPERTIES. TargetDef is its definition (in `database`); EnsureTarget makes a
//   table of that definition and its record, in the caller's transaction, unless a table of
//   that name exists (which must be a UNIQUE KEY table).
// - BindByName fills `target` so that the target's columns that the source also has are
//   written from the source columns of the same name; the others are left to their default.
//   A key column of the source missing from the target is INVALID_ARGUMENT.
// - AlterTarget, inside the caller's transaction and before its first write to the target,
//   makes the target's columns fit every description (`shapes`) of the source table that the
//   transaction applies: columns none of them has are dropped, columns one of them has are
//   added (their Doris types as TargetDdl maps them; `added` names them). Key columns are never
//   dropped and a column's type is never changed (a value converts into the existing type, or
//   the task fails naming it). The definition's record is rewritten with the table. DuckDB
//   cannot commit a transaction that alters a table after updating its rows, hence all ALTERs
//   first: a column a later description drops stays until the next transaction.
// - Backfill sets `columns` of every row of the target to their missing value in `shape`
//   (what PostgreSQL reads for rows older than ADD COLUMN ... DEFAULT; NULL when none): called
//   before the first change written with the description that has them.
// - Thread-safety: pure functions over the given connection.
#pragma once

#include <string>
#include <vector>

#include "cdc/cdc_params.h"
#include "cdc/change_apply.h"
#include "cdc/source_table.h"
#include "common/result.h"
#include "engine/database.h"
#include "table/table_def.h"

namespace millrace::cdc {

std::string TargetDdl(const SourceTable& source, const TargetDatabaseSpec& spec);
Result<table::TableDef> TargetDef(const std::string& database, const SourceTable& source,
                                  const TargetDatabaseSpec& spec);
Status EnsureTarget(engine::Connection& conn, const table::TableDef& def);
Status BindByName(const SourceTable& source, const table::TableDef& def, ApplyTarget* target);
struct AlteredTarget {
  table::TableDef def;
  std::vector<std::string> added;
};
Result<AlteredTarget> AlterTarget(engine::Connection& conn, const table::TableDef& target,
                                  const std::vector<const SourceTable*>& shapes);
Status Backfill(engine::Connection& conn, const table::TableDef& def, const SourceTable& shape,
                const std::vector<std::string>& columns);

}  // namespace millrace::cdc
