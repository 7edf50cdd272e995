#include "sql/builtin_statements.h"

#include <charconv>
#include <functional>

#include "common/logging.h"
#include "engine/duckdb_status.h"
#include "sql/mysql_ddl.h"
#include "sql/mysql_errors.h"
#include "sql/router.h"
#include "sql/statement_support.h"

namespace millrace::sql {
namespace {

using Body = std::function<Result<StatementResult>(const StatementContext&, Cursor&)>;

class BuiltinHandler final : public StatementHandler {
 public:
  BuiltinHandler(size_t keyword_count, Body body, bool preserves_diagnostics)
      : keyword_count_(keyword_count),
        body_(std::move(body)),
        preserves_diagnostics_(preserves_diagnostics) {}

  Result<StatementResult> Execute(const StatementContext& ctx) override {
    Cursor cursor(ctx, keyword_count_);
    return body_(ctx, cursor);
  }
  bool PreservesDiagnostics() const override { return preserves_diagnostics_; }

 private:
  size_t keyword_count_;
  Body body_;
  bool preserves_diagnostics_;
};

void Add(Router& router, std::vector<std::string> keywords, Body body,
         bool preserves_diagnostics = false) {
  const size_t count = keywords.size();
  router.RegisterStatement(std::move(keywords), std::make_shared<BuiltinHandler>(
                                                    count, std::move(body), preserves_diagnostics));
}

StatementResult Ok(int64_t affected_rows = 0) {
  StatementResult result;
  result.affected_rows = affected_rows;
  return result;
}

std::string Quote(std::string_view s) {
  return engine::QuoteLiteral(s);
}
std::string Ident(std::string_view s) {
  return engine::QuoteIdentifier(s);
}

// ---------------------------------------------------------------------------------------------
// SHOW listings: a base query, filtered by LIKE (on the first column, case-insensitively as
// MySQL's default collation compares) or by a WHERE over the output columns.

struct ShowFilter {
  std::optional<std::string> like;
  std::string_view where;
};

Result<ShowFilter> ParseFilter(Cursor& c) {
  ShowFilter filter;
  if (c.Accept("LIKE")) {
    MR_ASSIGN_OR_RETURN(filter.like, c.String("a quoted LIKE pattern"));
    MR_RETURN_IF_ERROR(c.ExpectEnd());
  } else if (c.Accept("WHERE")) {
    filter.where = c.Rest();
    if (filter.where.empty()) return c.Expected("a condition after WHERE");
  } else {
    MR_RETURN_IF_ERROR(c.ExpectEnd());
  }
  return filter;
}

// Runs `base`, keeping `columns` (its output column names, in order), filtered and ordered.
Result<StatementResult> ShowQuery(Session& session, const std::string& base,
                                  const std::vector<std::string>& columns, const ShowFilter& filter,
                                  const std::string& order_by) {
  std::string select;
  for (const std::string& column : columns) {
    if (!select.empty()) select += ", ";
    select += Ident(column);
  }
  std::string sql = "SELECT " + select + " FROM (" + base + ") AS _show";
  if (filter.like) {
    sql += " WHERE " + Ident(columns.front()) + " ILIKE " + Quote(*filter.like) + " ESCAPE '\\'";
  } else if (!filter.where.empty()) {
    sql += " WHERE " + std::string(filter.where);
  }
  sql += " ORDER BY " + order_by;
  return session.ExecuteDuckDb(sql);
}

Result<StatementResult> ShowValues(const StatementContext& ctx, Cursor& c,
                                   const std::vector<ValuesColumn>& columns,
                                   const std::vector<std::vector<std::string>>& rows) {
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  std::vector<std::string> names;
  for (const ValuesColumn& column : columns)
    names.push_back(column.name);
  return ShowQuery(ctx.session, ValuesTable(columns, rows), names, filter, Ident(names.front()));
}

// ---------------------------------------------------------------------------------------------
// Names of databases and tables.

std::string CurrentCatalogTable(std::string_view schema_column, std::string_view schema,
                                std::string_view name_column, std::string_view name) {
  return std::string(schema_column) + " = " + Quote(schema) + " AND lower(" +
         std::string(name_column) + ") = lower(" + Quote(name) + ")";
}

// ---------------------------------------------------------------------------------------------
// Databases

Result<StatementResult> Use(const StatementContext& ctx, Cursor& c) {
  MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a database name"));
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  MR_ASSIGN_OR_RETURN(std::optional<std::string> canonical, ctx.session.FindDatabase(name));
  MR_RETURN_IF_ERROR(ctx.session.CheckObject(ObjectAction::kUse, canonical.value_or(name), ""));
  MR_RETURN_IF_ERROR(ctx.session.Use(name));
  return Ok();
}

Result<StatementResult> CreateDatabase(const StatementContext& ctx, Cursor& c) {
  const bool if_not_exists = c.Accept("IF") && c.Accept("NOT") && c.Accept("EXISTS");
  MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a database name"));
  // MySQL's database options mean nothing here: every database is utf8mb4.
  while (!c.Done()) {
    c.Accept("DEFAULT");
    if (c.Accept("CHARACTER")) {
      if (!c.Accept("SET")) return c.Expected("SET");
    } else if (!c.Accept("CHARSET") && !c.Accept("COLLATE")) {
      return c.Expected("CHARACTER SET, CHARSET or COLLATE");
    }
    c.AcceptPunct("=");
    MR_RETURN_IF_ERROR(c.Name("a character set or collation").status());
  }
  MR_RETURN_IF_ERROR(ctx.session.CheckObject(ObjectAction::kCreate, name, ""));
  Status status = ctx.session.connection().Execute(
      std::string("CREATE SCHEMA ") + (if_not_exists ? "IF NOT EXISTS " : "") + Ident(name));
  if (status.code() == StatusCode::kAlreadyExists) return DatabaseExistsError(name);
  MR_RETURN_IF_ERROR(status);
  return Ok(1);
}

Result<StatementResult> DropDatabase(const StatementContext& ctx, Cursor& c) {
  const bool if_exists = c.Accept("IF") && c.Accept("EXISTS");
  MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a database name"));
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  Session& session = ctx.session;
  MR_ASSIGN_OR_RETURN(std::optional<std::string> canonical, session.FindDatabase(name));
  if (!canonical) {
    if (if_exists) return Ok();
    return DatabaseMissingError(name);
  }
  if (session.router().IsHiddenDatabase(*canonical)) return DatabaseAccessDeniedError(*canonical);
  MR_RETURN_IF_ERROR(session.CheckObject(ObjectAction::kDrop, *canonical, ""));
  MR_ASSIGN_OR_RETURN(std::optional<std::string> tables,
                      session.QueryScalar("SELECT count(*) FROM information_schema.tables WHERE "
                                          "table_catalog = current_database() AND table_schema = " +
                                          Quote(*canonical)));
  MR_RETURN_IF_ERROR(session.connection().Execute("DROP SCHEMA " + Ident(*canonical) + " CASCADE"));
  if (session.database() == canonical) MR_RETURN_IF_ERROR(session.ClearDatabase());
  int64_t dropped = 0;  // count(*) is always a number; 0 if it could not be read
  if (tables) std::from_chars(tables->data(), tables->data() + tables->size(), dropped);
  return Ok(dropped);
}

Result<StatementResult> ShowDatabases(const StatementContext& ctx, Cursor& c) {
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  std::string hidden;
  for (const std::string& name : ctx.session.router().HiddenDatabases()) {
    hidden += (hidden.empty() ? "lower(" : ", lower(") + Quote(name) + ")";
  }
  MR_ASSIGN_OR_RETURN(
      auto names,
      engine::QueryTextRows(ctx.session.connection(),
                            "SELECT schema_name FROM information_schema.schemata WHERE "
                            "catalog_name = current_database() AND lower(schema_name) NOT IN (" +
                                hidden + ")"));
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : names) {
    if (ctx.session.Visible(row[0], "")) rows.push_back({Quote(row[0])});
  }
  return ShowQuery(ctx.session, ValuesTable({{"Database", "VARCHAR"}}, rows), {"Database"}, filter,
                   "\"Database\"");
}

Result<StatementResult> ShowCreateDatabase(const StatementContext& ctx, Cursor& c) {
  if (c.Accept("IF") && !(c.Accept("NOT") && c.Accept("EXISTS"))) return c.Expected("NOT EXISTS");
  MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a database name"));
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  MR_ASSIGN_OR_RETURN(std::string canonical, ResolveDatabase(ctx.session, name));
  MR_RETURN_IF_ERROR(ctx.session.CheckObject(ObjectAction::kShow, canonical, ""));
  return ctx.session.ExecuteDuckDb("SELECT " + Quote(canonical) + " AS \"Database\", " +
                                   Quote("CREATE DATABASE `" + canonical + "`") +
                                   " AS \"Create Database\"");
}

// ---------------------------------------------------------------------------------------------
// Tables

Result<StatementResult> ShowTables(const StatementContext& ctx, Cursor& c, bool full) {
  std::optional<std::string> database;
  if (c.Accept("FROM") || c.Accept("IN")) {
    MR_ASSIGN_OR_RETURN(database, c.Identifier("a database name"));
  }
  MR_ASSIGN_OR_RETURN(ShowFilter filter, ParseFilter(c));
  MR_ASSIGN_OR_RETURN(std::string db, ResolveDatabase(ctx.session, database));
  MR_RETURN_IF_ERROR(ctx.session.CheckObject(ObjectAction::kShow, db, ""));
  const std::string column = "Tables_in_" + db;
  MR_ASSIGN_OR_RETURN(auto tables,
                      engine::QueryTextRows(ctx.session.connection(),
                                            "SELECT table_name, table_type FROM "
                                            "information_schema.tables WHERE table_catalog = "
                                            "current_database() AND table_schema = " +
                                                Quote(db)));
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : tables) {
    if (ctx.session.Visible(db, row[0])) rows.push_back({Quote(row[0]), Quote(row[1])});
  }
  const std::string base = ValuesTable({{column, "VARCHAR"}, {"Table_type", "VARCHAR"}}, rows);
  std::vector<std::string> columns = {column};
  if (full) columns.push_back("Table_type");
  return ShowQuery(ctx.session, base, columns, filter, Ident(column));
}

