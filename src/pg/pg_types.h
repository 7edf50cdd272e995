// How PostgreSQL's types map to DuckDB's (and Doris's), and how a value's text form becomes a
// DuckDB value.
//
// Contract
// - MapType gives, for a column's type as the catalog describes it, the DuckDB type its values
//   take, the Doris type a created target declares, and how the text form PostgreSQL prints
//   (TimeZone UTC, DateStyle ISO, IntervalStyle postgres: pg_connection.h) is converted:
//   - int2, int4, int8, oid: SMALLINT, INTEGER, BIGINT, UBIGINT
//   - numeric(p,s) with p <= 38: DECIMAL(p,s); numeric without precision: DECIMAL(38,9); wider:
//     VARCHAR
//   - real, double precision: FLOAT, DOUBLE (NaN and ±Infinity kept); bool: BOOLEAN
//   - text, varchar, char, name, enums and any other type: VARCHAR (the text PostgreSQL prints)
//   - bytea: BLOB; date, time, timetz: DATE, TIME, TIMETZ
//   - timestamp, timestamptz: TIMESTAMP, TIMESTAMPTZ (microseconds; ±infinity kept)
//   - interval: INTERVAL; uuid: UUID; json, jsonb: JSON
//   - one-dimensional arrays of the types above that convert by a cast: LIST of the element type
//   A domain maps as its base type.
// - The mappings and the staging of text are change/change_value.h's.
// - Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "change/change_value.h"
#include "common/result.h"

namespace millrace::pg {

// A column's type as pg_type describes it.
struct PgType {
  uint32_t oid = 0;
  int32_t modifier = -1;  // atttypmod
  char typtype = 'b';     // b base, e enum, d domain, c composite, r range
  char category = 'U';    // typcategory: A array, ...
  uint32_t element = 0;   // typelem of an array
  int32_t element_modifier = -1;
  std::string name;  // format_type, for messages
};

change::TypeMapping MapType(const PgType& type);

}  // namespace millrace::pg
