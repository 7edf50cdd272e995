#include "sql/session.h"

#include <algorithm>

#include "engine/duckdb_status.h"
#include "sql/mysql_errors.h"
#include "sql/mysql_information_schema.h"

namespace millrace::sql {
namespace {

// Whether the statement opens or ends a transaction itself (BEGIN, START TRANSACTION, COMMIT,
// ROLLBACK, END, ABORT): autocommit = 0 opens none before it.
bool ControlsTransaction(std::string_view sql, const std::vector<Token>& tokens) {
  static constexpr std::string_view kKeywords[] = {"BEGIN",    "START", "COMMIT",
                                                   "ROLLBACK", "END",   "ABORT"};
  return !tokens.empty() &&
         std::any_of(std::begin(kKeywords), std::end(kKeywords),
                     [&](std::string_view keyword) { return IsKeyword(sql, tokens[0], keyword); });
}

}  // namespace

Session::Session(Router* router, std::unique_ptr<engine::Connection> conn, SessionInfo info)
    : router_(router),
      conn_(std::move(conn)),
      connection_id_(conn_->id()),
      info_(std::move(info)),
      variables_(router->system_variables()) {
  router_->activities().Add(connection_id_, conn_.get(), &info_);
}

Session::~Session() {
  router_->activities().Remove(connection_id_);
}

void Session::SetKillHook(std::function<void()> hook) {
  router_->activities().SetKillHook(connection_id_, std::move(hook));
}

bool Session::killed() const {
  return router_->activities().Killed(connection_id_);
}

Result<StatementResult> Session::Execute(std::string_view statement) {
  const std::vector<Token> tokens = SignificantTokens(statement);
  if (tokens.empty()) {
    last_error_ = EmptyQueryError();
    return last_error_;
  }
  std::shared_ptr<StatementHandler> handler = router_->FindHandler(statement, tokens);
  SetActivity(handler != nullptr ? handler->ForLog(statement, tokens) : std::string(statement),
              BoundOf(tokens, statement));
  Result<StatementResult> result =
      handler != nullptr ? handler->Execute(StatementContext{statement, tokens, *this})
                         : ExecuteClientSql(statement);
  NoteTransactionState(statement, tokens);
  return Finish(statement, std::move(result),
                handler != nullptr && handler->PreservesDiagnostics());
}

Result<StatementResult> Session::Finish(std::string_view statement, Result<StatementResult> result,
                                        bool keep_diagnostics) {
  if (!result.ok()) result = BoundError(result.status());
  if (!keep_diagnostics) last_error_ = result.status();
  if (const std::shared_ptr<StatementGuard> guard = router_->guard(); guard != nullptr) {
    guard->Executed(*this, statement, result.status());
  }
  if (result.ok() && result->rows != nullptr) {
    // DuckDB produces the rows as they are read: the statement runs, shows in the process list
    // and can be killed until they are consumed.
    result->resources.push_back(std::make_unique<StatementEnd>(this));
  } else {
    SetActivity("");
  }
  return result;
}

void Session::SetActivity(std::string statement, StatementBound bound) {
  if (statement.empty()) {
    router_->activities().End(connection_id_, database_);
  } else {
    router_->activities().Begin(connection_id_, std::move(statement), database_, std::move(bound));
  }
}

DialectContext Session::Dialect() const {
  return DialectContext{variables_, info_, database_, router_->options().server_version};
}

StatementBound Session::BoundOf(const std::vector<Token>& tokens,
                                std::string_view statement) const {
  bool writes = false;
  if (!tokens.empty()) {
    for (const char* keyword : {"INSERT", "REPLACE", "UPDATE", "DELETE", "MERGE"}) {
      writes = writes || IsKeyword(statement, tokens.front(), keyword);
    }
  }
  StatementBound bound{writes ? "insert_timeout" : "query_timeout", 0};
  Result<SystemVariable> variable = variables_.Get(bound.variable);
  if (variable.ok() && variable->value) {
    // A numeric variable holds digits (SessionVariables::Set checks them).
    bound.seconds = std::strtoll(variable->value->c_str(), nullptr, 10);
  }
  return bound;
}

Status Session::BoundError(const Status& status) const {
  if (status.code() != StatusCode::kCancelled &&
      !engine::IsDuckDbError(status, DUCKDB_ERROR_INTERRUPT)) {
    return status;
  }
  const std::optional<StatementBound> bound = router_->activities().TimedOut(connection_id_);
  if (!bound) return status;
  return QueryTimeoutError(bound->variable, bound->seconds);
}

Result<StatementResult> Session::ExecuteClientSql(std::string_view statement) {
  if (!ControlsTransaction(statement, SignificantTokens(statement))) {
    MR_RETURN_IF_ERROR(BeginImplicitTransaction());
  }
  MR_ASSIGN_OR_RETURN(TableFunctionRegistry::Rewritten rewritten, Rewrite(statement));
  return RunOne(std::move(rewritten));
}

Result<TableFunctionRegistry::Rewritten> Session::Rewrite(std::string_view statement, bool* calls) {
  // EXPLAIN [ANALYZE] <statement>: the statement explained is rewritten and checked as itself,
  // and what runs is EXPLAIN of exactly the text checked, never the client's own text, where a
  // comment read otherwise than DuckDB reads it could hide words.
  if (const std::optional<Explained> explain = SplitExplain(statement)) {
    if (explain->statement_begin == statement.size()) return SyntaxError("EXPLAIN of nothing");
    MR_ASSIGN_OR_RETURN(TableFunctionRegistry::Rewritten explained,
                        Rewrite(statement.substr(explain->statement_begin), calls));
    explained.sql = std::string(explain->keywords) + explained.sql;
    explained.check_sql = std::string(explain->keywords) + explained.check_sql;
    return explained;
  }
  const std::shared_ptr<StatementGuard> guard = router_->guard();
  MR_ASSIGN_OR_RETURN(std::string translated, TranslateForDuckDb(statement, Dialect()));
  if (guard != nullptr) MR_RETURN_IF_ERROR(guard->CheckNames(*this, translated));
  auto before_call = [&](std::string_view name) {
    if (calls != nullptr) *calls = true;
    return guard == nullptr ? Status::Ok() : guard->CheckTableFunction(*this, name);
  };
  if (router_->routes_mysql_information_schema()) {
    MR_ASSIGN_OR_RETURN(std::optional<std::string> routed,
                        RouteToMysqlInformationSchema(*conn_, translated));
    if (routed) translated = std::move(*routed);
  }
  if (guard == nullptr) return router_->table_functions().Expand(translated, before_call);
  MR_ASSIGN_OR_RETURN(std::optional<std::string> scoped, guard->Scope(*this, translated));
  if (scoped) translated = std::move(*scoped);
  MR_ASSIGN_OR_RETURN(TableFunctionRegistry::Rewritten rewritten,
                      router_->table_functions().Expand(translated, before_call));
  MR_RETURN_IF_ERROR(guard->CheckStatement(*this, rewritten.check_sql));
  return rewritten;
}

Status Session::CheckObject(ObjectAction action, std::string_view database,
                            std::string_view table) {
  const std::shared_ptr<StatementGuard> guard = router_->guard();
  return guard == nullptr ? Status::Ok() : guard->CheckObject(*this, action, database, table);
}

bool Session::MayManageSessions() {
  const std::shared_ptr<StatementGuard> guard = router_->guard();
  return guard == nullptr || guard->MayManageSessions(*this);
}

bool Session::Visible(std::string_view database, std::string_view table) {
  const std::shared_ptr<StatementGuard> guard = router_->guard();
  return guard == nullptr || guard->Visible(*this, database, table);
}

Status Session::CheckClientQuery(std::string_view query) {
  const std::shared_ptr<StatementGuard> guard = router_->guard();
  if (guard == nullptr) return Status::Ok();
  MR_ASSIGN_OR_RETURN(std::string translated, TranslateForDuckDb(query, Dialect()));
  MR_RETURN_IF_ERROR(guard->CheckNames(*this, translated));
  MR_ASSIGN_OR_RETURN(std::optional<std::string> scoped, guard->Scope(*this, translated));
  return guard->CheckStatement(*this, scoped ? *scoped : translated);
}

Result<StatementResult> Session::ExecuteDuckDb(std::string_view statement) {
  MR_ASSIGN_OR_RETURN(std::string translated, TranslateForDuckDb(statement, Dialect()));
  MR_ASSIGN_OR_RETURN(TableFunctionRegistry::Rewritten rewritten,
                      router_->table_functions().Expand(translated));
  return Run(std::move(rewritten));
}

Result<StatementResult> Session::RunOne(TableFunctionRegistry::Rewritten rewritten) {
  std::vector<std::unique_ptr<StatementResources>> resources = std::move(rewritten.resources);
  // Exactly one statement as DuckDB splits it, of the kind checked: a text DuckDB reads as two
  // statements never runs its second.
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::PreparedStatement> prepared,
                      conn_->PrepareOne(rewritten.sql));
  if (rewritten.check_sql != rewritten.sql) {
    MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::PreparedStatement> checked,
                        conn_->PrepareOne(rewritten.check_sql));
    if (checked->kind() != prepared->kind()) {
      return Status::Internal(std::string("the statement checked is a ") +
                              std::string(engine::StatementKindName(checked->kind())) +
                              ", the statement to run a " +
                              std::string(engine::StatementKindName(prepared->kind())));
    }
  }
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::QueryResult> rows, prepared->Execute());
  StatementResult result = StatementResult::Of(std::move(rows));
  result.resources = std::move(resources);
  return result;
}

