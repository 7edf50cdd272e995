// The CREATE TABLE statement MySQL clients expect from SHOW CREATE TABLE for a table made with
// plain SQL (Doris tables show their Doris DDL: table/create_table.h).
//
// Contract
// - MysqlCreateTable renders table `table` of schema `schema` in MySQL's layout, one column a
//   line: "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  ...,\n  PRIMARY KEY (`id`)\n)
//   ENGINE=DuckDB DEFAULT CHARSET=utf8mb4", the types as information_schema.COLUMNS names them
//   (mysql_types.h), so
//   tools that parse it (SQLAlchemy's reflection) read its columns, nullability, defaults and
//   primary key. NOT_FOUND when there is no such table.
// - Thread-safety: uses the given connection.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/database.h"

namespace millrace::sql {

Result<std::string> MysqlCreateTable(engine::Connection& conn, std::string_view schema,
                                     std::string_view table);

}  // namespace millrace::sql
