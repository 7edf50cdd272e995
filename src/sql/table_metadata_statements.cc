// SHOW TABLES, SHOW TABLE STATUS, SHOW INDEX, SHOW [FULL] COLUMNS, DESC, SHOW CREATE TABLE and
// SHOW ENGINES: what MySQL clients read about tables, from the MySQL information_schema
// (mysql_information_schema.h) so that every listing names types as the protocol sends them.
#include <algorithm>

#include "sql/builtin_statements.h"
#include "sql/mysql_ddl.h"
#include "sql/mysql_information_schema.h"
#include "sql/session.h"
#include "sql/statement_support.h"

namespace millrace::sql {
namespace {

// A column of a SHOW listing: the view's column and the name SHOW gives it. A name starting
// with `_` is read (to order by) but not shown.
struct Shown {
  std::string_view column;
  std::string_view as;
};

// SHOW's listing of the rows of a MySQL information_schema view that `where` keeps.
Result<StatementResult> ShowView(Session& session, std::string_view view, const std::string& where,
                                 const std::vector<Shown>& columns, const ShowFilter& filter,
                                 const std::string& order_by) {
  std::string select;
  std::vector<std::string> names;
  for (const Shown& c : columns) {
    select += (select.empty() ? "" : ", ") + Ident(c.column) + " AS " + Ident(c.as);
    if (!c.as.starts_with("_")) names.emplace_back(c.as);
  }
  return ShowQuery(session, "SELECT " + select + " FROM " + MysqlInfoView(view) + " WHERE " + where,
                   names, filter, order_by);
}

// The canonical database of table `name`, which the session may see and which exists.
Result<std::string> ShownTable(Session& session, const TableName& name) {
  MR_ASSIGN_OR_RETURN(std::string db, ResolveDatabase(session, name.database));
  MR_RETURN_IF_ERROR(session.CheckObject(ObjectAction::kShow, db, name.table));
  MR_RETURN_IF_ERROR(CheckTableExists(session, db, name.table));
  return db;
}

// The tables and views of `db` the session may see: [name, table type].
Result<std::vector<std::vector<std::string>>> VisibleTables(Session& session,
                                                            const std::string& db) {
  MR_ASSIGN_OR_RETURN(auto tables, engine::QueryTextRows(session.connection(),
                                                         "SELECT TABLE_NAME, TABLE_TYPE FROM " +
                                                             MysqlInfoView("tables") +
                                                             " WHERE TABLE_SCHEMA = " + Quote(db)));
  std::erase_if(tables, [&](const auto& row) { return !session.Visible(db, row[0]); });
  return tables;
}

// A list of SQL literals of the first column of `rows` (NULL when empty: IN (NULL) keeps
// nothing).
std::string NameList(const std::vector<std::vector<std::string>>& rows) {
  std::string list;
  for (const auto& row : rows)
    list += (list.empty() ? "" : ", ") + Quote(row[0]);
  return list.empty() ? "NULL" : list;
}

// [FROM|IN db]: the database named, or the session's.
Result<std::string> ShownDatabase(Session& session, Cursor& c) {
  std::optional<std::string> database;
  if (c.Accept("FROM") || c.Accept("IN")) {
    MR_ASSIGN_OR_RETURN(database, c.Identifier("a database name"));
  }
  return ResolveDatabase(session, database);
}

Result<StatementResult> ShowTables(const StatementContext& ctx, Cursor& c, bool full) {
  MR_ASSIGN_OR_RETURN(std::string db, ShownDatabase(ctx.session, c));
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  MR_RETURN_IF_ERROR(ctx.session.CheckObject(ObjectAction::kShow, db, ""));
  const std::string column = "Tables_in_" + db;
  MR_ASSIGN_OR_RETURN(auto tables, VisibleTables(ctx.session, db));
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : tables)
    rows.push_back({Quote(row[0]), Quote(row[1])});
  const std::string base = ValuesTable({{column, "VARCHAR"}, {"Table_type", "VARCHAR"}}, rows);
  std::vector<std::string> columns = {column};
  if (full) columns.push_back("Table_type");
  return ShowQuery(ctx.session, base, columns, filter, Ident(column));
}

// SHOW TABLE STATUS [FROM db] [LIKE | WHERE]: MySQL's columns, from information_schema.TABLES.
Result<StatementResult> ShowTableStatus(const StatementContext& ctx, Cursor& c) {
  MR_ASSIGN_OR_RETURN(std::string db, ShownDatabase(ctx.session, c));
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  MR_RETURN_IF_ERROR(ctx.session.CheckObject(ObjectAction::kShow, db, ""));
  MR_ASSIGN_OR_RETURN(auto tables, VisibleTables(ctx.session, db));
  return ShowView(ctx.session, "tables",
                  "TABLE_SCHEMA = " + Quote(db) + " AND TABLE_NAME IN (" + NameList(tables) + ")",
                  {{"TABLE_NAME", "Name"},
                   {"ENGINE", "Engine"},
                   {"VERSION", "Version"},
                   {"ROW_FORMAT", "Row_format"},
                   {"TABLE_ROWS", "Rows"},
                   {"AVG_ROW_LENGTH", "Avg_row_length"},
                   {"DATA_LENGTH", "Data_length"},
                   {"MAX_DATA_LENGTH", "Max_data_length"},
                   {"INDEX_LENGTH", "Index_length"},
                   {"DATA_FREE", "Data_free"},
                   {"AUTO_INCREMENT", "Auto_increment"},
                   {"CREATE_TIME", "Create_time"},
                   {"UPDATE_TIME", "Update_time"},
                   {"CHECK_TIME", "Check_time"},
                   {"TABLE_COLLATION", "Collation"},
                   {"CHECKSUM", "Checksum"},
                   {"CREATE_OPTIONS", "Create_options"},
                   {"TABLE_COMMENT", "Comment"}},
                  filter, "\"Name\"");
}

// SHOW {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db] [LIKE | WHERE]: the primary key and
// unique constraints, from information_schema.STATISTICS.
Result<StatementResult> ShowIndex(const StatementContext& ctx, Cursor& c) {
  if (!c.Accept("FROM") && !c.Accept("IN")) return c.Expected("FROM or IN");
  MR_ASSIGN_OR_RETURN(TableName name, ParseTableName(c));
  if (c.Accept("FROM") || c.Accept("IN")) {
    MR_ASSIGN_OR_RETURN(name.database, c.Identifier("a database name"));
  }
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  MR_ASSIGN_OR_RETURN(std::string db, ShownTable(ctx.session, name));
  return ShowView(ctx.session, "statistics",
                  CurrentCatalogTable("TABLE_SCHEMA", db, "TABLE_NAME", name.table),
                  {{"TABLE_NAME", "Table"},
                   {"NON_UNIQUE", "Non_unique"},
                   {"INDEX_NAME", "Key_name"},
                   {"SEQ_IN_INDEX", "Seq_in_index"},
                   {"COLUMN_NAME", "Column_name"},
                   {"COLLATION", "Collation"},
                   {"CARDINALITY", "Cardinality"},
                   {"SUB_PART", "Sub_part"},
                   {"PACKED", "Packed"},
                   {"NULLABLE", "Null"},
                   {"INDEX_TYPE", "Index_type"},
                   {"COMMENT", "Comment"},
                   {"INDEX_COMMENT", "Index_comment"},
                   {"IS_VISIBLE", "Visible"},
                   {"EXPRESSION", "Expression"}},
                  filter, "\"Key_name\" <> 'PRIMARY', \"Key_name\", \"Seq_in_index\"");
}

// SHOW [STORAGE] ENGINES.
Result<StatementResult> ShowEngines(const StatementContext& ctx, Cursor& c) {
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  return ShowView(ctx.session, "engines", "true",
                  {{"ENGINE", "Engine"},
                   {"SUPPORT", "Support"},
                   {"COMMENT", "Comment"},
                   {"TRANSACTIONS", "Transactions"},
                   {"XA", "XA"},
                   {"SAVEPOINTS", "Savepoints"}},
                  ShowFilter{}, "\"Engine\"");
}

// The columns of a table as MySQL's DESC shows them (Field, Type, Null, Key, Default, Extra),
// from information_schema.COLUMNS.
Result<StatementResult> DescribeTable(Session& session, const TableName& name,
                                      const ShowFilter& filter, bool full) {
  MR_ASSIGN_OR_RETURN(std::string db, ShownTable(session, name));
  std::vector<Shown> columns = {
      {"COLUMN_NAME", "Field"},    {"COLUMN_TYPE", "Type"},      {"COLLATION_NAME", "Collation"},
      {"IS_NULLABLE", "Null"},     {"COLUMN_KEY", "Key"},        {"COLUMN_DEFAULT", "Default"},
      {"EXTRA", "Extra"},          {"PRIVILEGES", "Privileges"}, {"COLUMN_COMMENT", "Comment"},
      {"ORDINAL_POSITION", "_ord"}};
  if (!full) {
    // DESC and SHOW COLUMNS without FULL.
    std::erase_if(columns, [](const Shown& c) {
      return c.as == "Collation" || c.as == "Privileges" || c.as == "Comment";
    });
  }
  return ShowView(session, "columns",
                  CurrentCatalogTable("TABLE_SCHEMA", db, "TABLE_NAME", name.table), columns,
                  filter, "_ord");
}

Result<StatementResult> ShowColumns(const StatementContext& ctx, Cursor& c, bool full) {
  if (!c.Accept("FROM") && !c.Accept("IN")) return c.Expected("FROM or IN");
  MR_ASSIGN_OR_RETURN(TableName name, ParseTableName(c));
  if (c.Accept("FROM") || c.Accept("IN")) {
    MR_ASSIGN_OR_RETURN(name.database, c.Identifier("a database name"));
  }
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  return DescribeTable(ctx.session, name, filter, full);
}

// DESC t [column], or DuckDB's DESCRIBE of a query (DESCRIBE SELECT ...).
Result<StatementResult> Describe(const StatementContext& ctx, Cursor& c) {
  const Token* next = c.Peek();
  if (next == nullptr || !IsIdentifier(*next)) return ctx.session.ExecuteClientSql(ctx.sql);
  for (std::string_view keyword :
       {"SELECT", "WITH", "FROM", "VALUES", "TABLE", "PIVOT", "UNPIVOT", "SUMMARIZE"}) {
    if (IsKeyword(ctx.sql, *next, keyword)) return ctx.session.ExecuteClientSql(ctx.sql);
  }
  MR_ASSIGN_OR_RETURN(TableName name, ParseTableName(c));
  ShowFilter filter;
  if (!c.Done()) {
    MR_ASSIGN_OR_RETURN(filter.like, c.Name("a column name or pattern"));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
  }
  return DescribeTable(ctx.session, name, filter, false);
}

// DESC FUNCTION fn(...): the columns the table-function call returns (for S3() and local(),
// the schema its files load with), as Doris shows them.
Result<StatementResult> DescribeFunction(const StatementContext& ctx, Cursor& c) {
  if (c.Done()) return c.Expected("a table function call");
  return ctx.session.ExecuteClientSql(
      "SELECT column_name AS \"Field\", column_type AS \"Type\", CASE WHEN \"null\" = 'YES' "
      "THEN 'Yes' ELSE 'No' END AS \"Null\", 'false' AS \"Key\", \"default\" AS \"Default\", "
      "'' AS \"Extra\" FROM (DESCRIBE SELECT * FROM " +
      std::string(c.Rest()) + ")");
}

Result<StatementResult> ShowCreateTable(const StatementContext& ctx, Cursor& c) {
  MR_ASSIGN_OR_RETURN(TableName name, ParseTableName(c));
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  Session& session = ctx.session;
  MR_ASSIGN_OR_RETURN(std::string db, ShownTable(session, name));
  // A table in MySQL's layout (tools parse it); a view as DuckDB keeps it.
  MR_ASSIGN_OR_RETURN(
      auto tables,
      engine::QueryTextRows(session.connection(),
                            "SELECT table_name FROM duckdb_tables() WHERE "
                            "database_name = current_database() AND " +
                                CurrentCatalogTable("schema_name", db, "table_name", name.table)));
  if (!tables.empty()) {
    MR_ASSIGN_OR_RETURN(std::string ddl, MysqlCreateTable(session.connection(), db, tables[0][0]));
    return session.ExecuteDuckDb(ValuesTable({{"Table", "VARCHAR"}, {"Create Table", "VARCHAR"}},
                                             {{Quote(tables[0][0]), Quote(ddl)}}));
  }
  return session.ExecuteDuckDb(
      "SELECT view_name AS \"Table\", rtrim(sql, ';') AS \"Create Table\" FROM duckdb_views() "
      "WHERE database_name = current_database() AND NOT internal AND " +
      CurrentCatalogTable("schema_name", db, "view_name", name.table));
}

}  // namespace