std::string KeyCondition(std::string_view constraint_type) {
  return "EXISTS (SELECT 1 FROM duckdb_constraints() k WHERE k.database_name = "
         "current_database() AND k.schema_name = c.table_schema AND k.table_name = c.table_name "
         "AND k.constraint_type = " +
         Quote(constraint_type) + " AND list_contains(k.constraint_column_names, c.column_name))";
}

// The columns of a table as MySQL's DESC shows them (Field, Type, Null, Key, Default, Extra).
Result<StatementResult> DescribeTable(Session& session, const TableName& name,
                                      const ShowFilter& filter, bool full) {
  MR_ASSIGN_OR_RETURN(std::string db, ResolveDatabase(session, name.database));
  MR_RETURN_IF_ERROR(session.CheckObject(ObjectAction::kShow, db, name.table));
  MR_RETURN_IF_ERROR(CheckTableExists(session, db, name.table));
  const std::string base =
      "SELECT c.column_name AS \"Field\", c.data_type AS \"Type\", NULL::VARCHAR AS "
      "\"Collation\", c.is_nullable AS \"Null\", CASE WHEN " +
      KeyCondition("PRIMARY KEY") + " THEN 'PRI' WHEN " + KeyCondition("UNIQUE") +
      " THEN 'UNI' ELSE '' END AS \"Key\", c.column_default AS \"Default\", '' AS \"Extra\", "
      "'select,insert,update,references' AS \"Privileges\", '' AS \"Comment\", "
      "c.ordinal_position AS _ord FROM information_schema.columns c WHERE c.table_catalog = "
      "current_database() AND " +
      CurrentCatalogTable("c.table_schema", db, "c.table_name", name.table);
  std::vector<std::string> columns =
      full ? std::vector<std::string>{"Field",   "Type",  "Collation",  "Null",   "Key",
                                      "Default", "Extra", "Privileges", "Comment"}
           : std::vector<std::string>{"Field", "Type", "Null", "Key", "Default", "Extra"};
  return ShowQuery(session, base, columns, filter, "_ord");
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
  MR_ASSIGN_OR_RETURN(std::string db, ResolveDatabase(session, name.database));
  MR_RETURN_IF_ERROR(session.CheckObject(ObjectAction::kShow, db, name.table));
  MR_RETURN_IF_ERROR(CheckTableExists(session, db, name.table));
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

// ---------------------------------------------------------------------------------------------
// Sessions and catalogs

// SHOW [FULL] PROCESSLIST: MySQL's columns; a user without the right to manage sessions
// (StatementGuard::MayManageSessions) sees its own sessions only.
Result<StatementResult> ShowProcessList(const StatementContext& ctx, Cursor& c, bool full) {
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  Session& session = ctx.session;
  const bool all = session.MayManageSessions();
  std::vector<std::vector<std::string>> rows;
  for (const ProcessInfo& p : session.router().Processes()) {
    if (!all && p.user != session.info().user) continue;
    std::string info = p.statement;
    if (!full && info.size() > 100) info.resize(100);
    rows.push_back({std::to_string(p.id), Quote(p.user), Quote(p.host),
                    p.database ? Quote(*p.database) : "NULL", p.running ? "'Query'" : "'Sleep'",
                    std::to_string(p.seconds), p.running ? "'executing'" : "''",
                    p.running ? Quote(info) : "NULL"});
  }
  return session.ExecuteDuckDb(ValuesTable({{"Id", "BIGINT"},
                                            {"User", "VARCHAR"},
                                            {"Host", "VARCHAR"},
                                            {"db", "VARCHAR"},
                                            {"Command", "VARCHAR"},
                                            {"Time", "BIGINT"},
                                            {"State", "VARCHAR"},
                                            {"Info", "VARCHAR"}},
                                           rows) +
                               " ORDER BY \"Id\"");
}

// KILL [CONNECTION | QUERY] id: a user may kill its own sessions' statements; another user's
// need the right to manage sessions (1095 otherwise, as MySQL says).
Result<StatementResult> KillStatement(const StatementContext& ctx, Cursor& c) {
  const bool query_only = c.Accept("QUERY");
  if (!query_only) c.Accept("CONNECTION");
  MR_ASSIGN_OR_RETURN(int64_t id, c.Integer("a connection id"));
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  // Connection ids are 32 bits: a larger number names no session (never a truncated one).
  if (id < 0 || id > static_cast<int64_t>(UINT32_MAX)) {
    return UnknownThreadError(id);
  }
  Session& session = ctx.session;
  if (!session.MayManageSessions()) {
    bool own = false;
    for (const ProcessInfo& p : session.router().Processes()) {
      if (p.id == static_cast<uint64_t>(id)) own = p.user == session.info().user;
    }
    if (!own) return NotOwnerOfThreadError(static_cast<uint32_t>(id));
  }
  MR_RETURN_IF_ERROR(session.router().Kill(static_cast<uint32_t>(id), !query_only));
  return Ok();
}

// SHOW CATALOGS: Doris's internal catalog is the one catalog here.
Result<StatementResult> ShowCatalogs(const StatementContext& ctx, Cursor& c) {
  return ShowValues(
      ctx, c,
      {{"CatalogId", "BIGINT"},
       {"CatalogName", "VARCHAR"},
       {"Type", "VARCHAR"},
       {"IsCurrent", "VARCHAR"},
       {"CreateTime", "VARCHAR"},
       {"LastUpdateTime", "VARCHAR"},
       {"Comment", "VARCHAR"}},
      {{"0", "'internal'", "'internal'", "'Yes'", "NULL", "NULL", "'Doris internal catalog'"}});
}

// ---------------------------------------------------------------------------------------------
// Variables, character sets, diagnostics

Result<StatementResult> ShowVariables(const StatementContext& ctx, Cursor& c) {
  std::vector<std::vector<std::string>> rows;
  for (const SystemVariable& v : ctx.session.variables().All()) {
    rows.push_back({Quote(v.name), Quote(v.value.value_or(""))});
  }
  return ShowValues(ctx, c, {{"Variable_name", "VARCHAR"}, {"Value", "VARCHAR"}}, rows);
}

Result<StatementResult> ShowCollation(const StatementContext& ctx, Cursor& c) {
  return ShowValues(ctx, c,
                    {{"Collation", "VARCHAR"},
                     {"Charset", "VARCHAR"},
                     {"Id", "BIGINT"},
                     {"Default", "VARCHAR"},
                     {"Compiled", "VARCHAR"},
                     {"Sortlen", "BIGINT"}},
                    {{"'utf8mb4_general_ci'", "'utf8mb4'", "45", "'Yes'", "'Yes'", "1"},
                     {"'utf8mb4_bin'", "'utf8mb4'", "46", "''", "'Yes'", "1"},
                     {"'binary'", "'binary'", "63", "'Yes'", "'Yes'", "1"}});
}

Result<StatementResult> ShowCharacterSet(const StatementContext& ctx, Cursor& c) {
  return ShowValues(ctx, c,
                    {{"Charset", "VARCHAR"},
                     {"Description", "VARCHAR"},
                     {"Default collation", "VARCHAR"},
                     {"Maxlen", "BIGINT"}},
                    {{"'utf8mb4'", "'UTF-8 Unicode'", "'utf8mb4_general_ci'", "4"},
                     {"'binary'", "'Binary pseudo charset'", "'binary'", "1"}});
}

// SHOW WARNINGS / SHOW ERRORS: the previous statement's error (Millrace raises no warnings).
Result<StatementResult> ShowDiagnostics(const StatementContext& ctx, Cursor& c) {
  std::vector<std::vector<std::string>> rows;
  const Status& error = ctx.session.last_error();
  if (!error.ok()) {
    // Masked like every message a client sees: an error may echo a registered secret.
    rows.push_back({"'Error'", std::to_string(ClassifyError(error).code),
                    Quote(Logger::Default().Redact(error.message()))});
  }
  const std::string base =
      ValuesTable({{"Level", "VARCHAR"}, {"Code", "INTEGER"}, {"Message", "VARCHAR"}}, rows);
  return ctx.session.ExecuteDuckDb(base);
}

struct Assignment {
  std::string name;
  std::optional<std::string> value;
};

// The value of `name = value` up to the next top-level comma.
Result<std::optional<std::string>> AssignedValue(const StatementContext& ctx, Cursor& c) {
  const size_t first = c.index();
  int depth = 0;
  while (const Token* t = c.Peek()) {
    const std::string_view text = t->Text(ctx.sql);
    if (depth == 0 && text == ",") break;
    if (text == "(") ++depth;
    if (text == ")") --depth;
    c.Skip();
  }
  if (c.index() == first) return c.Expected("a value");
  if (c.index() == first + 1) {
    const Token& t = ctx.tokens[first];
    if (IsKeyword(ctx.sql, t, "NULL")) return std::optional<std::string>();
    if (t.kind == TokenKind::kString) return std::optional<std::string>(Unquote(ctx.sql, t));
    if (t.kind == TokenKind::kQuotedIdent || t.kind == TokenKind::kBacktickIdent) {
      return std::optional<std::string>(IdentifierValue(ctx.sql, t));
    }
  }
  return std::optional<std::string>(std::string(c.TextSince(first)));
}

// Parses SET's assignment list; `*global` tells whether any used GLOBAL scope.
Result<std::vector<Assignment>> ParseAssignments(const StatementContext& ctx, Cursor& c,
                                                 bool* global) {
  std::vector<Assignment> assignments;
  while (true) {
    if (c.Accept("GLOBAL")) *global = true;
    if (!c.Accept("SESSION")) c.Accept("LOCAL");
    if (c.Accept("NAMES")) {
      MR_ASSIGN_OR_RETURN(std::string charset, c.Name("a character set"));
      std::string collation = charset == "binary" ? "binary" : charset + "_general_ci";
      if (c.Accept("COLLATE")) {
        MR_ASSIGN_OR_RETURN(collation, c.Name("a collation"));
      }
      for (const char* name :
           {"character_set_client", "character_set_connection", "character_set_results"}) {
        assignments.push_back({name, charset});
      }
      assignments.push_back({"collation_connection", collation});
    } else if (c.Accept("CHARSET") || (c.Accept("CHARACTER") && c.Accept("SET"))) {
      MR_ASSIGN_OR_RETURN(std::string charset, c.Name("a character set"));
      assignments.push_back({"character_set_client", charset});
      assignments.push_back({"character_set_results", charset});
    } else {
      const Token* t = c.Peek();
      if (t == nullptr) return c.Expected("a variable");
      std::string name;
      if (t->kind == TokenKind::kVariable && t->Text(ctx.sql).starts_with("@@")) {
        name = std::string(t->Text(ctx.sql).substr(2));
        for (std::string_view scope : {"session.", "local.", "global."}) {
          if (name.size() > scope.size() && StartsWithIgnoreCase(name, scope)) {
            if (scope == "global.") *global = true;
            name.erase(0, scope.size());
          }
        }
        c.Skip();
      } else {
        MR_ASSIGN_OR_RETURN(name, c.Identifier("a variable"));
      }
      if (!c.AcceptPunct("=") && !c.AcceptPunct(":=")) return c.Expected("'='");
      MR_ASSIGN_OR_RETURN(std::optional<std::string> value, AssignedValue(ctx, c));
      assignments.push_back({std::move(name), std::move(value)});
    }
    if (!c.AcceptPunct(",")) break;
  }
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  return assignments;
}

// SET of MySQL session variables; any other SET (DuckDB settings) goes to DuckDB.
Result<StatementResult> Set(const StatementContext& ctx, Cursor& c) {
  bool global = false;
  auto assignments = ParseAssignments(ctx, c, &global);
  if (!assignments.ok()) return ctx.session.ExecuteClientSql(ctx.sql);
  SessionVariables& variables = ctx.session.variables();
  for (const Assignment& a : *assignments) {
    if (!variables.Has(a.name)) return ctx.session.ExecuteClientSql(ctx.sql);
  }
  if (global) {
    return Status::NotSupported(
        "SET GLOBAL of MySQL variables is not supported: Millrace keeps them per session");
  }
  for (const Assignment& a : *assignments)
    MR_RETURN_IF_ERROR(variables.Set(a.name, a.value));
  return Ok();
}

// COMMIT and ROLLBACK outside a transaction succeed, as in MySQL's autocommit mode.
Result<StatementResult> EndTransaction(const StatementContext& ctx, Cursor&) {
  Result<StatementResult> result = ctx.session.ExecuteClientSql(ctx.sql);
  if (engine::DuckDbReasonOf(result.status()) == engine::DuckDbReason::kNoActiveTransaction) {
    return Ok();
  }
  return result;
}

}  // namespace

