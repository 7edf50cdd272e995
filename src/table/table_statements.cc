#include "table/table_statements.h"

#include <functional>

#include "common/clock.h"
#include "engine/duckdb_status.h"
#include "sql/mysql_errors.h"
#include "sql/statement_support.h"
#include "table/create_table.h"
#include "table/doris_types.h"
#include "table/load_labels.h"
#include "table/model_catalog.h"
#include "table/model_write.h"

namespace millrace::table {
namespace {

using sql::Cursor;
using sql::Session;
using sql::StatementContext;
using sql::StatementResult;

// Runs `body` in a transaction of the session: its own (committed when `body` succeeds, rolled
// back otherwise), or the client's when one is open.
Status InTransaction(Session& session, const std::function<Status()>& body) {
  MR_ASSIGN_OR_RETURN(bool open, session.connection().InTransaction());
  if (open) return body();
  MR_ASSIGN_OR_RETURN(engine::Transaction transaction, session.connection().Begin());
  MR_RETURN_IF_ERROR(body());  // the transaction rolls back as it goes out of scope
  return transaction.Commit();
}

Result<bool> TableExists(Session& session, const std::string& database, const std::string& table) {
  MR_ASSIGN_OR_RETURN(
      std::optional<std::string> count,
      session.QueryScalar("SELECT count(*) FROM duckdb_tables() WHERE "
                          "database_name = current_database() AND "
                          "lower(schema_name) = lower(" +
                          engine::QuoteLiteral(database) + ") AND lower(table_name) = lower(" +
                          engine::QuoteLiteral(table) + ")"));
  return count && *count != "0";
}

std::string QualifiedName(const TableDef& def) {
  return engine::QuoteIdentifier(def.database) + "." + engine::QuoteIdentifier(def.name);
}

// The record of `def` and its comments, in the transaction that created the table.
Status Record(Session& session, const TableDef& def) {
  MR_RETURN_IF_ERROR(session.ExecuteDuckDb(RecordModelSql(def)).status());
  if (!def.comment.empty()) {
    MR_RETURN_IF_ERROR(session
                           .ExecuteDuckDb("COMMENT ON TABLE " + QualifiedName(def) + " IS " +
                                          engine::QuoteLiteral(def.comment))
                           .status());
  }
  for (const Column& column : def.columns) {
    if (column.comment.empty()) continue;
    MR_RETURN_IF_ERROR(session
                           .ExecuteDuckDb("COMMENT ON COLUMN " + QualifiedName(def) + "." +
                                          engine::QuoteIdentifier(column.name) + " IS " +
                                          engine::QuoteLiteral(column.comment))
                           .status());
  }
  return Status::Ok();
}

Result<StatementResult> Create(Session& session, const TableDef& def, bool if_not_exists) {
  MR_ASSIGN_OR_RETURN(bool exists, TableExists(session, def.database, def.name));
  // IF NOT EXISTS on an existing table changes nothing, its record included.
  if (exists && if_not_exists) return StatementResult();
  MR_RETURN_IF_ERROR(InTransaction(session, [&]() -> Status {
    MR_RETURN_IF_ERROR(session.ExecuteClientSql(DuckDbCreateTable(def, false)).status());
    return Record(session, def);
  }));
  return StatementResult();
}

// The columns of database.table as a DUPLICATE table of the same columns.
Result<TableDef> PlainTableDef(Session& session, const std::string& database,
                               const std::string& table) {
  MR_ASSIGN_OR_RETURN(auto rows,
                      engine::QueryTextRows(
                          session.connection(),
                          "SELECT column_name, data_type, is_nullable FROM "
                          "duckdb_columns() WHERE database_name = "
                          "current_database() AND lower(schema_name) = lower(" +
                              engine::QuoteLiteral(database) + ") AND lower(table_name) = lower(" +
                              engine::QuoteLiteral(table) + ") ORDER BY column_index"));
  TableDef def;
  def.database = database;
  def.name = table;
  for (const auto& row : rows) {
    Column column;
    column.name = row[0];
    column.duckdb_type = row[1];
    column.doris_type = DorisTypeOf(row[1]);
    column.nullable = row[2] == "true";
    def.columns.push_back(std::move(column));
  }
  if (!def.columns.empty()) def.keys.push_back(def.columns.front().name);
  return def;
}

Result<StatementResult> CreateLike(Session& session, CreateTable create) {
  MR_ASSIGN_OR_RETURN(
      std::string source_db,
      sql::ResolveDatabase(
          session, create.like->first.empty() ? std::nullopt : std::optional(create.like->first)));
  const std::string& source = create.like->second;
  MR_RETURN_IF_ERROR(session.CheckObject(sql::ObjectAction::kShow, source_db, source));
  MR_RETURN_IF_ERROR(sql::CheckTableExists(session, source_db, source));
  MR_ASSIGN_OR_RETURN(std::optional<TableDef> model,
                      LoadModel(session.connection(), source_db, source));
  TableDef def = model ? std::move(*model) : TableDef();
  if (!model) {
    MR_ASSIGN_OR_RETURN(def, PlainTableDef(session, source_db, source));
  }
  def.database = create.def.database;
  def.name = create.def.name;
  return Create(session, def, create.if_not_exists);
}

// The UNIQUE KEY table `def` made from `query`: the query's columns (read from a table made of
// none of its rows, dropped again), the keys as primary key, and the query's rows written by
// the model (the newest row of a key wins). One transaction.
Status CreateUniqueAs(Session& session, const TableDef& def, const std::string& query) {
  const std::string name = QualifiedName(def);
  // Checked by the guard as the client's CREATE TABLE AS: CREATE_PRIV, and SELECT_PRIV on what
  // the query reads.
  MR_RETURN_IF_ERROR(session
                         .ExecuteClientSql("CREATE TABLE " + name + " AS SELECT * FROM (" + query +
                                           ") AS __millrace_query LIMIT 0")
                         .status());
  MR_ASSIGN_OR_RETURN(TableDef made, PlainTableDef(session, def.database, def.name));
  MR_RETURN_IF_ERROR(session.ExecuteDuckDb("DROP TABLE " + name).status());
  made.model = TableModel::kUnique;
  made.keys = def.keys;
  for (size_t i = 0; i < made.keys.size(); ++i) {
    if (i >= made.columns.size() || !EqualsIgnoreCase(made.columns[i].name, made.keys[i])) {
      return sql::TableDefinitionError("key columns must be the query's first columns, in order: " +
                                       made.keys[i] + " is not column " + std::to_string(i + 1));
    }
    made.keys[i] = made.columns[i].name;
  }
  made.comment = def.comment;
  made.distribution = def.distribution;
  made.partition = def.partition;
  made.properties = def.properties;
  MR_RETURN_IF_ERROR(session.ExecuteDuckDb(DuckDbCreateTable(made, false)).status());
  MR_RETURN_IF_ERROR(Record(session, made));
  std::vector<std::string> columns;
  std::string aliases;
  for (const Column& column : made.columns) {
    columns.push_back(column.name);
    aliases += (aliases.empty() ? "" : ", ") + engine::QuoteIdentifier(column.name);
  }
  MR_ASSIGN_OR_RETURN(std::vector<std::string> writes,
                      ModelWriteSql(made, name, columns,
                                    "SELECT *, row_number() OVER () AS __millrace_row FROM (" +
                                        query + ") AS __millrace_src(" + aliases + ")",
                                    "__millrace_row"));
  for (const std::string& write : writes)
    MR_RETURN_IF_ERROR(session.ExecuteDuckDb(write).status());
  return Status::Ok();
}

Result<StatementResult> CreateAs(Session& session, CreateTable create) {
  TableDef& def = create.def;
  if (def.model == TableModel::kAggregate) {
    return sql::NotSupportedError("AGGREGATE KEY tables made from a query",
                                  "each value column needs its function: create the table, then "
                                  "INSERT INTO it SELECT ...");
  }
  MR_ASSIGN_OR_RETURN(bool exists, TableExists(session, def.database, def.name));
  if (exists && create.if_not_exists) return StatementResult();
  if (def.model == TableModel::kUnique) {
    MR_RETURN_IF_ERROR(
        InTransaction(session, [&]() { return CreateUniqueAs(session, def, *create.query); }));
    return StatementResult();
  }
  MR_RETURN_IF_ERROR(InTransaction(session, [&]() -> Status {
    MR_RETURN_IF_ERROR(
        session.ExecuteClientSql("CREATE TABLE " + QualifiedName(def) + " AS " + *create.query)
            .status());
    MR_ASSIGN_OR_RETURN(TableDef made, PlainTableDef(session, def.database, def.name));
    if (!def.keys.empty()) made.keys = def.keys;
    made.comment = def.comment;
    made.distribution = def.distribution;
    made.partition = def.partition;
    made.properties = def.properties;
    for (const std::string& key : made.keys) {
      if (made.FindColumn(key) == nullptr) {
        return sql::TableDefinitionError("key column " + key + " is not a column of " + def.name);
      }
    }
    return Record(session, made);
  }));
  return StatementResult();
}

class CreateTableHandler final : public sql::StatementHandler {
 public:
  Result<StatementResult> Execute(const StatementContext& ctx) override {
    Session& session = ctx.session;
    if (!IsDorisCreateTable(ctx.sql)) return session.ExecuteClientSql(ctx.sql);
    Result<CreateTable> parsed = ParseCreateTable(ctx.sql);
    if (!parsed.ok()) {
      // A Doris word may be a column's name in DuckDB's own DDL (`engine VARCHAR`): DuckDB has
      // the last word; when it refuses too, the Doris error says more.
      Result<StatementResult> duckdb = session.ExecuteClientSql(ctx.sql);
      if (duckdb.ok()) return duckdb;
      return parsed.status();
    }
    CreateTable create = std::move(parsed).value();
    MR_ASSIGN_OR_RETURN(create.def.database,
                        sql::ResolveDatabase(session, create.def.database.empty()
                                                          ? std::nullopt
                                                          : std::optional(create.def.database)));
    if (create.like) return CreateLike(session, std::move(create));
    if (create.query) return CreateAs(session, std::move(create));
    return Create(session, create.def, create.if_not_exists);
  }
};

// A statement naming one table (SHOW CREATE TABLE t, DESC t): a Doris table's answer, or the
// replaced handler's.
class DorisTableHandler final : public sql::StatementHandler {
 public:
  using Answer = std::function<Result<StatementResult>(Session&, const TableDef&)>;

