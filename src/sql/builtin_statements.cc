#include "sql/builtin_statements.h"

#include <charconv>
#include <functional>

#include "common/logging.h"
#include "engine/duckdb_status.h"
#include "sql/mysql_errors.h"
#include "sql/session.h"
#include "sql/statement_support.h"

namespace millrace::sql {
namespace {

// ---------------------------------------------------------------------------------------------
// Databases

Result<StatementResult> Use(const StatementContext& ctx, Cursor& c) {
  MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a database name"));
  MR_RETURN_IF_ERROR(c.ExpectEnd());
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
    // As the statement's ERR carried it. No filter over messages: secrets are kept out of them
    // where they are made, and a mask over arbitrary text would confirm a guessed secret.
    rows.push_back({"'Error'", std::to_string(ClassifyError(error).code), Quote(error.message())});
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
  const bool was_autocommit = ctx.session.autocommit();
  for (const Assignment& a : *assignments)
    MR_RETURN_IF_ERROR(variables.Set(a.name, a.value));
  if (was_autocommit || !ctx.session.autocommit()) return Ok();
  // As in MySQL, turning autocommit from 0 to 1 commits the open transaction; when that commit
  // fails, autocommit stays 0 (and the transaction open, for a ROLLBACK). A look that fails
  // means an aborted transaction is open (Session::NoteTransactionState).
  Result<bool> open = ctx.session.connection().InTransaction();
  if (open.ok() && !*open) return Ok();
  if (Status committed = ctx.session.connection().Execute("COMMIT"); !committed.ok()) {
    MR_RETURN_IF_ERROR(variables.Set("autocommit", "0"));
    return committed;
  }
  return Ok();
}

// Opens a transaction; as in MySQL, one already open (autocommit = 0 opens them implicitly)
// is committed first.
Result<StatementResult> BeginTransaction(const StatementContext& ctx, bool read_only) {
  MR_ASSIGN_OR_RETURN(bool open, ctx.session.connection().InTransaction());
  if (open) MR_RETURN_IF_ERROR(ctx.session.ExecuteClientSql("COMMIT").status());
  return ctx.session.ExecuteClientSql(read_only ? "BEGIN TRANSACTION READ ONLY"
                                                : "BEGIN TRANSACTION");
}

// BEGIN [WORK | TRANSACTION].
Result<StatementResult> Begin(const StatementContext& ctx, Cursor& c) {
  if (!c.Accept("WORK")) c.Accept("TRANSACTION");
  MR_RETURN_IF_ERROR(c.ExpectEnd());
  return BeginTransaction(ctx, false);
}

// START TRANSACTION [READ ONLY | READ WRITE | WITH CONSISTENT SNAPSHOT] [, ...]: DuckDB's
// transactions are snapshots from their start, so every form is one; READ ONLY is kept.
Result<StatementResult> StartTransaction(const StatementContext& ctx, Cursor& c) {
  bool read_only = false;
  while (!c.Done()) {
    if (c.Accept("READ")) {
      if (c.Accept("ONLY")) {
        read_only = true;
      } else if (!c.Accept("WRITE")) {
        return c.Expected("ONLY or WRITE");
      }
    } else if (c.Accept("WITH")) {
      MR_RETURN_IF_ERROR(c.Expect("CONSISTENT"));
      MR_RETURN_IF_ERROR(c.Expect("SNAPSHOT"));
    } else {
      return c.Expected("READ ONLY, READ WRITE or WITH CONSISTENT SNAPSHOT");
    }
    if (!c.Done()) MR_RETURN_IF_ERROR(c.ExpectPunct(","));
  }
  return BeginTransaction(ctx, read_only);
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
  AddStatement(router, {"USE"}, Use);
  for (const char* noun : {"DATABASE", "SCHEMA"}) {
    AddStatement(router, {"CREATE", noun}, CreateDatabase);
    AddStatement(router, {"DROP", noun}, DropDatabase);
    AddStatement(router, {"SHOW", "CREATE", noun}, ShowCreateDatabase);
  }
  AddStatement(router, {"SHOW", "DATABASES"}, ShowDatabases);
  AddStatement(router, {"SHOW", "SCHEMAS"}, ShowDatabases);
  RegisterTableMetadataStatements(router);
  AddStatement(router, {"SHOW", "VARIABLES"}, ShowVariables);
  for (const char* scope : {"SESSION", "LOCAL", "GLOBAL"}) {
    AddStatement(router, {"SHOW", scope, "VARIABLES"}, ShowVariables);
    AddStatement(router, {"SET", scope, "TRANSACTION"}, [](auto&, Cursor&) { return Ok(); });
  }
  // DuckDB transactions are snapshot-isolated; MySQL's isolation levels are accepted and kept.
  AddStatement(router, {"SET", "TRANSACTION"}, [](auto&, Cursor&) { return Ok(); });
  AddStatement(router, {"SHOW", "PROCESSLIST"},
               [](auto& ctx, Cursor& c) { return ShowProcessList(ctx, c, false); });
  AddStatement(router, {"SHOW", "FULL", "PROCESSLIST"},
               [](auto& ctx, Cursor& c) { return ShowProcessList(ctx, c, true); });
  AddStatement(router, {"KILL"}, KillStatement);
  AddStatement(router, {"SHOW", "CATALOGS"}, ShowCatalogs);
  AddStatement(router, {"SHOW", "WARNINGS"}, ShowDiagnostics, /*preserves_diagnostics=*/true);
  AddStatement(router, {"SHOW", "ERRORS"}, ShowDiagnostics, /*preserves_diagnostics=*/true);
  AddStatement(router, {"SHOW", "COLLATION"}, ShowCollation);
  AddStatement(router, {"SHOW", "CHARACTER", "SET"}, ShowCharacterSet);
  AddStatement(router, {"SHOW", "CHARSET"}, ShowCharacterSet);
  AddStatement(router, {"SET"}, Set);
  AddStatement(router, {"START", "TRANSACTION"}, StartTransaction);
  AddStatement(router, {"BEGIN"}, Begin);
  AddStatement(router, {"COMMIT"}, EndTransaction);
  AddStatement(router, {"ROLLBACK"}, EndTransaction);
}

}  // namespace millrace::sql
