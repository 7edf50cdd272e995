// CREATE TABLE as Doris writes it: parsed into a TableDef, made into DuckDB's CREATE TABLE, and
// printed back as Doris prints it (SHOW CREATE TABLE).
//
// Contract
// - ParseCreateTable reads
//     CREATE [EXTERNAL] TABLE [IF NOT EXISTS] [db.]t
//       ( col type [KEY] [SUM|MAX|MIN|REPLACE|REPLACE_IF_NOT_NULL] [NULL|NOT NULL]
//             [DEFAULT value] [COMMENT 'c'], ... [, INDEX name (cols) [USING ...] [COMMENT 'c']]
//         [,] )
//       [ENGINE = OLAP] [DUPLICATE|UNIQUE|AGGREGATE KEY (cols)] [COMMENT 't']
//       [[AUTO] PARTITION BY RANGE|LIST (...) (...)] [DISTRIBUTED BY HASH (cols) | RANDOM
//       [BUCKETS n|AUTO]] [ROLLUP (...)] [PROPERTIES ("k" = "v", ...)] [AS query]
//   and CREATE TABLE [IF NOT EXISTS] t LIKE [db.]other; names may be `backquoted`, a trailing
//   comma before ')' is accepted, clauses may come in any order. Without a key clause the
//   table is DUPLICATE with Doris's default sort key (the first columns, up to three, ending
//   at the first string column). Errors: 1064 naming where parsing stopped; 1105 for a
//   definition Doris refuses too (a key that is not a column, keys that are not the leading
//   columns, a value column of an AGGREGATE table without its function, a function outside
//   an AGGREGATE table); 1235 for what Millrace cannot store (doris_types.h, AUTO_INCREMENT,
//   ENGINE other than OLAP).
// - IsDorisCreateTable says whether a CREATE TABLE statement uses anything of Doris's syntax
//   that DuckDB would not take (backquotes, a key, engine, distribution, partition, properties
//   or rollup clause, a Doris-only type or an aggregation), so plain DuckDB DDL goes to DuckDB
//   as written.
// - DuckDbCreateTable is the DuckDB statement making the table: its columns with their DuckDB
//   types, NOT NULL, DEFAULT, and for UNIQUE and AGGREGATE the keys as PRIMARY KEY.
// - ShowCreateTable prints `def` as Doris's SHOW CREATE TABLE does; it parses back into the
//   same TableDef.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "table/table_def.h"

namespace millrace::table {

struct CreateTable {
  bool if_not_exists = false;
  TableDef def;                      // database empty: the session's current database
  std::optional<std::string> query;  // AS query
  std::optional<std::pair<std::string, std::string>> like;  // LIKE db.table (db may be empty)
};

Result<CreateTable> ParseCreateTable(std::string_view sql);
bool IsDorisCreateTable(std::string_view sql);
std::string DuckDbCreateTable(const TableDef& def, bool if_not_exists);
std::string ShowCreateTable(const TableDef& def);

}  // namespace millrace::table
