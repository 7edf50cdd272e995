#pragma once

// MySQL's column type codes (enum_field_types in mysql_com.h), declared once for both places
// that speak them: the server announces them in column definitions (sql/mysql_types.h) and the
// binlog decoder reads them from table map events (mysql/binlog_rows.h). Each of those brings
// the names into its own namespace with `using enum`.

#include <cstdint>

namespace millrace::mysql_wire {

enum FieldType : uint8_t {
  kTypeDecimal = 0,  // DECIMAL before MySQL 5.0: not decoded from a binlog
  kTypeTiny = 1,
  kTypeShort = 2,
  kTypeLong = 3,
  kTypeFloat = 4,
  kTypeDouble = 5,
  kTypeNull = 6,
  kTypeTimestamp = 7,  // in a binlog: TIMESTAMP before MySQL 5.6's format, epoch seconds
  kTypeLongLong = 8,
  kTypeInt24 = 9,
  kTypeDate = 10,
  kTypeTime = 11,      // in a binlog: TIME before MySQL 5.6's format, HHMMSS as a number
  kTypeDateTime = 12,  // in a binlog: DATETIME before 5.6's format, YYYYMMDDHHMMSS as a number
  kTypeYear = 13,
  kTypeVarchar = 15,
  kTypeBit = 16,
  kTypeTimestamp2 = 17,  // binlog only: the 5.6 formats with fractions
  kTypeDateTime2 = 18,
  kTypeTime2 = 19,
  kTypeJson = 245,  // MySQL 8's binary JSON; MariaDB's JSON is a LONGTEXT (kTypeBlob)
  kTypeNewDecimal = 246,
  kTypeEnum = 247,
  kTypeSet = 248,
  kTypeTinyBlob = 249,  // protocol only: a binlog writes every BLOB size as kTypeBlob
  kTypeMediumBlob = 250,
  kTypeLongBlob = 251,
  kTypeBlob = 252,  // in a binlog: every BLOB and TEXT size; the metadata gives the length prefix
  kTypeVarString = 253,
  kTypeString = 254,  // CHAR and BINARY (and, in the binlog, ENUM and SET)
  kTypeGeometry = 255,
};

}  // namespace millrace::mysql_wire
