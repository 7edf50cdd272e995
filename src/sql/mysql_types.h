// How a DuckDB column type looks to MySQL clients, declared once: the text and binary protocols
// (server module) announce it in column definitions, and information_schema.COLUMNS,
// SHOW COLUMNS and SHOW CREATE TABLE name it.
//
// Mapping (DuckDB type -> MySQL column type; COLUMN_TYPE as information_schema shows it)
// - BOOLEAN -> tinyint(1) (drivers read it as a boolean; values 1 and 0).
// - TINYINT/SMALLINT/INTEGER/BIGINT -> tinyint/smallint/int/bigint; U* -> "... unsigned".
//   HUGEINT/UHUGEINT -> decimal(39,0) [unsigned] (MySQL has no 128-bit integer).
// - DECIMAL(w,s) -> decimal(w,s). FLOAT/DOUBLE -> float/double.
// - DATE -> date; TIME -> time(6); TIMESTAMP_S/_MS/TIMESTAMP -> datetime/datetime(3)/
//   datetime(6); TIMESTAMPTZ -> timestamp(6), sent in UTC (the session's time zone: time_zone
//   is SYSTEM and the system's zone UTC).
// - VARCHAR -> longtext in utf8mb4 (DuckDB strings have no length). BLOB -> longblob.
// - UUID -> char(36).
// - Everything else (INTERVAL, TIMESTAMP_NS, TIMETZ, ENUM, BIT, LIST, STRUCT, MAP, ARRAY,
//   UNION, JSON) -> longtext holding DuckDB's text rendering.
// On the wire each carries MySQL's column type code, flags, character set, length and
// decimals for that column type, as MySQL 8 sends them for a column of that type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/mysql_field_type.h"
#include "engine/types.h"

namespace millrace::sql {

// Column type codes of the protocol (common/mysql_field_type.h).
using enum mysql_wire::FieldType;

// Column definition flags.
inline constexpr uint16_t kFlagNotNull = 1;
inline constexpr uint16_t kFlagBlob = 16;
inline constexpr uint16_t kFlagUnsigned = 32;
inline constexpr uint16_t kFlagBinary = 128;
inline constexpr uint16_t kFlagNum = 32768;

// Collation numbers.
inline constexpr uint16_t kUtf8mb4GeneralCi = 45;
inline constexpr uint16_t kBinaryCollation = 63;

// A result column's type in a ColumnDefinition41 packet.
struct MysqlWireType {
  uint8_t type = kTypeVarString;
  uint16_t flags = 0;
  uint16_t charset = 0;
  uint32_t length = 0;
  uint8_t decimals = 0;
};

struct MysqlType {
  MysqlWireType wire;
  std::string data_type;    // information_schema.COLUMNS.DATA_TYPE: "int", "decimal", ...
  std::string column_type;  // COLUMN_TYPE: "int unsigned", "decimal(10,2)", "tinyint(1)", ...
  std::optional<int64_t> character_maximum_length;
  std::optional<int64_t> character_octet_length;
  std::optional<int64_t> numeric_precision;
  std::optional<int64_t> numeric_scale;
  std::optional<int64_t> datetime_precision;
  bool text = false;  // utf8mb4 characters (CHARACTER_SET_NAME, COLLATION_NAME)
};

MysqlType MysqlTypeOf(const engine::ColumnType& type);

// The types DuckDB names by their type alone (engine::TypeName), every DECIMAL width and scale
// included: the rows of the table function millrace_mysql_types() (mysql_information_schema.h),
// which SQL joins by DuckDB's type name. A type not among them (LIST, STRUCT, ...) maps as
// MysqlTypeOf maps TypeId::kList: longtext.
std::vector<engine::ColumnType> NamedTypes();

}  // namespace millrace::sql
