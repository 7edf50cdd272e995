#include "engine/types.h"

namespace millrace::engine {

std::string TypeName(const ColumnType& type) {
  switch (type.id) {
    case TypeId::kInvalid:
      return "INVALID";
    case TypeId::kBoolean:
      return "BOOLEAN";
    case TypeId::kTinyInt:
      return "TINYINT";
    case TypeId::kSmallInt:
      return "SMALLINT";
    case TypeId::kInteger:
      return "INTEGER";
    case TypeId::kBigInt:
      return "BIGINT";
    case TypeId::kUTinyInt:
      return "UTINYINT";
    case TypeId::kUSmallInt:
      return "USMALLINT";
    case TypeId::kUInteger:
      return "UINTEGER";
    case TypeId::kUBigInt:
      return "UBIGINT";
    case TypeId::kFloat:
      return "FLOAT";
    case TypeId::kDouble:
      return "DOUBLE";
    case TypeId::kTimestamp:
      return "TIMESTAMP";
    case TypeId::kDate:
      return "DATE";
    case TypeId::kTime:
      return "TIME";
    case TypeId::kInterval:
      return "INTERVAL";
    case TypeId::kHugeInt:
      return "HUGEINT";
    case TypeId::kUHugeInt:
      return "UHUGEINT";
    case TypeId::kVarchar:
      return "VARCHAR";
    case TypeId::kBlob:
      return "BLOB";
    case TypeId::kDecimal:
      return "DECIMAL(" + std::to_string(type.decimal_width) + "," +
             std::to_string(type.decimal_scale) + ")";
    case TypeId::kTimestampSec:
      return "TIMESTAMP_S";
    case TypeId::kTimestampMs:
      return "TIMESTAMP_MS";
    case TypeId::kTimestampNs:
      return "TIMESTAMP_NS";
    case TypeId::kEnum:
      return "ENUM";
    case TypeId::kList:
      return "LIST";
    case TypeId::kStruct:
      return "STRUCT";
    case TypeId::kMap:
      return "MAP";
    case TypeId::kUuid:
      return "UUID";
    case TypeId::kUnion:
      return "UNION";
    case TypeId::kBit:
      return "BIT";
    case TypeId::kTimeTz:
      return "TIME WITH TIME ZONE";
    case TypeId::kTimestampTz:
      return "TIMESTAMP WITH TIME ZONE";
    case TypeId::kArray:
      return "ARRAY";
    case TypeId::kSqlNull:
      return "NULL";
  }
  return "UNKNOWN";
}

}  // namespace millrace::engine
