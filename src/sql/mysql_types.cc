#include "sql/mysql_types.h"

namespace millrace::sql {
namespace {

using engine::TypeId;

// utf8mb4: up to 4 bytes per character.
constexpr int64_t kBytesPerChar = 4;
// LONGTEXT and LONGBLOB: up to 2^32 - 1 bytes.
constexpr int64_t kLongLength = 4294967295;
// MySQL's "not a fixed number of decimals" marker for FLOAT and DOUBLE.
constexpr uint8_t kNotFixedDecimals = 31;

MysqlType Integer(uint8_t wire_type, uint32_t length, std::string data_type, int64_t precision,
                  bool is_unsigned) {
  MysqlType t;
  t.wire = {wire_type,
            static_cast<uint16_t>(kFlagNum | kFlagBinary | (is_unsigned ? kFlagUnsigned : 0)),
            kBinaryCollation, length, 0};
  t.column_type = data_type + (is_unsigned ? " unsigned" : "");
  t.data_type = std::move(data_type);
  t.numeric_precision = precision;
  t.numeric_scale = 0;
  return t;
}

MysqlType Decimal(int64_t width, int64_t scale, bool is_unsigned) {
  MysqlType t = Integer(kTypeNewDecimal,
                        // Precision digits, a sign, and a point when there are decimals.
                        static_cast<uint32_t>(width + 1 + (scale > 0 ? 1 : 0)), "decimal", width,
                        is_unsigned);
  t.wire.decimals = static_cast<uint8_t>(scale);
  t.column_type = "decimal(" + std::to_string(width) + "," + std::to_string(scale) + ")" +
                  (is_unsigned ? " unsigned" : "");
  t.numeric_scale = scale;
  return t;
}

MysqlType Floating(uint8_t wire_type, uint32_t length, std::string data_type, int64_t precision) {
  MysqlType t = Integer(wire_type, length, std::move(data_type), precision, false);
  t.wire.decimals = kNotFixedDecimals;
  t.numeric_scale.reset();
  return t;
}

// DATE, TIME, DATETIME, TIMESTAMP with `fraction` fractional digits.
MysqlType Temporal(uint8_t wire_type, uint32_t length, std::string data_type, int64_t fraction) {
  MysqlType t;
  t.wire = {wire_type, kFlagBinary, kBinaryCollation, length, static_cast<uint8_t>(fraction)};
  t.column_type = data_type + (fraction > 0 ? "(" + std::to_string(fraction) + ")" : "");
  t.data_type = std::move(data_type);
  if (wire_type != kTypeDate) t.datetime_precision = fraction;
  return t;
}

MysqlType Characters(uint8_t wire_type, std::string data_type, std::string column_type,
                     int64_t max_chars, bool binary) {
  MysqlType t;
  const int64_t octets = binary || max_chars == kLongLength ? max_chars : max_chars * kBytesPerChar;
  t.wire = {
      wire_type,
      static_cast<uint16_t>((wire_type == kTypeBlob ? kFlagBlob : 0) | (binary ? kFlagBinary : 0)),
      binary ? kBinaryCollation : kUtf8mb4GeneralCi, static_cast<uint32_t>(octets), 0};
  t.data_type = std::move(data_type);
  t.column_type = std::move(column_type);
  t.character_maximum_length = max_chars;
  t.character_octet_length = octets;
  t.text = !binary;
  return t;
}

}  // namespace

MysqlType MysqlTypeOf(const engine::ColumnType& type) {
  switch (type.id) {
    case TypeId::kBoolean: {
      MysqlType t = Integer(kTypeTiny, 1, "tinyint", 3, false);
      t.column_type = "tinyint(1)";
      return t;
    }
    case TypeId::kTinyInt:
      return Integer(kTypeTiny, 4, "tinyint", 3, false);
    case TypeId::kUTinyInt:
      return Integer(kTypeTiny, 3, "tinyint", 3, true);
    case TypeId::kSmallInt:
      return Integer(kTypeShort, 6, "smallint", 5, false);
    case TypeId::kUSmallInt:
      return Integer(kTypeShort, 5, "smallint", 5, true);
    case TypeId::kInteger:
      return Integer(kTypeLong, 11, "int", 10, false);
    case TypeId::kUInteger:
      return Integer(kTypeLong, 10, "int", 10, true);
    case TypeId::kBigInt:
      return Integer(kTypeLongLong, 20, "bigint", 19, false);
    case TypeId::kUBigInt:
      return Integer(kTypeLongLong, 20, "bigint", 20, true);
    case TypeId::kHugeInt:
      return Decimal(39, 0, false);
    case TypeId::kUHugeInt:
      return Decimal(39, 0, true);
    case TypeId::kDecimal:
      return Decimal(type.decimal_width, type.decimal_scale, false);
    case TypeId::kFloat:
      return Floating(kTypeFloat, 12, "float", 12);
    case TypeId::kDouble:
      return Floating(kTypeDouble, 22, "double", 22);
    case TypeId::kDate:
      return Temporal(kTypeDate, 10, "date", 0);
    case TypeId::kTime:
      return Temporal(kTypeTime, 17, "time", 6);
    case TypeId::kTimestampSec:
      return Temporal(kTypeDateTime, 19, "datetime", 0);
    case TypeId::kTimestampMs:
      return Temporal(kTypeDateTime, 23, "datetime", 3);
    case TypeId::kTimestamp:
      return Temporal(kTypeDateTime, 26, "datetime", 6);
    case TypeId::kTimestampTz:
      return Temporal(kTypeTimestamp, 26, "timestamp", 6);
    case TypeId::kBlob:
      return Characters(kTypeBlob, "longblob", "longblob", kLongLength, true);
    case TypeId::kUuid:
      return Characters(kTypeString, "char", "char(36)", 36, false);
    case TypeId::kSqlNull: {
      MysqlType t;
      t.wire = {kTypeNull, kFlagBinary, kBinaryCollation, 0, 0};
      t.data_type = t.column_type = "null";
      return t;
    }
    default:
      return Characters(kTypeBlob, "longtext", "longtext", kLongLength, false);
  }
}

std::vector<engine::ColumnType> NamedTypes() {
  std::vector<engine::ColumnType> types;
  for (TypeId id :
       {TypeId::kBoolean,     TypeId::kTinyInt,   TypeId::kUTinyInt,    TypeId::kSmallInt,
        TypeId::kUSmallInt,   TypeId::kInteger,   TypeId::kUInteger,    TypeId::kBigInt,
        TypeId::kUBigInt,     TypeId::kHugeInt,   TypeId::kUHugeInt,    TypeId::kFloat,
        TypeId::kDouble,      TypeId::kDate,      TypeId::kTime,        TypeId::kTimestampSec,
        TypeId::kTimestampMs, TypeId::kTimestamp, TypeId::kTimestampTz, TypeId::kVarchar,
        TypeId::kBlob,        TypeId::kUuid}) {
    types.push_back({id});
  }
  constexpr uint8_t kMaxWidth = 38;  // DuckDB's widest DECIMAL
  for (uint8_t width = 1; width <= kMaxWidth; ++width) {
    for (uint8_t scale = 0; scale <= width; ++scale)
      types.push_back({TypeId::kDecimal, width, scale});
  }
  return types;
}

}  // namespace millrace::sql