Result<StatementResult> Session::Run(TableFunctionRegistry::Rewritten rewritten) {
  // The resources outlive the rows (~StatementResult), so they are taken before the query.
  std::vector<std::unique_ptr<StatementResources>> resources = std::move(rewritten.resources);
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::QueryResult> rows, conn_->Query(rewritten.sql));
  StatementResult result = StatementResult::Of(std::move(rows));
  result.resources = std::move(resources);
  return result;
}

Status Session::RecordError(const Status& status) {
  last_error_ = BoundError(status);
  return last_error_;
}

Result<std::optional<std::string>> Session::QueryScalar(std::string_view sql) {
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::QueryResult> result, conn_->Query(sql));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::DataChunk> chunk, result->Next());
  if (chunk == nullptr || chunk->size() == 0 || chunk->column_count() == 0 || chunk->IsNull(0, 0)) {
    return std::optional<std::string>();
  }
  return std::optional<std::string>(chunk->GetText(0, 0));
}

Result<std::optional<std::string>> Session::FindDatabase(std::string_view name) {
  const std::string literal = engine::QuoteLiteral(name);
  // An exact match wins over a case-insensitive one.
  return QueryScalar(
      "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = "
      "current_database() AND lower(schema_name) = lower(" +
      literal + ") ORDER BY schema_name = " + literal + " DESC LIMIT 1");
}

