#include "sql/router.h"

#include <algorithm>
#include <array>

#include "common/version.h"
#include "engine/duckdb_status.h"
#include "sql/builtin_statements.h"
#include "sql/mysql_errors.h"
#include "sql/mysql_information_schema.h"
#include "sql/translator.h"

namespace millrace::sql {
namespace {

constexpr std::array<std::string_view, 3> kAlwaysHidden = {"main", "pg_catalog", kMysqlInfoSchema};

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

std::string DefaultServerVersion() {
  return std::string("5.7.99-millrace-") + kMillraceVersion;
}

std::string DefaultVersionComment() {
  return std::string("Millrace ") + kMillraceVersion + " (DuckDB " + engine::LibraryVersion() + ")";
}

// ---------------------------------------------------------------------------------------------
// Router

Router::Router(engine::Database* db, RouterOptions options)
    : db_(db), options_(std::move(options)) {
  if (options_.server_version.empty()) options_.server_version = DefaultServerVersion();
  if (options_.version_comment.empty()) options_.version_comment = DefaultVersionComment();
  variables_ = DefaultSystemVariables(options_.server_version, options_.version_comment);
  variables_.insert(variables_.end(), options_.system_variables.begin(),
                    options_.system_variables.end());
  RegisterBuiltinStatements(*this);
}

Router::~Router() = default;

void Router::RegisterStatement(std::vector<std::string> keywords,
                               std::shared_ptr<StatementHandler> handler) {
  for (std::string& keyword : keywords)
    keyword = ToUpper(keyword);
  MutexLock lock(&mu_);
  for (auto& [existing, existing_handler] : handlers_) {
    if (existing == keywords) {
      existing_handler = std::move(handler);
      return;
    }
  }
  handlers_.emplace_back(std::move(keywords), std::move(handler));
}

std::shared_ptr<StatementHandler> Router::HandlerFor(std::vector<std::string> keywords) const {
  for (std::string& keyword : keywords)
    keyword = ToUpper(keyword);
  MutexLock lock(&mu_);
  for (const auto& [existing, handler] : handlers_) {
    if (existing == keywords) return handler;
  }
  return nullptr;
}

std::shared_ptr<StatementHandler> Router::FindHandler(std::string_view sql,
                                                      const std::vector<Token>& tokens) const {
  MutexLock lock(&mu_);
  std::shared_ptr<StatementHandler> best;
  size_t best_length = 0;
  for (const auto& [keywords, handler] : handlers_) {
    if (keywords.size() <= best_length || keywords.size() > tokens.size()) continue;
    bool match = true;
    for (size_t i = 0; i < keywords.size() && match; ++i) {
      match = IsKeyword(sql, tokens[i], keywords[i]);
    }
    if (match) {
      best = handler;
      best_length = keywords.size();
    }
  }
  return best;
}

void Router::SetGuard(std::shared_ptr<StatementGuard> guard) {
  MutexLock lock(&mu_);
  guard_ = std::move(guard);
}

std::shared_ptr<StatementGuard> Router::guard() const {
  MutexLock lock(&mu_);
  return guard_;
}

std::string Router::LoggableStatement(std::string_view statement) const {
  const std::vector<Token> tokens = SignificantTokens(statement);
  std::shared_ptr<StatementHandler> handler = FindHandler(statement, tokens);
  return handler != nullptr ? handler->ForLog(statement, tokens) : std::string(statement);
}

std::vector<std::string> Router::HiddenDatabases() const {
  std::vector<std::string> hidden(kAlwaysHidden.begin(), kAlwaysHidden.end());
  hidden.insert(hidden.end(), options_.hidden_databases.begin(), options_.hidden_databases.end());
  return hidden;
}

bool Router::IsHiddenDatabase(std::string_view name) const {
  const std::vector<std::string> hidden = HiddenDatabases();
  return std::any_of(hidden.begin(), hidden.end(),
                     [&](std::string_view h) { return EqualsIgnoreCase(h, name); });
}

Status Router::InstallMysqlInformationSchema() {
  MR_RETURN_IF_ERROR(db_->RegisterTableFunction(MakeMysqlTypesFunction()));
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, db_->Connect());
  MR_RETURN_IF_ERROR(sql::InstallMysqlInformationSchema(*conn, HiddenDatabases()));
  mysql_information_schema_ = true;
  return Status::Ok();
}

Result<std::unique_ptr<Session>> Router::NewSession(SessionInfo info) {
  MR_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, db_->Connect());
  return std::unique_ptr<Session>(new Session(this, std::move(conn), std::move(info)));
}

// ---------------------------------------------------------------------------------------------
// Session

Session::Session(Router* router, std::unique_ptr<engine::Connection> conn, SessionInfo info)
    : router_(router),
      conn_(std::move(conn)),
      connection_id_(conn_->id()),
      info_(std::move(info)),
      variables_(router->variables_) {
  MutexLock lock(&router_->mu_);
  router_->activities_[connection_id_] =
      Router::Activity{this, std::nullopt, "", router_->options_.clock->SteadyNow(), false};
}

Session::~Session() {
  MutexLock lock(&router_->mu_);
  router_->activities_.erase(connection_id_);
}

void Session::SetKillHook(std::function<void()> hook) {
  MutexLock lock(&router_->mu_);
  router_->activities_[connection_id_].on_kill = std::move(hook);
}