void RegisterTableMetadataStatements(Router& router) {
  AddStatement(router, {"SHOW", "TABLES"},
               [](auto& ctx, Cursor& c) { return ShowTables(ctx, c, false); });
  AddStatement(router, {"SHOW", "FULL", "TABLES"},
               [](auto& ctx, Cursor& c) { return ShowTables(ctx, c, true); });
  AddStatement(router, {"SHOW", "TABLE", "STATUS"}, ShowTableStatus);
  for (const char* noun : {"INDEX", "INDEXES", "KEYS"}) {
    AddStatement(router, {"SHOW", noun}, ShowIndex);
    AddStatement(router, {"SHOW", "EXTENDED", noun}, ShowIndex);
  }
  for (const char* noun : {"COLUMNS", "FIELDS"}) {
    AddStatement(router, {"SHOW", noun},
                 [](auto& ctx, Cursor& c) { return ShowColumns(ctx, c, false); });
    AddStatement(router, {"SHOW", "FULL", noun},
                 [](auto& ctx, Cursor& c) { return ShowColumns(ctx, c, true); });
  }
  AddStatement(router, {"DESC"}, Describe);
  AddStatement(router, {"DESCRIBE"}, Describe);
  AddStatement(router, {"DESC", "FUNCTION"}, DescribeFunction);
  AddStatement(router, {"DESCRIBE", "FUNCTION"}, DescribeFunction);
  AddStatement(router, {"SHOW", "CREATE", "TABLE"}, ShowCreateTable);
  AddStatement(router, {"SHOW", "CREATE", "VIEW"}, ShowCreateTable);
  AddStatement(router, {"SHOW", "ENGINES"}, ShowEngines);
  AddStatement(router, {"SHOW", "STORAGE", "ENGINES"}, ShowEngines);
}

}  // namespace millrace::sql
