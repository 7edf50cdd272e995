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

// A collation number of a column's character set, as the binlog's TABLE_MAP would give it
// (any collation of the set does: the decoder reads the set); NULL is a binary string's. A
// character set the binlog decoder does not read is NOT_SUPPORTED here, before any copy.
Result<uint32_t> CollationOf(const mysql::Field& charset, const std::string& column) {
  if (!charset) return kBinaryCollation;
  static const std::map<std::string, uint32_t> kCollations = {
      {"binary", kBinaryCollation},
      {"latin1", 8},
      {"ascii", 11},
      {"utf8mb3", 33},
      {"utf8", 33},
      {"utf8mb4", 45},
  };
  auto it = kCollations.find(ToLower(*charset));
  if (it == kCollations.end()) {
    return Status::NotSupported("column " + column + " has character set " + *charset +
                                ", which change data capture from MySQL does not read (binary, "
                                "latin1, ascii, utf8mb3 and utf8mb4 are)");
  }
  return it->second;
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

// True for the text of a number: an optional '-', digits, at most one '.'.
bool IsNumber(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty()) return false;
  bool dot = false;
  for (char c : text) {
    if (c == '.' && !dot) {
      dot = true;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

// A key value's staged text as a literal of its column. Numbers stay numbers: MySQL compares a
// number with a quoted string as a double, which loses digits beyond 2^53.
std::string KeyLiteral(const MysqlConnection& conn, const SourceColumn& column,
                       const std::string& staged) {
  switch (column.type_id) {
    case mysql::kTypeTiny:
    case mysql::kTypeShort:
    case mysql::kTypeInt24:
    case mysql::kTypeLong:
    case mysql::kTypeLongLong:
    case mysql::kTypeNewDecimal:
    case mysql::kTypeYear:
    case mysql::kTypeBit:
      if (IsNumber(staged)) return staged;
      break;
    default:
      break;
  }
  if (column.mapping.form == change::ValueForm::kBytea) {
    return "UNHEX(" + conn.Literal(staged.substr(std::min<size_t>(2, staged.size()))) + ")";
  }
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
                 "c.NUMERIC_SCALE, c.CHARACTER_OCTET_LENGTH, c.CHARACTER_SET_NAME, c.IS_NULLABLE, "
                 "(SELECT k.ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE k WHERE "
                 "k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME AND "
                 "k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY') "
                 "FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = " +
                 conn.Literal(schema) + " AND c.TABLE_NAME = " + conn.Literal(table) +
                 " ORDER BY c.ORDINAL_POSITION"));
  if (rows.rows.empty()) {
    return Status::NotFound("MySQL table " + schema + "." + table + " does not exist on " +
                            mysql::Describe(conn.params()));
  }
  MR_ASSIGN_OR_RETURN(
      mysql::Rows engine,
      conn.Query("SELECT ENGINE FROM information_schema.TABLES WHERE "
                 "TABLE_SCHEMA = " +
                 conn.Literal(schema) + " AND TABLE_NAME = " + conn.Literal(table)));
  const std::string engine_name = engine.rows.empty() ? "" : engine.rows[0][0].value_or("");
  if (ToLower(engine_name) != "innodb") {
    // Only InnoDB reads a consistent snapshot: another engine's rows would be read as they are
    // now, not as of the snapshot's binlog position.
    return Status::NotSupported("MySQL table " + schema + "." + table + " uses the " + engine_name +
                                " engine; change data capture needs InnoDB (a " +
                                "consistent snapshot)");
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
    MR_ASSIGN_OR_RETURN(binlog.charset, CollationOf(row[6], binlog.name));
    if ((binlog.type == mysql::kTypeEnum || binlog.type == mysql::kTypeSet) && row[8]) {
      // ORDER BY sorts them by member number, a bound compares their strings: splits would
      // skip and repeat rows.
      return Status::NotSupported("MySQL table " + schema + "." + table + " has ENUM or SET " +
                                  "column " + binlog.name + " in its primary key, which " +
                                  "change data capture does not read");
    }
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
  MR_RETURN_IF_ERROR(out.SetPrimaryKey(std::move(key), "MySQL"));
  return out;
}

namespace {

std::string TableName(const SourceTable& table) {
  return MysqlConnection::Identifier(table.schema) + "." + MysqlConnection::Identifier(table.name);
}

// "(k1, k2)" and, for `key`'s values, "(v1, v2)".
std::string KeyColumns(const SourceTable& table) {
  std::string key;
  for (size_t n = 0; n < table.key.size(); ++n)
    key += (n ? ", " : "") + MysqlConnection::Identifier(table.columns[table.key[n]].name);
  return "(" + key + ")";
}
std::string KeyValues(const MysqlConnection& conn, const SourceTable& table,
                      const std::vector<std::string>& key) {
  std::string values;
  for (size_t n = 0; n < table.key.size() && n < key.size(); ++n)
    values += (n ? ", " : "") + KeyLiteral(conn, table.columns[table.key[n]], key[n]);
  return "(" + values + ")";
}

// "WHERE (key) > (after)", or "".
std::string After(const MysqlConnection& conn, const SourceTable& table,
                  const std::vector<std::string>& after) {
  if (after.empty()) return "";
  return " WHERE " + KeyColumns(table) + " > " + KeyValues(conn, table, after);
}

}  // namespace

std::string SnapshotSelect(const MysqlConnection& conn, const SourceTable& table,
                           const std::vector<std::string>& after, int64_t limit,
                           const std::vector<std::string>& upper) {
  std::string values;
  for (size_t i = 0; i < table.columns.size(); ++i)
    values += (i ? ", " : "") + ValueExpression(table.columns[i]);
  std::string select = "SELECT " + values + " FROM " + TableName(table) + After(conn, table, after);
  if (!upper.empty()) {
    select += (after.empty() ? " WHERE " : " AND ") + KeyColumns(table) +
              " <= " + KeyValues(conn, table, upper);
  }
  select += " ORDER BY " + KeyColumns(table).substr(1, KeyColumns(table).size() - 2);
  if (upper.empty()) select += " LIMIT " + std::to_string(limit);
  return select;
}

std::string SplitBoundsSelect(const MysqlConnection& conn, const SourceTable& table,
                              const std::vector<std::string>& after, int64_t split_size,
                              int count) {
  std::string staged;
  std::string names;
  for (size_t n = 0; n < table.key.size(); ++n) {
    const SourceColumn& column = table.columns[table.key[n]];
    staged += (n ? ", " : "") + ValueExpression(column) + " AS k" + std::to_string(n);
    names += (n ? ", " : "") + std::string("k") + std::to_string(n);
  }
  const std::string order = KeyColumns(table).substr(1, KeyColumns(table).size() - 2);
  return "SELECT " + names + " FROM (SELECT " + staged + ", ROW_NUMBER() OVER (ORDER BY " + order +
         ") AS __millrace_rn FROM (SELECT * FROM " + TableName(table) + After(conn, table, after) +
         " ORDER BY " + order + " LIMIT " + std::to_string(split_size * count) +
         ") a) b WHERE __millrace_rn % " + std::to_string(split_size) +
         " = 0 ORDER BY __millrace_rn";
}

SourceTable DescribeTableMap(const mysql::BinlogTable& table, const SourceTable& known) {
  SourceTable out;
  out.schema = table.schema;
  out.name = table.name;
  for (const mysql::BinlogColumn& binlog : table.columns) {
    SourceColumn column;
    column.name = binlog.name;
    column.type_id = binlog.type;
    column.mapping = mysql::MapColumn(binlog);
    column.not_null = !binlog.nullable;
    const int same = known.Find(binlog.name);
    column.type_name = same >= 0 && known.columns[same].type_id == binlog.type
                           ? known.columns[same].type_name
                           : column.mapping.duckdb_type;
    out.columns.push_back(std::move(column));
  }
  out.key = table.key;
  if (out.key.empty()) {
    // A TABLE_MAP without the key field: the key columns known by name.
    for (size_t k : known.key) {
      const int at = out.Find(known.columns[k].name);
      if (at >= 0) out.key.push_back(static_cast<size_t>(at));
    }
  }
  return out;
}

bool SameShape(const mysql::BinlogTable& table, const SourceTable& shape) {
  if (table.columns.size() != shape.columns.size()) return false;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const mysql::BinlogColumn& binlog = table.columns[i];
    const SourceColumn& column = shape.columns[i];
    const change::TypeMapping mapping = mysql::MapColumn(binlog);
    if (binlog.name != column.name || binlog.type != column.type_id ||
        mapping.duckdb_type != column.mapping.duckdb_type ||
        mapping.doris_type != column.mapping.doris_type || mapping.form != column.mapping.form) {
      return false;
    }
  }
  return true;
}

namespace {

// The binlog position (and its GTID position) of the consistent snapshot just started.
Result<SnapshotPosition> SnapshotPositionOf(MysqlConnection& conn) {
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
  MR_ASSIGN_OR_RETURN(out.gtid, GtidPositionOf(conn, out.position));
  return out;
}

}  // namespace

Result<std::string> GtidPositionOf(MysqlConnection& conn, const mysql::BinlogPosition& position) {
  auto gtid = conn.Query("SELECT BINLOG_GTID_POS(" + conn.Literal(position.file) + ", " +
                         std::to_string(position.position) + ")");
  // MySQL has no BINLOG_GTID_POS (ER_SP_DOES_NOT_EXIST): its positions go without GTIDs.
  if (!gtid.ok() && mysql::ErrnoOf(gtid.status()) == 1305) return std::string();
  MR_RETURN_IF_ERROR(gtid.status());
  if (gtid->rows.empty() || !gtid->rows[0][0]) {
    return Status::Internal("BINLOG_GTID_POS gave no GTID position for " + position.file + ":" +
                            std::to_string(position.position));
  }
  return *gtid->rows[0][0];
}

Result<SnapshotPosition> BinlogEnd(MysqlConnection& conn) {
  MR_ASSIGN_OR_RETURN(mysql::Rows status, conn.Query("SHOW MASTER STATUS"));
  if (status.rows.empty() || !status.rows[0][0]) {
    return Status::FailedPrecondition("MySQL server " + mysql::Describe(conn.params()) +
                                      " reports no binlog (SHOW MASTER STATUS is empty): start it "
                                      "with log_bin");
  }
  SnapshotPosition out;
  out.position.file = *status.rows[0][0];
  out.position.position = static_cast<uint64_t>(ToInt(status.rows[0][1]));
  MR_ASSIGN_OR_RETURN(out.gtid, GtidPositionOf(conn, out.position));
  return out;
}

Result<SnapshotPosition> ConsistentSnapshot(MysqlConnection& conn) {
  // Only REPEATABLE READ keeps one snapshot for the transaction (READ COMMITTED would see
  // later commits, which the stream then applies again).
  MR_RETURN_IF_ERROR(conn.Execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"));
  MR_RETURN_IF_ERROR(conn.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"));
  auto position = SnapshotPositionOf(conn);
  if (!position.ok()) {
    if (Status rolled_back = conn.Execute("ROLLBACK"); !rolled_back.ok()) {
      return position.status().WithContext("and ROLLBACK failed: " + rolled_back.message());
    }
  }
  return position;
}

}  // namespace millrace::cdc