  DorisTableHandler(size_t keywords, std::shared_ptr<sql::StatementHandler> previous, Answer answer)
      : keywords_(keywords), previous_(std::move(previous)), answer_(std::move(answer)) {}

  Result<StatementResult> Execute(const StatementContext& ctx) override {
    MR_ASSIGN_OR_RETURN(std::optional<TableDef> def, Find(ctx));
    if (def) return answer_(ctx.session, *def);
    if (previous_ == nullptr) return ctx.session.ExecuteClientSql(ctx.sql);
    return previous_->Execute(ctx);
  }

 private:
  // The Doris table the statement names, when it names exactly one table that has a record.
  Result<std::optional<TableDef>> Find(const StatementContext& ctx) {
    Cursor c(ctx, keywords_);
    const sql::Token* next = c.Peek();
    if (next == nullptr || !sql::IsIdentifier(*next)) return std::optional<TableDef>();
    auto name = sql::ParseTableName(c);
    if (!name.ok() || !c.Done()) return std::optional<TableDef>();
    Session& session = ctx.session;
    auto database = sql::ResolveDatabase(session, name->database);
    if (!database.ok()) return std::optional<TableDef>();
    MR_ASSIGN_OR_RETURN(std::optional<TableDef> def,
                        LoadModel(session.connection(), *database, name->table));
    if (def) {
      MR_RETURN_IF_ERROR(session.CheckObject(sql::ObjectAction::kShow, *database, name->table));
    }
    return def;
  }

