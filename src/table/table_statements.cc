#include "table/table_statements.h"

#include <functional>

#include "sql/mysql_errors.h"
#include "sql/statement_support.h"
#include "table/create_table.h"
#include "table/doris_types.h"
#include "table/model_catalog.h"

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

Result<StatementResult> CreateAs(Session& session, CreateTable create) {
  TableDef& def = create.def;
  if (def.model != TableModel::kDuplicate) {
    return sql::NotSupportedError(
        std::string(ModelName(def.model)) + " KEY tables made from a query",
        "create the table, then INSERT INTO it SELECT ...");
  }
  MR_ASSIGN_OR_RETURN(bool exists, TableExists(session, def.database, def.name));
  if (exists && create.if_not_exists) return StatementResult();
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
    MR_ASSIGN_OR_RETURN(CreateTable create, ParseCreateTable(ctx.sql));
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
    std::string default_value = "NULL";
    if (column.default_doris) {
      const std::string& d = *column.default_doris;
      default_value =
          engine::QuoteLiteral(d.size() >= 2 && d.front() == '"' ? d.substr(1, d.size() - 2) : d);
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

}  // namespace

void RegisterTableStatements(sql::Router* router) {
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
