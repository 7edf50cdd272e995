// Internal to the server module: how DuckDB result columns and values look on the MySQL wire
// (text protocol).
//
// Mapping (engine::TypeId -> MySQL column type)
// - BOOLEAN -> TINY with display width 1 (TINYINT(1), which drivers read as a boolean); values
//   are sent as 1 and 0, as MySQL sends them.
// - TINYINT/SMALLINT/INTEGER/BIGINT -> TINY/SHORT/LONG/LONGLONG; unsigned variants carry the
//   UNSIGNED flag. HUGEINT/UHUGEINT -> NEWDECIMAL(38/39, 0) (MySQL has no 128-bit integer).
// - DECIMAL(w,s) -> NEWDECIMAL with precision w and s decimals. FLOAT/DOUBLE -> FLOAT/DOUBLE.
// - DATE -> DATE, TIME -> TIME(6), TIMESTAMP(_S|_MS) and TIMESTAMPTZ -> DATETIME(6);
//   TIMESTAMPTZ values are sent in UTC without DuckDB's "+00" suffix (MySQL DATETIME text has
//   no offset).
// - VARCHAR -> VAR_STRING in utf8mb4; BLOB -> BLOB with the binary charset, raw bytes.
// - Everything else (UUID, INTERVAL, TIMESTAMP_NS, TIMETZ, ENUM, BIT, LIST, STRUCT, MAP, ARRAY,
//   UNION) -> VAR_STRING holding DuckDB's text rendering.
// - NULL cells are the protocol's NULL (0xFB), never the text "NULL".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/query_result.h"
#include "server/wire.h"

namespace millrace::server {

// MySQL field types and flags used here.
inline constexpr uint8_t kTypeNewDecimal = 246;
inline constexpr uint8_t kTypeTiny = 1;
inline constexpr uint8_t kTypeShort = 2;
inline constexpr uint8_t kTypeLong = 3;
inline constexpr uint8_t kTypeFloat = 4;
inline constexpr uint8_t kTypeDouble = 5;
inline constexpr uint8_t kTypeNull = 6;
inline constexpr uint8_t kTypeLongLong = 8;
inline constexpr uint8_t kTypeDate = 10;
inline constexpr uint8_t kTypeTime = 11;
inline constexpr uint8_t kTypeDateTime = 12;
inline constexpr uint8_t kTypeBlob = 252;
inline constexpr uint8_t kTypeVarString = 253;

inline constexpr uint16_t kFlagBlob = 16;
inline constexpr uint16_t kFlagUnsigned = 32;
inline constexpr uint16_t kFlagBinary = 128;
inline constexpr uint16_t kFlagNum = 32768;

struct MySqlColumn {
  uint8_t type = kTypeVarString;
  uint16_t flags = 0;
  uint16_t charset = 0;
  uint32_t length = 0;
  uint8_t decimals = 0;
};

MySqlColumn MySqlColumnFor(const engine::ColumnType& type);

// The ColumnDefinition41 payload of a result column.
std::string BuildColumnDefinition(std::string_view schema, std::string_view name,
                                  const MySqlColumn& column);

// Appends the cell as a text-protocol value (length-encoded string, or NULL).
void AppendTextCell(const engine::DataChunk& chunk, size_t col, size_t row, engine::TypeId type,
                    WireWriter* out);

}  // namespace millrace::server
