// Test support: a checksum of a table computed on both sides — the PostgreSQL or MySQL source and
// its
// Millrace (DuckDB) target — over one canonical text form per column kind, so that equal
// checksums mean equal rows and values, not only equal counts.
#pragma once

#include <string>
#include <vector>

namespace millrace::cdc {

enum class Canon {
  kPlain,      // integers, text, varchar, uuid, date, timestamp, numeric(p,s), enum, json text
  kChar,       // char(n): compared without trailing blanks
  kBool,       // '1' / '0'
  kFloat,      // rounded to 6 decimals
  kBytea,      // lower-case hex
  kTimeTz,     // timestamptz (MySQL's TIMESTAMP): microseconds since the epoch
  kTimestamp,  // timestamp without time zone (MySQL's DATETIME): microseconds since 1970-01-01
  kBit,        // MySQL's BIT: its unsigned integer
  kInterval,   // seconds (intervals without months)
  kArray,      // elements joined by ',' (NULL elements as '~')
};

struct CanonColumn {
  std::string name;
  Canon canon = Canon::kPlain;
};

// SELECT md5(...) over the rows of `table` on PostgreSQL.
std::string PgChecksumSql(const std::string& table, const std::vector<CanonColumn>& columns);
// The same on MySQL or MariaDB (a script: it raises group_concat_max_len first).
std::string MysqlChecksumSql(const std::string& table, const std::vector<CanonColumn>& columns);
// The same over `table` in Millrace.
std::string DuckChecksumSql(const std::string& table, const std::vector<CanonColumn>& columns);

}  // namespace millrace::cdc
