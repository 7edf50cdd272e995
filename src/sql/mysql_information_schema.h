// information_schema as MySQL clients read it: MySQL's views and upper-case column names over
// DuckDB's catalog, for the drivers' DatabaseMetaData and the BI tools.
//
// Contract
// - DuckDB owns an information_schema of its own (PostgreSQL's shape, in the system catalog).
//   A client's SELECT that names information_schema.<view> (unqualified catalog) for one of the
//   views below reads the view of that name in kMysqlInfoSchema instead
//   (RouteToMysqlInformationSchema); other information_schema views, and
//   system.information_schema.<view>, stay DuckDB's for users with ADMIN_PRIV (the others read
//   filtered views, which are the MySQL ones wherever a name has both: access/
//   information_schema.h). Names are matched case-insensitively.
// - SHOW COLUMNS, DESC, SHOW TABLE STATUS, SHOW INDEX and SHOW CREATE TABLE read these views:
//   the router installs them at start (Router::InstallMysqlInformationSchema).
// - The views (InstallMysqlInformationSchema, at start): SCHEMATA, TABLES, COLUMNS, STATISTICS,
//   KEY_COLUMN_USAGE, VIEWS, ROUTINES (always empty), ENGINES. They list the schemas of the
//   current database except `hidden` (SHOW DATABASES' list), with MySQL's columns and types;
//   text columns compare case-insensitively (COLLATE NOCASE), as MySQL's utf8 general
//   collation does, since drivers compare IS_NULLABLE = 'yes'. Column types come from
//   mysql_types.h through the table function millrace_mysql_types() (MakeMysqlTypesFunction),
//   which must be registered first.
// - Thread-safety: the install and routing functions use the given connection.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "engine/table_function.h"

namespace millrace::sql {

inline constexpr std::string_view kMysqlInfoSchema = "__millrace_mysql_info";

// `name` (lower-case) as a qualified view of kMysqlInfoSchema, for SQL that reads it.
std::string MysqlInfoView(std::string_view name);

std::shared_ptr<engine::TableFunction> MakeMysqlTypesFunction();

Status InstallMysqlInformationSchema(engine::Connection& conn,
                                     const std::vector<std::string>& hidden);

Result<std::optional<std::string>> RouteToMysqlInformationSchema(engine::Connection& conn,
                                                                 std::string_view sql);

}  // namespace millrace::sql
