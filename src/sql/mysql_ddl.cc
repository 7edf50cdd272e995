#include "sql/mysql_ddl.h"

#include "common/strings.h"
#include "sql/lexer.h"
#include "sql/mysql_information_schema.h"

namespace millrace::sql {

Result<std::string> MysqlCreateTable(engine::Connection& conn, std::string_view schema,
                                     std::string_view table) {
  // Column types as information_schema.COLUMNS names them (mysql_types.h).
  const std::string where = " WHERE TABLE_SCHEMA = " + engine::QuoteLiteral(schema) +
                            " AND TABLE_NAME = " + engine::QuoteLiteral(table);
  MR_ASSIGN_OR_RETURN(
      auto columns,
      engine::QueryTextRows(conn,
                            "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = "
                            "'YES', coalesce(COLUMN_DEFAULT, '') FROM " +
                                MysqlInfoView("columns") + where + " ORDER BY ORDINAL_POSITION"));
  if (columns.empty()) {
    return Status::NotFound("table " + std::string(schema) + "." + std::string(table) +
                            " does not exist");
  }
  MR_ASSIGN_OR_RETURN(
      auto keys,
      engine::QueryTextRows(conn, "SELECT COLUMN_NAME FROM " + MysqlInfoView("statistics") + where +
                                      " AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX"));
  std::string ddl = "CREATE TABLE " + Backquoted(table) + " (\n";
  for (size_t i = 0; i < columns.size(); ++i) {
    const auto& c = columns[i];
    ddl += "  " + Backquoted(c[0]) + " " + c[1];
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
