#include "cdc/cdc_checksum.h"

namespace millrace::cdc {
namespace {

std::string PgCanon(const CanonColumn& c) {
  const std::string n = "\"" + c.name + "\"";
  switch (c.canon) {
    case Canon::kPlain:
      return n + "::text";
    case Canon::kChar:
      return "rtrim(" + n + "::text)";
    case Canon::kBool:
      return "CASE WHEN " + n + " THEN '1' ELSE '0' END";
    case Canon::kFloat:
      return "round(" + n + "::numeric, 6)::text";
    case Canon::kBytea:
      return "encode(" + n + ", 'hex')";
    case Canon::kTimeTz:
    case Canon::kTimestamp:
      return "(extract(epoch from " + n + ") * 1000000)::bigint::text";
    case Canon::kBit:
      return n + "::text";
    case Canon::kInterval:
      return "extract(epoch from " + n + ")::numeric(20,6)::text";
    case Canon::kArray:
      return "array_to_string(" + n + ", ',', '~')";
  }
  return n;
}

std::string DuckCanon(const CanonColumn& c) {
  const std::string n = "\"" + c.name + "\"";
  switch (c.canon) {
    case Canon::kPlain:
      return "CAST(" + n + " AS VARCHAR)";
    case Canon::kChar:
      return "rtrim(" + n + ")";
    case Canon::kBool:
      return "CASE WHEN " + n + " THEN '1' ELSE '0' END";
    case Canon::kFloat:
      return "CAST(CAST(round(" + n + ", 6) AS DECIMAL(38,6)) AS VARCHAR)";
    case Canon::kBytea:
      // A STRING target holds bytes as DuckDB's escaped text (\xNN), which CAST reads back.
      return "lower(hex(CAST(" + n + " AS BLOB)))";
    case Canon::kTimeTz:
    case Canon::kTimestamp:
      return "CAST(epoch_us(" + n + ") AS VARCHAR)";
    case Canon::kBit:
      return "CAST(" + n + " AS VARCHAR)";
    case Canon::kInterval:
      return "CAST(CAST(epoch(" + n + ") AS DECIMAL(20,6)) AS VARCHAR)";
    case Canon::kArray:
      // DuckDB's array_to_string of an empty list is NULL; PostgreSQL's is ''.
      return "CASE WHEN len(" + n + ") = 0 THEN '' ELSE array_to_string(list_transform(" + n +
             ", x -> coalesce(CAST(x AS VARCHAR), '~')), ',') END";
  }
  return n;
}

std::string MysqlCanon(const CanonColumn& c) {
  const std::string n = "`" + c.name + "`";
  switch (c.canon) {
    case Canon::kPlain:
    case Canon::kArray:
      return "CAST(" + n + " AS CHAR)";
    case Canon::kChar:
      return "RTRIM(" + n + ")";
    case Canon::kBool:
      return "IF(" + n + ", '1', '0')";
    case Canon::kFloat:
      return "CAST(CAST(ROUND(" + n + ", 6) AS DECIMAL(38,6)) AS CHAR)";
    case Canon::kBytea:
      return "LOWER(HEX(" + n + "))";
    case Canon::kTimeTz:
      return "CAST(CAST(UNIX_TIMESTAMP(" + n + ") * 1000000 AS SIGNED) AS CHAR)";
    case Canon::kTimestamp:
      return "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + n + ") AS CHAR)";
    case Canon::kBit:
      return "CAST(CAST(" + n + " AS UNSIGNED) AS CHAR)";
    case Canon::kInterval:
      return "CAST(CAST(TIME_TO_SEC(" + n + ") AS DECIMAL(20,6)) AS CHAR)";
  }
  return n;
}

template <typename F>
std::string Line(const std::vector<CanonColumn>& columns, F canon) {
  std::string line;
  for (size_t i = 0; i < columns.size(); ++i) {
    line += (i ? " || '|' || " : "") + std::string("coalesce(") + canon(columns[i]) + ", '<null>')";
  }
  return line;
}

}  // namespace

std::string PgChecksumSql(const std::string& table, const std::vector<CanonColumn>& columns) {
  return "SET TimeZone = 'UTC'; SELECT count(*) || ':' || coalesce(md5(string_agg(line, E'\\n' "
         "ORDER BY line COLLATE \"C\")), '') FROM (SELECT " +
         Line(columns, PgCanon) + " AS line FROM " + table + ") s";
}

std::string MysqlChecksumSql(const std::string& table, const std::vector<CanonColumn>& columns) {
  std::string line;
  for (size_t i = 0; i < columns.size(); ++i) {
    line +=
        (i ? ", '|', " : "") + std::string("COALESCE(") + MysqlCanon(columns[i]) + ", '<null>')";
  }
  return "SET SESSION group_concat_max_len = 1073741824; SELECT CONCAT(COUNT(*), ':', "
         "COALESCE(MD5(GROUP_CONCAT(line ORDER BY CAST(line AS BINARY) SEPARATOR '\\n')), '')) "
         "FROM (SELECT CONCAT(" +
         line + ") AS line FROM " + table + ") s";
}

std::string DuckChecksumSql(const std::string& table, const std::vector<CanonColumn>& columns) {
  return "SELECT CAST(count(*) AS VARCHAR) || ':' || coalesce(md5(string_agg(line, chr(10) "
         "ORDER BY line)), '') FROM (SELECT " +
         Line(columns, DuckCanon) + " AS line FROM " + table + ") s";
}

}  // namespace millrace::cdc
