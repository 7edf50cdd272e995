// Column types of the engine, mirrored from DuckDB so callers need not include duckdb.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace millrace::engine {

// Values equal DuckDB's duckdb_type so conversion is a cast; kOther covers types we only
// render as text.
enum class TypeId : int {
  kInvalid = 0,
  kBoolean = 1,
  kTinyInt = 2,
  kSmallInt = 3,
  kInteger = 4,
  kBigInt = 5,
  kUTinyInt = 6,
  kUSmallInt = 7,
  kUInteger = 8,
  kUBigInt = 9,
  kFloat = 10,
  kDouble = 11,
  kTimestamp = 12,
  kDate = 13,
  kTime = 14,
  kInterval = 15,
  kHugeInt = 16,
  kVarchar = 17,
  kBlob = 18,
  kDecimal = 19,
  kTimestampSec = 20,
  kTimestampMs = 21,
  kTimestampNs = 22,
  kEnum = 23,
  kList = 24,
  kStruct = 25,
  kMap = 26,
  kUuid = 27,
  kUnion = 28,
  kBit = 29,
  kTimeTz = 30,
  kTimestampTz = 31,
  kUHugeInt = 32,
  kArray = 33,
  kSqlNull = 36,
};

struct ColumnType {
  TypeId id = TypeId::kInvalid;
  uint8_t decimal_width = 0;  // only for kDecimal
  uint8_t decimal_scale = 0;  // only for kDecimal
};

// DuckDB's SQL name of the type, e.g. "BIGINT", "DECIMAL(18,3)", "LIST".
std::string TypeName(const ColumnType& type);

}  // namespace millrace::engine