void RegisterBuiltinStatements(Router& router) {
  Add(router, {"USE"}, Use);
  for (const char* noun : {"DATABASE", "SCHEMA"}) {
    Add(router, {"CREATE", noun}, CreateDatabase);
    Add(router, {"DROP", noun}, DropDatabase);
    Add(router, {"SHOW", "CREATE", noun}, ShowCreateDatabase);
  }
  Add(router, {"SHOW", "DATABASES"}, ShowDatabases);
  Add(router, {"SHOW", "SCHEMAS"}, ShowDatabases);
  Add(router, {"SHOW", "TABLES"}, [](auto& ctx, Cursor& c) { return ShowTables(ctx, c, false); });
  Add(router, {"SHOW", "FULL", "TABLES"},
      [](auto& ctx, Cursor& c) { return ShowTables(ctx, c, true); });
  for (const char* noun : {"COLUMNS", "FIELDS"}) {
    Add(router, {"SHOW", noun}, [](auto& ctx, Cursor& c) { return ShowColumns(ctx, c, false); });
    Add(router, {"SHOW", "FULL", noun},
        [](auto& ctx, Cursor& c) { return ShowColumns(ctx, c, true); });
  }
  Add(router, {"DESC"}, Describe);
  Add(router, {"DESCRIBE"}, Describe);
  Add(router, {"DESC", "FUNCTION"}, DescribeFunction);
  Add(router, {"DESCRIBE", "FUNCTION"}, DescribeFunction);
  Add(router, {"SHOW", "CREATE", "TABLE"}, ShowCreateTable);
  Add(router, {"SHOW", "CREATE", "VIEW"}, ShowCreateTable);
  Add(router, {"SHOW", "VARIABLES"}, ShowVariables);
  for (const char* scope : {"SESSION", "LOCAL", "GLOBAL"}) {
    Add(router, {"SHOW", scope, "VARIABLES"}, ShowVariables);
    Add(router, {"SET", scope, "TRANSACTION"}, [](auto&, Cursor&) { return Ok(); });
  }
  // DuckDB transactions are snapshot-isolated; MySQL's isolation levels are accepted and kept.
  Add(router, {"SET", "TRANSACTION"}, [](auto&, Cursor&) { return Ok(); });
  Add(router, {"SHOW", "PROCESSLIST"},
      [](auto& ctx, Cursor& c) { return ShowProcessList(ctx, c, false); });
  Add(router, {"SHOW", "FULL", "PROCESSLIST"},
      [](auto& ctx, Cursor& c) { return ShowProcessList(ctx, c, true); });
  Add(router, {"KILL"}, KillStatement);
  Add(router, {"SHOW", "CATALOGS"}, ShowCatalogs);
  Add(router, {"SHOW", "WARNINGS"}, ShowDiagnostics, /*preserves_diagnostics=*/true);
  Add(router, {"SHOW", "ERRORS"}, ShowDiagnostics, /*preserves_diagnostics=*/true);
  Add(router, {"SHOW", "COLLATION"}, ShowCollation);
  Add(router, {"SHOW", "CHARACTER", "SET"}, ShowCharacterSet);
  Add(router, {"SHOW", "CHARSET"}, ShowCharacterSet);
  Add(router, {"SET"}, Set);
  Add(router, {"COMMIT"}, EndTransaction);
  Add(router, {"ROLLBACK"}, EndTransaction);
}

}  // namespace millrace::sql
