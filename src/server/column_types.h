// Internal to the server module: how DuckDB result columns and values look on the MySQL wire.
// The type of each column is declared once in sql/mysql_types.h (MysqlTypeOf); this file
// writes it as a ColumnDefinition41 and writes text-protocol cells:
// - BOOLEAN values are sent as 1 and 0, as MySQL sends them.
// - TIMESTAMPTZ values are sent in UTC without DuckDB's "+00" suffix (MySQL's TIMESTAMP text
//   has no offset).
// - BLOB values are the raw bytes; every other value is DuckDB's text rendering.
// - NULL cells are the protocol's NULL (0xFB), never the text "NULL".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/query_result.h"
#include "server/wire.h"
#include "sql/mysql_types.h"

namespace millrace::server {

using sql::kBinaryCollation;
using sql::kFlagBinary;
using sql::kFlagBlob;
using sql::kFlagNum;
using sql::kFlagUnsigned;
using sql::kTypeBlob;
using sql::kTypeDate;
using sql::kTypeDateTime;
using sql::kTypeDouble;
using sql::kTypeFloat;
using sql::kTypeLong;
using sql::kTypeLongLong;
using sql::kTypeNewDecimal;
using sql::kTypeNull;
using sql::kTypeShort;
using sql::kTypeTime;
using sql::kTypeTimestamp;
using sql::kTypeTiny;
using sql::kTypeVarString;
using sql::kUtf8mb4GeneralCi;

using MySqlColumn = sql::MysqlWireType;

MySqlColumn MySqlColumnFor(const engine::ColumnType& type);

// The ColumnDefinition41 payload of a result column.
// `table` names the column's table (COM_FIELD_LIST); result columns leave it empty.
std::string BuildColumnDefinition(std::string_view schema, std::string_view name,
                                  const MySqlColumn& column, std::string_view table = "");

// The text of a temporal cell as DuckDB renders it, without TIMESTAMPTZ's "+00" (sent in UTC).
std::string TemporalText(const engine::DataChunk& chunk, size_t col, size_t row);

// Appends the cell as a text-protocol value (length-encoded string, or NULL).
void AppendTextCell(const engine::DataChunk& chunk, size_t col, size_t row, engine::TypeId type,
                    WireWriter* out);

}  // namespace millrace::server
