// The Doris definitions of tables (TableDef), kept next to the tables themselves in
// __millrace.table_models, so SHOW CREATE TABLE, DESC and every write path know a table's
// model.
//
// Contract
// - The record of a table is written in the transaction that creates it (RecordModelSql), so a
//   table and its definition appear together or not at all; DROP TABLE forgets it in the
//   transaction that drops the table (table_statements.h).
// - LoadModel returns a table's definition only while it still describes the table: the same
//   columns in the same order, and for UNIQUE and AGGREGATE tables the keys as DuckDB's
//   primary key. A table made by DuckDB DDL, or dropped and made again by DuckDB DDL, or
//   altered since, has none (nullopt): it is a DUPLICATE table to every write path.
// - The table's schema is kModelTableDdl; the job catalog creates it (catalog version 5).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/database.h"
#include "table/table_def.h"

namespace millrace::table {

inline constexpr std::string_view kModelTableDdl =
    "CREATE TABLE __millrace.table_models (database_name VARCHAR NOT NULL, table_name VARCHAR "
    "NOT NULL, definition VARCHAR NOT NULL, PRIMARY KEY (database_name, table_name))";

// Replaces the record of def.database.def.name with `def` (two statements).
std::string RecordModelSql(const TableDef& def);
// Forgets the record of database.table (its table is dropped).
std::string ForgetModelSql(std::string_view database, std::string_view table);
Result<std::optional<TableDef>> LoadModel(engine::Connection& conn, std::string_view database,
                                          std::string_view table);

// The JSON form of a definition, as the record keeps it.
std::string TableDefToJson(const TableDef& def);
Result<TableDef> TableDefFromJson(std::string_view json);

}  // namespace millrace::table