  size_t keywords_;
  std::shared_ptr<sql::StatementHandler> previous_;
  Answer answer_;
};

Result<StatementResult> ShowCreate(Session& session, const TableDef& def) {
  return session.ExecuteDuckDb(sql::ValuesTable(
      {{"Table", "VARCHAR"}, {"Create Table", "VARCHAR"}},
      {{engine::QuoteLiteral(def.name), engine::QuoteLiteral(ShowCreateTable(def))}}));
}

Result<StatementResult> Describe(Session& session, const TableDef& def) {
  std::vector<std::vector<std::string>> rows;
  for (const Column& column : def.columns) {
    // DESC shows a default as its value: a quoted default without its quotes, NULL as NULL.
    std::string default_value = "NULL";
    if (column.default_doris && *column.default_doris != "NULL") {
      const std::string& d = *column.default_doris;
      std::string value = d;
      if (d.size() >= 2 && d.front() == '"') {
        value.clear();
        for (size_t i = 1; i + 1 < d.size(); ++i) {
          value.push_back(d[i]);
          if (d[i] == '"' && d[i + 1] == '"') ++i;
        }
      }
      default_value = engine::QuoteLiteral(value);
    }
    rows.push_back(
        {engine::QuoteLiteral(column.name), engine::QuoteLiteral(ToUpper(column.doris_type)),
         column.nullable ? "'Yes'" : "'No'", def.IsKey(column.name) ? "'true'" : "'false'",
         default_value, engine::QuoteLiteral(AggregationName(column.aggregation))});
  }
  return session.ExecuteDuckDb(sql::ValuesTable({{"Field", "VARCHAR"},
                                                 {"Type", "VARCHAR"},
                                                 {"Null", "VARCHAR"},
                                                 {"Key", "VARCHAR"},
                                                 {"Default", "VARCHAR"},
                                                 {"Extra", "VARCHAR"}},
                                                rows));
}

// INSERT INTO a Doris table that keeps rows by key: the rows are numbered in the order the
// statement gives them and written by the model (model_write.h). INSERT INTO t WITH LABEL l:
// the label is recorded in the INSERT's transaction (load_labels.h). Any other INSERT goes to
// DuckDB as written.
class InsertHandler final : public sql::StatementHandler {
 public:
  Result<StatementResult> Execute(const StatementContext& ctx) override {
    Session& session = ctx.session;
    MR_ASSIGN_OR_RETURN(std::optional<Plan> plan, Rewrite(ctx));
    if (!plan) return session.ExecuteClientSql(ctx.sql);
    if (!plan->label && plan->writes.size() == 1) {
      return session.ExecuteClientSql(plan->writes.front());
    }
    int64_t affected = 0;
    MR_RETURN_IF_ERROR(InTransaction(session, [&]() -> Status {
      // The writes first: a write the guard refuses (or that fails) leaves no label, even in a
      // client's transaction that goes on to COMMIT.
      for (const std::string& write : plan->writes) {
        MR_ASSIGN_OR_RETURN(StatementResult result, session.ExecuteClientSql(write));
        affected += result.affected_rows;
      }
      if (!plan->label) return Status::Ok();
      const int64_t now_us = MicrosSinceEpoch(session.router().options().clock->WallNow());
      Status recorded = session
                            .ExecuteDuckDb(RecordLabelSql(plan->database, *plan->label, plan->table,
                                                          session.info().user, now_us))
                            .status();
      const ErrorDetail detail = recorded.detail();
      if (detail.domain == ErrorDomain::kDuckDb &&
          detail.reason == static_cast<int32_t>(engine::DuckDbReason::kDuplicateKey)) {
        return sql::TableDefinitionError("Label [" + *plan->label + "] has already been used.");
      }
      return recorded;
    }));
    StatementResult result;
    result.affected_rows = affected;
    return result;
  }

