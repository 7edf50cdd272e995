// Doris's column types and the DuckDB types they are stored as.
//
// Contract
// - ParseDorisType reads one type at the cursor, nested types included (ARRAY<T>, MAP<K,V>,
//   STRUCT<name:T, ...>), and returns it as Doris prints it (lower case: "int",
//   "varchar(20)", "decimal(10,2)", "text" for STRING, "array<int>") with its DuckDB type.
// - The mapping: TINYINT, SMALLINT, INT, BIGINT as they are; LARGEINT -> HUGEINT; FLOAT,
//   DOUBLE; DECIMAL/DECIMALV2/DECIMALV3(p,s) -> DECIMAL(p,s) (p at most 38, DuckDB's widest;
//   DECIMAL alone is decimal(9,0)); DATE/DATEV2 -> DATE; DATETIME/DATETIMEV2(p) -> TIMESTAMP
//   (microseconds, p at most 6); BOOLEAN; CHAR(n), VARCHAR(n), STRING, TEXT -> VARCHAR (the
//   length is kept for SHOW CREATE TABLE, not enforced); JSON, JSONB, VARIANT -> JSON;
//   ARRAY<T> -> T[]; MAP<K,V> -> MAP(K, V); STRUCT<a:T> -> STRUCT("a" T).
// - A type with no honest DuckDB equivalent (BITMAP, HLL, QUANTILE_STATE, AGG_STATE, IPV4,
//   IPV6, DECIMAL wider than 38 digits) is MySQL error 1235 naming it and why; an unknown type
//   is a syntax error (1064) naming it.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "sql/statement_support.h"

namespace millrace::table {

struct MappedType {
  std::string doris;
  std::string duckdb;
};

Result<MappedType> ParseDorisType(sql::Cursor& cursor);
// The Doris type a DuckDB column type reads as (for tables made from a query): "INTEGER" ->
// "int", "VARCHAR" -> "text", "TIMESTAMP" -> "datetime(6)", "BIGINT[]" -> "array<bigint>";
// a type Doris has no name for is its DuckDB name in lower case.
std::string DorisTypeOf(std::string_view duckdb_type);

}  // namespace millrace::table
