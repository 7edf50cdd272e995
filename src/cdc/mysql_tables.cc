#include "cdc/mysql_tables.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "common/strings.h"
#include "mysql/binlog_rows.h"

namespace millrace::cdc {
namespace {

using mysql::MysqlConnection;

constexpr uint32_t kBinaryCollation = mysql::kBinaryCollation;

int64_t ToInt(const mysql::Field& field) {
  int64_t v = 0;
  if (field) std::from_chars(field->data(), field->data() + field->size(), v);
  return v;
}

// The binlog's type code for information_schema's DATA_TYPE (MariaDB's JSON is a LONGTEXT, as
// in the binlog).
Result<uint8_t> TypeCode(const std::string& data_type, const std::string& column) {
  static const std::map<std::string, uint8_t> kCodes = {
      {"tinyint", mysql::kTypeTiny},
      {"smallint", mysql::kTypeShort},
      {"mediumint", mysql::kTypeInt24},
      {"int", mysql::kTypeLong},
      {"bigint", mysql::kTypeLongLong},
      {"float", mysql::kTypeFloat},
      {"double", mysql::kTypeDouble},
      {"decimal", mysql::kTypeNewDecimal},
      {"bit", mysql::kTypeBit},
      {"year", mysql::kTypeYear},
      {"date", mysql::kTypeDate},
      {"datetime", mysql::kTypeDateTime2},
      {"timestamp", mysql::kTypeTimestamp2},
      {"time", mysql::kTypeTime2},
      {"char", mysql::kTypeString},
      {"binary", mysql::kTypeString},
      {"varchar", mysql::kTypeVarchar},
      {"varbinary", mysql::kTypeVarchar},
      {"tinytext", mysql::kTypeBlob},
      {"text", mysql::kTypeBlob},
      {"mediumtext", mysql::kTypeBlob},
      {"longtext", mysql::kTypeBlob},
      {"tinyblob", mysql::kTypeBlob},
      {"blob", mysql::kTypeBlob},
      {"mediumblob", mysql::kTypeBlob},
      {"longblob", mysql::kTypeBlob},
      {"json", mysql::kTypeJson},
      {"enum", mysql::kTypeEnum},
      {"set", mysql::kTypeSet},
      {"geometry", mysql::kTypeGeometry},
      {"point", mysql::kTypeGeometry},
      {"linestring", mysql::kTypeGeometry},
      {"polygon", mysql::kTypeGeometry},
  };
  auto it = kCodes.find(ToLower(data_type));
  if (it == kCodes.end()) {
    return Status::NotSupported("column " + column + " has type " + data_type +
                                ", which change data capture from MySQL does not read");
  }
  return it->second;
}

// The staged text of a value of `column` (see the contract), from the column itself.
std::string ValueExpression(const SourceColumn& column) {
  const std::string c = MysqlConnection::Identifier(column.name);
  if (column.mapping.form == change::ValueForm::kBytea) {
    return "CONCAT('\\\\x', LOWER(HEX(" + c + ")))";
  }
  switch (column.type_id) {
    case mysql::kTypeBit:
      return "CAST(" + c + " AS UNSIGNED)";
    case mysql::kTypeFloat:
      return "CAST(" + c + " AS DOUBLE)";
    case mysql::kTypeDate:
    case mysql::kTypeDateTime2:
      return "IF(MONTH(" + c + ") = 0 OR DAYOFMONTH(" + c + ") = 0, NULL, " + c + ")";
    case mysql::kTypeTimestamp2:
      return "IF(MONTH(" + c + ") = 0, NULL, CONCAT(" + c + ", '+00'))";
    default:
      return c;
  }
}

// A key value's staged text as a literal of its column.
std::string KeyLiteral(const MysqlConnection& conn, const SourceColumn& column,
                       const std::string& staged) {
  if (column.mapping.form == change::ValueForm::kBytea) {
    return "UNHEX(" + conn.Literal(staged.substr(std::min<size_t>(2, staged.size()))) + ")";
  }
  if (column.type_id == mysql::kTypeBit) return "CAST(" + conn.Literal(staged) + " AS UNSIGNED)";
  if (column.type_id == mysql::kTypeTimestamp2 && staged.ends_with("+00")) {
    return conn.Literal(staged.substr(0, staged.size() - 3));
  }
  return conn.Literal(staged);
}

}  // namespace

Result<SourceTable> DescribeMysqlTable(MysqlConnection& conn, const std::string& schema,
                                       const std::string& table) {
  MR_ASSIGN_OR_RETURN(
      mysql::Rows rows,
      conn.Query("SELECT c.COLUMN_NAME, c.DATA_TYPE, c.COLUMN_TYPE, c.NUMERIC_PRECISION, "
                 "c.NUMERIC_SCALE, c.CHARACTER_OCTET_LENGTH, co.ID, c.IS_NULLABLE, "
                 "(SELECT k.ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE k WHERE "
                 "k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME AND "
                 "k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY') "
                 "FROM information_schema.COLUMNS c LEFT JOIN information_schema.COLLATIONS co "
                 "ON co.COLLATION_NAME = c.COLLATION_NAME WHERE c.TABLE_SCHEMA = " +
                 conn.Literal(schema) + " AND c.TABLE_NAME = " + conn.Literal(table) +
                 " ORDER BY c.ORDINAL_POSITION"));
  if (rows.rows.empty()) {
    return Status::NotFound("MySQL table " + schema + "." + table + " does not exist on " +
                            mysql::Describe(conn.params()));
  }
  SourceTable out;
  out.schema = schema;
  out.name = table;
  std::vector<std::pair<int64_t, size_t>> key;
  for (const mysql::Row& row : rows.rows) {
    mysql::BinlogColumn binlog;
    binlog.name = row[0].value_or("");
    MR_ASSIGN_OR_RETURN(binlog.type, TypeCode(row[1].value_or(""), binlog.name));
    const std::string column_type = ToLower(row[2].value_or(""));
    binlog.is_unsigned = column_type.find("unsigned") != std::string::npos;
    if (binlog.type == mysql::kTypeNewDecimal) {
      binlog.metadata = static_cast<uint16_t>(ToInt(row[3]) << 8 | ToInt(row[4]));
    } else if (binlog.type == mysql::kTypeString || binlog.type == mysql::kTypeVarchar) {
      binlog.metadata = static_cast<uint16_t>(ToInt(row[5]));
    }
    binlog.charset = row[6] ? static_cast<uint32_t>(ToInt(row[6])) : kBinaryCollation;
    binlog.nullable = row[7].value_or("YES") == "YES";
    SourceColumn column;
    column.name = binlog.name;
    column.type_name = row[2].value_or("");
    column.type_id = binlog.type;
    column.mapping = mysql::MapColumn(binlog);
    column.not_null = !binlog.nullable;
    if (row[8]) key.emplace_back(ToInt(row[8]), out.columns.size());
    out.columns.push_back(std::move(column));
  }
  if (key.empty()) {
    return Status::InvalidArgument("MySQL table " + out.Display() +
                                   " has no primary key: change data capture applies updates "
                                   "and deletes by key (add a PRIMARY KEY)");
  }
  std::sort(key.begin(), key.end());
  for (const auto& [position, index] : key)
    out.key.push_back(index);
  return out;
}

std::string SnapshotSelect(const MysqlConnection& conn, const SourceTable& table,
                           const std::vector<std::string>& after, int64_t limit) {
  std::string values;
  for (size_t i = 0; i < table.columns.size(); ++i)
    values += (i ? ", " : "") + ValueExpression(table.columns[i]);
  std::string key;
  std::string bound;
  for (size_t n = 0; n < table.key.size(); ++n) {
    const SourceColumn& column = table.columns[table.key[n]];
    key += (n ? ", " : "") + MysqlConnection::Identifier(column.name);
    if (n < after.size()) bound += (n ? ", " : "") + KeyLiteral(conn, column, after[n]);
  }
  std::string select = "SELECT " + values + " FROM " + MysqlConnection::Identifier(table.schema) +
                       "." + MysqlConnection::Identifier(table.name);
  if (!after.empty()) select += " WHERE (" + key + ") > (" + bound + ")";
  return select + " ORDER BY " + key + " LIMIT " + std::to_string(limit);
}

Result<SnapshotPosition> ConsistentSnapshot(MysqlConnection& conn) {
  MR_RETURN_IF_ERROR(conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"));
  MR_ASSIGN_OR_RETURN(mysql::Rows status, conn.Query("SHOW STATUS LIKE 'binlog_snapshot_%'"));
  SnapshotPosition out;
  for (const mysql::Row& row : status.rows) {
    const std::string name = ToLower(row[0].value_or(""));
    if (name == "binlog_snapshot_file") out.position.file = row[1].value_or("");
    if (name == "binlog_snapshot_position") {
      out.position.position = static_cast<uint64_t>(ToInt(row[1]));
    }
  }
  if (out.position.file.empty()) {
    return Status::NotSupported(
        "MySQL server " + mysql::Describe(conn.params()) +
        " does not report the binlog position of a consistent snapshot "
        "(binlog_snapshot_file: MariaDB has it; MySQL 8 is not supported yet)");
  }
  MR_ASSIGN_OR_RETURN(mysql::Rows gtid,
                      conn.Query("SELECT BINLOG_GTID_POS(" + conn.Literal(out.position.file) +
                                 ", " + std::to_string(out.position.position) + ")"));
  if (!gtid.rows.empty()) out.gtid = gtid.rows[0][0].value_or("");
  return out;
}

}  // namespace millrace::cdc