 private:
  struct Plan {
    std::string database;
    std::string table;
    std::optional<std::string> label;
    std::vector<std::string> writes;  // the statements, in order
  };

  // What the INSERT becomes, or nullopt to run it as written.
  static Result<std::optional<Plan>> Rewrite(const StatementContext& ctx) {
    Cursor c(ctx, 1);
    if (!c.Accept("INTO")) return std::optional<Plan>();
    const size_t name_start = c.index();
    auto name = sql::ParseTableName(c);
    if (!name.ok()) return std::optional<Plan>();
    const std::string written_name(c.TextSince(name_start));
    Session& session = ctx.session;
    auto database = sql::ResolveDatabase(session, name->database);
    if (!database.ok()) return std::optional<Plan>();
    Plan plan{*database, name->table, std::nullopt, {}};
    // INSERT INTO t WITH LABEL l ...; INSERT INTO t WITH cte AS (...) SELECT is DuckDB's.
    if (c.index() + 1 < ctx.tokens.size() && sql::IsKeyword(ctx.sql, *c.Peek(), "WITH") &&
        sql::IsKeyword(ctx.sql, ctx.tokens[c.index() + 1], "LABEL")) {
      c.Skip();
      c.Skip();
      MR_ASSIGN_OR_RETURN(std::string label, c.Name("a label"));
      plan.label = std::move(label);
      if (c.Done()) return c.Expected("VALUES or a query");
    }
    const std::string after_label(c.Rest());
    // Nothing about the table is told before the user's right to it is known: without one, the
    // statement goes to DuckDB as written and the guard refuses it.
    if (!session.CheckObject(sql::ObjectAction::kShow, *database, name->table).ok()) {
      return std::optional<Plan>();
    }
    MR_ASSIGN_OR_RETURN(std::optional<TableDef> def,
                        LoadModel(session.connection(), *database, name->table));
    if (!def || def->model == TableModel::kDuplicate) {
      if (!plan.label) return std::optional<Plan>();
      plan.writes.push_back("INSERT INTO " + written_name + " " + std::string(c.Rest()));
      return std::optional<Plan>(std::move(plan));
    }
    std::vector<std::string> columns;
    const sql::Token* next = c.Peek();
    const bool listed = next != nullptr && next->Text(ctx.sql) == "(" &&
                        c.index() + 1 < ctx.tokens.size() &&
                        sql::IsIdentifier(ctx.tokens[c.index() + 1]) &&
                        !sql::IsKeyword(ctx.sql, ctx.tokens[c.index() + 1], "SELECT") &&
                        !sql::IsKeyword(ctx.sql, ctx.tokens[c.index() + 1], "WITH");
    if (listed) {
      c.Skip();
      do {
        MR_ASSIGN_OR_RETURN(std::string column, c.Identifier("a column name"));
        columns.push_back(std::move(column));
      } while (c.AcceptPunct(","));
      MR_RETURN_IF_ERROR(c.ExpectPunct(")"));
    } else {
      for (const Column& column : def->columns)
        columns.push_back(column.name);
    }
    // DuckDB's own forms (BY NAME, DEFAULT VALUES, ON CONFLICT, RETURNING) go to DuckDB.
    const sql::Token* source = c.Peek();
    if (source == nullptr ||
        !(sql::IsKeyword(ctx.sql, *source, "VALUES") ||
          sql::IsKeyword(ctx.sql, *source, "SELECT") || sql::IsKeyword(ctx.sql, *source, "WITH") ||
          sql::IsKeyword(ctx.sql, *source, "FROM"))) {
      if (!plan.label) return std::optional<Plan>();
      plan.writes.push_back("INSERT INTO " + written_name + " " + after_label);
      return std::optional<Plan>(std::move(plan));
    }
    // ON CONFLICT or RETURNING at the top level after the source: DuckDB's own upsert forms.
    int depth = 0;
    for (size_t i = c.index(); i < ctx.tokens.size(); ++i) {
      const std::string_view text = ctx.tokens[i].Text(ctx.sql);
      if (ctx.tokens[i].kind == sql::TokenKind::kPunct) {
        if (text == "(") ++depth;
        if (text == ")") --depth;
        continue;
      }
      if (depth == 0 &&
          (sql::IsKeyword(ctx.sql, ctx.tokens[i], "RETURNING") ||
           (sql::IsKeyword(ctx.sql, ctx.tokens[i], "ON") && i + 1 < ctx.tokens.size() &&
            sql::IsKeyword(ctx.sql, ctx.tokens[i + 1], "CONFLICT")))) {
        if (!plan.label) return std::optional<Plan>();
        plan.writes.push_back("INSERT INTO " + written_name + " " + after_label);
        return std::optional<Plan>(std::move(plan));
      }
    }
    std::string aliases;
    for (const std::string& column : columns)
      aliases += (aliases.empty() ? "" : ", ") + engine::QuoteIdentifier(column);
    MR_ASSIGN_OR_RETURN(
        plan.writes,
        ModelWriteSql(*def,
                      engine::QuoteIdentifier(*database) + "." + engine::QuoteIdentifier(def->name),
                      columns,
                      "SELECT *, row_number() OVER () AS __millrace_row FROM (" +
                          std::string(c.Rest()) + ") AS __millrace_src(" + aliases + ")",
                      "__millrace_row"));
    return std::optional<Plan>(std::move(plan));
  }
};

// DROP TABLE: the table's Doris definition is forgotten in the transaction that drops it, so a
// table made later under the name starts with none.
class DropTableHandler final : public sql::StatementHandler {
 public:
  Result<StatementResult> Execute(const StatementContext& ctx) override {
    Session& session = ctx.session;
    Cursor c(ctx, 2);
    if (c.Accept("IF")) {
      if (!c.Accept("EXISTS")) return session.ExecuteClientSql(ctx.sql);
    }
    std::vector<sql::TableName> names;
    do {
      auto name = sql::ParseTableName(c);
      if (!name.ok()) return session.ExecuteClientSql(ctx.sql);
      names.push_back(std::move(name).value());
    } while (c.AcceptPunct(","));
    StatementResult dropped;
    MR_RETURN_IF_ERROR(InTransaction(session, [&]() -> Status {
      MR_ASSIGN_OR_RETURN(dropped, session.ExecuteClientSql(ctx.sql));
      for (const sql::TableName& name : names) {
        auto database = sql::ResolveDatabase(session, name.database);
        if (!database.ok()) continue;  // DuckDB resolved it elsewhere (main): nothing recorded
        MR_RETURN_IF_ERROR(session.ExecuteDuckDb(ForgetModelSql(*database, name.table)).status());
      }
      return Status::Ok();
    }));
    return dropped;
  }
};

// SHOW LOAD [FROM db] [WHERE LABEL = 'l']: the labelled INSERTs of a database.
class ShowLoadHandler final : public sql::StatementHandler {
 public:
  Result<StatementResult> Execute(const StatementContext& ctx) override {
    Cursor c(ctx, 2);
    std::optional<std::string> database;
    if (c.Accept("FROM") || c.Accept("IN")) {
      MR_ASSIGN_OR_RETURN(std::string name, c.Identifier("a database name"));
      database = std::move(name);
    }
    std::string label;
    if (c.Accept("WHERE")) {
      MR_RETURN_IF_ERROR(c.Expect("LABEL"));
      MR_RETURN_IF_ERROR(c.ExpectPunct("="));
      MR_ASSIGN_OR_RETURN(label, c.Name("a label"));
    }
    MR_RETURN_IF_ERROR(c.ExpectEnd());
    Session& session = ctx.session;
    MR_ASSIGN_OR_RETURN(std::string db, sql::ResolveDatabase(session, database));
    MR_RETURN_IF_ERROR(session.CheckObject(sql::ObjectAction::kShow, db, ""));
    // Only the loads of tables the user may see, as SHOW TABLES lists them.
    MR_ASSIGN_OR_RETURN(auto tables,
                        engine::QueryTextRows(session.connection(), LabelTablesSql(db)));
    std::vector<std::string> visible;
    for (const auto& row : tables) {
      if (session.Visible(db, row[0])) visible.push_back(row[0]);
    }
    return session.ExecuteDuckDb(LabelRowsSql(db, label, visible));
  }
};

}  // namespace

void RegisterTableStatements(sql::Router* router) {
  router->RegisterStatement({"INSERT"}, std::make_shared<InsertHandler>());
  router->RegisterStatement({"SHOW", "LOAD"}, std::make_shared<ShowLoadHandler>());
  router->RegisterStatement({"DROP", "TABLE"}, std::make_shared<DropTableHandler>());
  router->RegisterStatement({"CREATE", "TABLE"}, std::make_shared<CreateTableHandler>());
  const std::vector<std::pair<std::vector<std::string>, DorisTableHandler::Answer>> wrapped = {
      {{"SHOW", "CREATE", "TABLE"}, ShowCreate},
      {{"DESC"}, Describe},
      {{"DESCRIBE"}, Describe},
  };
  for (const auto& [keywords, answer] : wrapped) {
    router->RegisterStatement(keywords, std::make_shared<DorisTableHandler>(
                                            keywords.size(), router->HandlerFor(keywords), answer));
  }
}

}  // namespace millrace::table