bool Session::killed() const {
  MutexLock lock(&router_->mu_);
  auto it = router_->activities_.find(connection_id_);
  return it != router_->activities_.end() && it->second.killed;
}

std::vector<ProcessInfo> Router::Processes() const {
  const Clock::SteadyTime now = options_.clock->SteadyNow();
  MutexLock lock(&mu_);
  std::vector<ProcessInfo> out;
  for (const auto& [connection, activity] : activities_) {
    const SessionInfo& info = activity.session->info();
    out.push_back(ProcessInfo{
        info.connection_id, info.user, info.host, activity.database, !activity.statement.empty(),
        std::chrono::duration_cast<std::chrono::seconds>(now - activity.since).count(),
        activity.statement});
  }
  std::sort(out.begin(), out.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) { return a.id < b.id; });
  return out;
}

Status Router::Kill(uint32_t id, bool end_session) {
  MutexLock lock(&mu_);
  for (auto& [connection, activity] : activities_) {
    if (activity.session->info().connection_id != id) continue;
    if (end_session) {
      activity.killed = true;
      if (activity.on_kill) activity.on_kill();
    }
    // Under mu_: the session cannot end meanwhile (~Session takes mu_), nor its statement
    // (SetActivity takes mu_ and clears the interrupt with the statement). Interrupting does
    // not wait for the statement. An idle session is not interrupted: the interrupt would
    // cancel its next statement.
    if (!activity.statement.empty()) activity.session->Interrupt();
    return Status::Ok();
  }
  return UnknownThreadError(id);
}

std::optional<std::string> Router::SessionUser(uint64_t connection_id) const {
  MutexLock lock(&mu_);
  auto it = activities_.find(connection_id);
  if (it == activities_.end()) return std::nullopt;
  return it->second.session->info().user;
}

StatementResult StatementResult::Of(std::unique_ptr<engine::QueryResult> rows) {
  StatementResult result;
  if (rows->returns_rows()) {
    result.rows = std::move(rows);
  } else {
    result.affected_rows = rows->rows_changed();
  }
  return result;
}

Result<StatementResult> Session::Execute(std::string_view statement) {
  const std::vector<Token> tokens = SignificantTokens(statement);
  if (tokens.empty()) {
    last_error_ = EmptyQueryError();
    return last_error_;
  }
  if (Status named = ScreenInternalNames(statement, tokens); !named.ok()) {
    last_error_ = named;
    return named;
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

Status Session::ScreenInternalNames(std::string_view statement,
                                    const std::vector<Token>& tokens) const {
  for (const Token& token : tokens) {
    if (token.kind == TokenKind::kPunct || token.kind == TokenKind::kNumber) continue;
    const std::string text = ToLower(Unquote(statement, token));
    for (const std::string& internal : router_->options().internal_databases) {
      if (text.find(ToLower(internal)) != std::string::npos) {
        return DatabaseAccessDeniedError(internal);
      }
    }
  }
  return Status::Ok();
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
  const Clock::SteadyTime now = router_->options_.clock->SteadyNow();
  MutexLock lock(&router_->mu_);
  Router::Activity& activity = router_->activities_[connection_id_];
  // A KILL QUERY of the statement that ends here must not reach the next one.
  if (statement.empty()) conn_->ClearInterrupt();
  if (!statement.empty()) {
    // A new statement's bound; an ended one keeps whether it timed out, for its error.
    activity.bound = bound;
    activity.timed_out = false;
    activity.deadline =
        bound.seconds > 0 ? now + std::chrono::seconds(bound.seconds) : Clock::SteadyTime::max();
  } else {
    activity.deadline = Clock::SteadyTime::max();
  }
  activity.statement = std::move(statement);
  activity.database = database_;
  activity.since = now;
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
  MutexLock lock(&router_->mu_);
  auto it = router_->activities_.find(connection_id_);
  if (it == router_->activities_.end() || !it->second.timed_out) return status;
  return QueryTimeoutError(it->second.bound.variable, it->second.bound.seconds);
}

int Router::InterruptOverdue() {
  const Clock::SteadyTime now = options_.clock->SteadyNow();
  int interrupted = 0;
  MutexLock lock(&mu_);
  for (auto& [connection, activity] : activities_) {
    if (activity.statement.empty() || activity.timed_out || now < activity.deadline) continue;
    // Under mu_, as Kill: the statement cannot end and the next begin meanwhile.
    activity.timed_out = true;
    activity.session->Interrupt();
    ++interrupted;
  }
  return interrupted;
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
  MR_ASSIGN_OR_RETURN(std::string translated, TranslateForDuckDb(statement, *this));
  auto before_call = [&](std::string_view name) {
    if (calls != nullptr) *calls = true;
    return guard == nullptr ? Status::Ok() : guard->CheckTableFunction(*this, name);
  };
  if (router_->mysql_information_schema_) {
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
  MR_ASSIGN_OR_RETURN(std::string translated, TranslateForDuckDb(query, *this));
  MR_ASSIGN_OR_RETURN(std::optional<std::string> scoped, guard->Scope(*this, translated));
  return guard->CheckStatement(*this, scoped ? *scoped : translated);
}

Result<StatementResult> Session::ExecuteDuckDb(std::string_view statement) {
  MR_ASSIGN_OR_RETURN(std::string translated, TranslateForDuckDb(statement, *this));
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
