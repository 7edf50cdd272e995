#include "server/column_types.h"

#include "server/protocol.h"

namespace millrace::server {
namespace {

using engine::TypeId;

// utf8mb4: up to 4 bytes per character.
constexpr uint32_t kBytesPerChar = 4;
// Display width announced for strings of unknown length (MySQL's VARCHAR(16383) in utf8mb4).
constexpr uint32_t kStringLength = 16383 * kBytesPerChar;
// MySQL's "not a fixed number of decimals" marker for FLOAT and DOUBLE.
constexpr uint8_t kNotFixedDecimals = 31;

MySqlColumn Numeric(uint8_t type, uint32_t length, bool is_unsigned = false, uint8_t decimals = 0) {
  return MySqlColumn{
      type, static_cast<uint16_t>(kFlagNum | kFlagBinary | (is_unsigned ? kFlagUnsigned : 0)),
      kBinaryCollation, length, decimals};
}

MySqlColumn Temporal(uint8_t type, uint32_t length, uint8_t decimals) {
  return MySqlColumn{type, kFlagBinary, kBinaryCollation, length, decimals};
}

MySqlColumn Text(uint32_t length = kStringLength) {
  return MySqlColumn{kTypeVarString, 0, kUtf8mb4GeneralCi, length, 0};
}

}  // namespace

MySqlColumn MySqlColumnFor(const engine::ColumnType& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      return Numeric(kTypeTiny, 1);
    case TypeId::kTinyInt:
      return Numeric(kTypeTiny, 4);
    case TypeId::kUTinyInt:
      return Numeric(kTypeTiny, 3, true);
    case TypeId::kSmallInt:
      return Numeric(kTypeShort, 6);
    case TypeId::kUSmallInt:
      return Numeric(kTypeShort, 5, true);
    case TypeId::kInteger:
      return Numeric(kTypeLong, 11);
    case TypeId::kUInteger:
      return Numeric(kTypeLong, 10, true);
    case TypeId::kBigInt:
      return Numeric(kTypeLongLong, 20);
    case TypeId::kUBigInt:
      return Numeric(kTypeLongLong, 20, true);
    case TypeId::kHugeInt:
      return Numeric(kTypeNewDecimal, 40);
    case TypeId::kUHugeInt:
      return Numeric(kTypeNewDecimal, 39, true);
    case TypeId::kFloat:
      return Numeric(kTypeFloat, 12, false, kNotFixedDecimals);
    case TypeId::kDouble:
      return Numeric(kTypeDouble, 22, false, kNotFixedDecimals);
    case TypeId::kDecimal:
      // Precision digits, a sign, and a point when there are decimals.
      return Numeric(kTypeNewDecimal, type.decimal_width + 1u + (type.decimal_scale > 0 ? 1u : 0u),
                     false, type.decimal_scale);
    case TypeId::kDate:
      return Temporal(kTypeDate, 10, 0);
    case TypeId::kTime:
      return Temporal(kTypeTime, 17, 6);
    case TypeId::kTimestampSec:
      return Temporal(kTypeDateTime, 19, 0);
    case TypeId::kTimestampMs:
      return Temporal(kTypeDateTime, 23, 3);
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return Temporal(kTypeDateTime, 26, 6);
    case TypeId::kBlob:
      return MySqlColumn{kTypeBlob, kFlagBlob | kFlagBinary, kBinaryCollation, 65535, 0};
    case TypeId::kSqlNull:
      return MySqlColumn{kTypeNull, kFlagBinary, kBinaryCollation, 0, 0};
    case TypeId::kUuid:
      return Text(36 * kBytesPerChar);
    default:
      return Text();
  }
}

std::string BuildColumnDefinition(std::string_view schema, std::string_view name,
                                  const MySqlColumn& column) {
  WireWriter w;
  w.LenEncString("def").LenEncString(schema).LenEncString("").LenEncString("");
  w.LenEncString(name).LenEncString(name);
  w.LenEncInt(0x0c).Int2(column.charset).Int4(column.length).Int1(column.type);
  w.Int2(column.flags).Int1(column.decimals).Int2(0);
  return w.Take();
}

void AppendTextCell(const engine::DataChunk& chunk, size_t col, size_t row, TypeId type,
                    WireWriter* out) {
  if (chunk.IsNull(col, row)) {
    out->Null();
    return;
  }
  switch (type) {
    case TypeId::kBoolean:
      out->LenEncString(chunk.GetBool(col, row) ? "1" : "0");
      return;
    case TypeId::kBlob:
      out->LenEncString(chunk.GetString(col, row));
      return;
    case TypeId::kTimestampTz: {
      std::string text = chunk.GetText(col, row);
      if (text.ends_with("+00")) text.resize(text.size() - 3);
      out->LenEncString(text);
      return;
    }
    default:
      out->LenEncString(chunk.GetText(col, row));
      return;
  }
}

}  // namespace millrace::server