Status Session::Use(std::string_view database) {
  MR_ASSIGN_OR_RETURN(std::optional<std::string> canonical, FindDatabase(database));
  // Access first: a user who may not use a database is not told whether it exists.
  MR_RETURN_IF_ERROR(
      CheckObject(ObjectAction::kUse, canonical.value_or(std::string(database)), ""));
  if (!canonical) return UnknownDatabaseError(database);
  MR_RETURN_IF_ERROR(conn_->Execute("SET schema = " + engine::QuoteLiteral(*canonical)));
  database_ = std::move(canonical);
  return Status::Ok();
}

Status Session::ClearDatabase() {
  database_.reset();
  return conn_->Execute("SET schema = 'main'");
}

bool Session::autocommit() const {
  auto value = variables_.Get("autocommit");
  return !value.ok() || value->value != "0";
}

Status Session::BeginImplicitTransaction() {
  // in_transaction_ follows every statement that opens or ends the client's transaction, so
  // once one is open a statement costs no look at DuckDB's state.
  if (autocommit() || in_transaction_) return Status::Ok();
  // A handler's own transaction (a Doris CREATE TABLE) may be open: the statement joins it.
  // A BEGIN there would fail and abort it, so look first.
  MR_ASSIGN_OR_RETURN(bool open, conn_->InTransaction());
  if (open) return Status::Ok();
  MR_RETURN_IF_ERROR(conn_->Execute("BEGIN TRANSACTION"));
  in_transaction_ = true;
  return Status::Ok();
}

void Session::NoteTransactionState(std::string_view statement, const std::vector<Token>& tokens) {
  // SET autocommit = 1 commits.
  if (!ControlsTransaction(statement, tokens) &&
      (tokens.empty() || !IsKeyword(statement, tokens[0], "SET"))) {
    return;
  }
  // DuckDB refuses every statement but ROLLBACK in a transaction a failed statement aborted,
  // txid_current() included: a failed look means a transaction is still open.
  Result<bool> open = conn_->InTransaction();
  in_transaction_ = !open.ok() || *open;
}

}  // namespace millrace::sql
