#include "pg/pg_types.h"

namespace millrace::pg {

using change::TypeMapping;
using change::ValueForm;

namespace {

// Type OIDs fixed by PostgreSQL (pg_type.dat).
enum : uint32_t {
  kBool = 16,
  kBytea = 17,
  kChar = 18,
  kName = 19,
  kInt8 = 20,
  kInt2 = 21,
  kInt4 = 23,
  kText = 25,
  kOid = 26,
  kJson = 114,
  kFloat4 = 700,
  kFloat8 = 701,
  kBpchar = 1042,
  kVarchar = 1043,
  kDate = 1082,
  kTime = 1083,
  kTimestamp = 1114,
  kTimestamptz = 1184,
  kInterval = 1186,
  kTimetz = 1266,
  kNumeric = 1700,
  kUuid = 2950,
  kJsonb = 3802,
};

TypeMapping Scalar(uint32_t oid, int32_t modifier) {
  switch (oid) {
    case kBool:
      return {"BOOLEAN", "boolean"};
    case kBytea:
      return {"BLOB", "string", ValueForm::kBytea};
    case kInt2:
      return {"SMALLINT", "smallint"};
    case kInt4:
      return {"INTEGER", "int"};
    case kInt8:
      return {"BIGINT", "bigint"};
    case kOid:
      return {"UBIGINT", "largeint"};
    case kFloat4:
      return {"FLOAT", "float"};
    case kFloat8:
      return {"DOUBLE", "double"};
    case kDate:
      return {"DATE", "date"};
    case kTime:
      return {"TIME", "string"};
    case kTimetz:
      return {"TIMETZ", "string"};
    case kTimestamp:
      return {"TIMESTAMP", "datetime(6)"};
    case kTimestamptz:
      return {"TIMESTAMPTZ", "datetime(6)"};
    case kInterval:
      return {"INTERVAL", "string", ValueForm::kInterval};
    case kUuid:
      return {"UUID", "string"};
    case kJson:
    case kJsonb:
      return {"JSON", "json"};
    case kNumeric: {
      if (modifier < 4) return {"DECIMAL(38,9)", "decimal(38,9)"};
      const int precision = ((modifier - 4) >> 16) & 0xffff;
      const int scale = (modifier - 4) & 0xffff;
      if (precision > 38 || scale > precision) return {"VARCHAR", "string"};
      const std::string ps = std::to_string(precision) + "," + std::to_string(scale);
      return {"DECIMAL(" + ps + ")", "decimal(" + ps + ")"};
    }
    case kVarchar:
      if (modifier > 4) return {"VARCHAR", "varchar(" + std::to_string(modifier - 4) + ")"};
      return {"VARCHAR", "string"};
    case kBpchar:
      if (modifier > 4) return {"VARCHAR", "char(" + std::to_string(modifier - 4) + ")"};
      return {"VARCHAR", "string"};
    case kText:
    case kName:
    case kChar:
    default:
      return {"VARCHAR", "string"};
  }
}

}  // namespace

TypeMapping MapType(const PgType& type) {
  if (type.category == 'A' && type.element != 0) {
    TypeMapping element = Scalar(type.element, type.element_modifier);
    if (element.form != ValueForm::kCast) return {"VARCHAR", "string"};
    return {element.duckdb_type + "[]", "array<" + element.doris_type + ">", ValueForm::kArray};
  }
  if (type.typtype == 'e') return {"VARCHAR", "string"};
  return Scalar(type.oid, type.modifier);
}

}  // namespace millrace::pg
