// TableDef: a table as Doris defines it: its data model (what a write of an existing key
// means), its key columns, and its columns with Doris's types and their DuckDB types.
//
// Contract
// - kDuplicate keeps every row; kUnique keeps the newest row per key (merge-on-write);
//   kAggregate folds the rows of a key with each value column's Aggregation. In DuckDB, a
//   kUnique or kAggregate table has its keys as PRIMARY KEY.
// - Partitioning, distribution, rollups, indexes and properties are Doris's physical design:
//   kept as written, for SHOW CREATE TABLE, with no effect on storage.
// - Thread-safety: values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace millrace::table {

enum class TableModel { kDuplicate, kUnique, kAggregate };
enum class Aggregation { kNone, kSum, kMax, kMin, kReplace, kReplaceIfNotNull };

// "DUPLICATE", "UNIQUE", "AGGREGATE".
std::string_view ModelName(TableModel model);
// "SUM", ..., "REPLACE_IF_NOT_NULL"; "" for kNone.
std::string_view AggregationName(Aggregation aggregation);
// The model or aggregation a name (any case) names; nullopt for none.
std::optional<TableModel> ModelNamed(std::string_view name);
std::optional<Aggregation> AggregationNamed(std::string_view name);

struct Column {
  std::string name;
  std::string doris_type;   // as Doris prints it: "int", "varchar(20)", "array<int>"
  std::string duckdb_type;  // "INTEGER", "VARCHAR", "INTEGER[]"
  bool nullable = true;     // as declared (a key column of a PRIMARY KEY is NOT NULL in DuckDB)
  std::optional<std::string> default_doris;  // as Doris prints it: "\"abc\"", "CURRENT_TIMESTAMP"
  std::optional<std::string> default_sql;    // the DuckDB expression
  std::string comment;
  Aggregation aggregation = Aggregation::kNone;
};

struct TableDef {
  std::string database;
  std::string name;
  TableModel model = TableModel::kDuplicate;
  std::vector<std::string> keys;  // in column order
  std::vector<Column> columns;
  std::string comment;
  // Physical design, as written (empty: none given).
  std::vector<std::string> indexes;  // "INDEX idx (`c`) USING INVERTED"
  std::string partition;             // "PARTITION BY RANGE(`d`) (...)"
  std::string distribution;          // "DISTRIBUTED BY HASH(`k`) BUCKETS 3"
  std::string rollup;                // "ROLLUP (r1 (`a`, `b`))"
  std::vector<std::pair<std::string, std::string>> properties;
  // The delete sign is a column of the table, written as any value (model_write.h): a staging
  // table that keeps deletes as rows for a sink to carry out elsewhere (an external table's).
  bool delete_sign_kept = false;

  const Column* FindColumn(std::string_view name) const;
  bool IsKey(std::string_view column) const;
};

}  // namespace millrace::table
