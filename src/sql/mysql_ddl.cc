#include "sql/mysql_ddl.h"

#include "common/strings.h"

namespace millrace::sql {
namespace {

std::string Backquoted(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

}  // namespace

std::string MysqlTypeName(std::string_view duckdb_type) {
  const std::string type = ToUpper(duckdb_type);
  struct Name {
    std::string_view duckdb;
    std::string_view mysql;
  };
  static constexpr Name kNames[] = {
      {"BOOLEAN", "tinyint(1)"},
      {"TINYINT", "tinyint"},
      {"SMALLINT", "smallint"},
      {"INTEGER", "int"},
      {"BIGINT", "bigint"},
      {"UTINYINT", "tinyint unsigned"},
      {"USMALLINT", "smallint unsigned"},
      {"UINTEGER", "int unsigned"},
      {"UBIGINT", "bigint unsigned"},
      {"HUGEINT", "decimal(38,0)"},
      {"UHUGEINT", "decimal(39,0) unsigned"},
      {"FLOAT", "float"},
      {"DOUBLE", "double"},
      {"DATE", "date"},
      {"TIME", "time(6)"},
      {"TIMESTAMP", "datetime(6)"},
      {"TIMESTAMP_S", "datetime"},
      {"TIMESTAMP_MS", "datetime(3)"},
      {"TIMESTAMP WITH TIME ZONE", "datetime(6)"},
      {"VARCHAR", "longtext"},
      {"BLOB", "longblob"},
      {"UUID", "char(36)"},
      {"JSON", "json"},
  };
  for (const Name& n : kNames) {
    if (type == n.duckdb) return std::string(n.mysql);
  }
  if (type.starts_with("DECIMAL")) return ToLower(type);
  return "longtext";  // what the protocol sends them as: DuckDB's text rendering
}

Result<std::string> MysqlCreateTable(engine::Connection& conn, std::string_view schema,
                                     std::string_view table) {
  const std::string where =
      "database_name = current_database() AND schema_name = " + engine::QuoteLiteral(schema) +
      " AND table_name = " + engine::QuoteLiteral(table);
  MR_ASSIGN_OR_RETURN(auto columns,
                      engine::QueryTextRows(conn,
                                            "SELECT column_name, data_type, is_nullable, "
                                            "coalesce(column_default, '') FROM "
                                            "duckdb_columns() WHERE " +
                                                where + " ORDER BY column_index"));
  if (columns.empty()) {
    return Status::NotFound("table " + std::string(schema) + "." + std::string(table) +
                            " does not exist");
  }
  MR_ASSIGN_OR_RETURN(auto keys,
                      engine::QueryTextRows(conn,
                                            "SELECT unnest(constraint_column_names) FROM "
                                            "duckdb_constraints() WHERE constraint_type = "
                                            "'PRIMARY KEY' AND " +
                                                where));
  std::string ddl = "CREATE TABLE " + Backquoted(table) + " (\n";
  for (size_t i = 0; i < columns.size(); ++i) {
    const auto& c = columns[i];
    ddl += "  " + Backquoted(c[0]) + " " + MysqlTypeName(c[1]);
    ddl += c[2] == "true" ? "" : " NOT NULL";
    if (!c[3].empty()) {
      ddl += " DEFAULT " + c[3];
    } else if (c[2] == "true") {
      ddl += " DEFAULT NULL";
    }
    ddl += i + 1 < columns.size() || !keys.empty() ? ",\n" : "\n";
  }
  if (!keys.empty()) {
    std::string names;
    for (const auto& k : keys)
      names += (names.empty() ? "" : ",") + Backquoted(k[0]);
    ddl += "  PRIMARY KEY (" + names + ")\n";
  }
  return ddl + ") ENGINE=DuckDB DEFAULT CHARSET=utf8mb4";
}

}  // namespace millrace::sql
