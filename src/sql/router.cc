#include "sql/router.h"

#include <algorithm>
#include <array>
#include <set>

#include "common/version.h"
#include "sql/builtin_statements.h"
#include "sql/mysql_errors.h"
#include "sql/mysql_information_schema.h"

namespace millrace::sql {
namespace {

constexpr std::array<std::string_view, 3> kAlwaysHidden = {"main", "pg_catalog", kMysqlInfoSchema};

// Keywords that end a select-list item.
constexpr std::array<std::string_view, 12> kItemTerminators = {
    "FROM",  "LIMIT", "WHERE",  "ORDER",     "GROUP",  "HAVING",
    "UNION", "INTO",  "EXCEPT", "INTERSECT", "WINDOW", "QUALIFY"};

// Clauses after which a depth's select list is over.
bool EndsSelectList(std::string_view sql, const Token& token) {
  return std::any_of(kItemTerminators.begin(), kItemTerminators.end(),
                     [&](std::string_view kw) { return IsKeyword(sql, token, kw); });
}

std::string Literal(const std::optional<std::string>& value, bool numeric) {
  if (!value) return "CAST(NULL AS VARCHAR)";
  if (numeric) return *value;
  return engine::QuoteLiteral(*value);
}

// Whether the statement opens or ends a transaction itself (BEGIN, START TRANSACTION, COMMIT,
// ROLLBACK, END, ABORT): autocommit = 0 opens none before it.
bool ControlsTransaction(std::string_view sql, const std::vector<Token>& tokens) {
  static constexpr std::string_view kKeywords[] = {"BEGIN",    "START", "COMMIT",
                                                   "ROLLBACK", "END",   "ABORT"};
  return !tokens.empty() &&
         std::any_of(std::begin(kKeywords), std::end(kKeywords),
                     [&](std::string_view keyword) { return IsKeyword(sql, tokens[0], keyword); });
}

// Rewrites the MySQL-only lexical forms of one statement into DuckDB SQL.
class Translator {
 public:
  Translator(std::string_view sql, Session& session)
      : sql_(sql), session_(session), tokens_(Tokenize(sql)) {}

  Result<std::string> Run() {
    std::vector<bool> in_select_list = {false};  // per parenthesis depth
    std::vector<bool> in_cast = {false};         // per parenthesis depth: CAST( ... )
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Token& token = tokens_[i];
      const std::string_view text = token.Text(sql_);
      switch (token.kind) {
        case TokenKind::kComment:
          if (text.front() == '#') Replace(token.begin, token.end, " ");
          continue;
        case TokenKind::kBacktickIdent:
          Replace(token.begin, token.end, engine::QuoteIdentifier(Unquote(sql_, token)));
          continue;
        case TokenKind::kVariable:
          if (text.starts_with("@@")) {
            MR_ASSIGN_OR_RETURN(SystemVariable variable, Variable(text.substr(2)));
            Substitute(i, i, Literal(variable.value, variable.numeric), in_select_list.back());
          }
          continue;
        case TokenKind::kString:
          // MySQL names a literal column after its value ('abc' -> abc), DuckDB after its
          // source text ('abc').
          if (text.front() == '\'' && !token.unterminated && in_select_list.back() &&
              IsWholeItem(i, i)) {
            const std::string value = Unquote(sql_, token);
            if (!value.empty())
              Replace(token.begin, token.end,
                      std::string(text) + " AS " + engine::QuoteIdentifier(value));
          }
          continue;
        case TokenKind::kPunct:
          if (convert_commas_.erase(i) > 0) {
            Replace(token.begin, token.end, " AS ");
            i = MySqlIntegerCast(i);
            continue;
          }
          if (text == "(") {
            in_select_list.push_back(false);
            const size_t before = PrevSignificant(i);
            in_cast.push_back(before < tokens_.size() &&
                              (IsKeyword(sql_, tokens_[before], "CAST") ||
                               IsKeyword(sql_, tokens_[before], "TRY_CAST")));
          }
          if (text == ")" && in_select_list.size() > 1) {
            in_select_list.pop_back();
            in_cast.pop_back();
          }
          continue;
        case TokenKind::kWord: {
          // A charset introducer (_utf8mb4'x', _binary'x', as drivers that interpolate
          // parameters write them): a text one goes, a binary one makes the string a BLOB.
          if (text.size() > 1 && text.front() == '_' && i + 1 < tokens_.size() &&
              tokens_[i + 1].kind == TokenKind::kString && !tokens_[i + 1].unterminated &&
              IsCharsetIntroducer(text)) {
            const Token& literal = tokens_[i + 1];
            const std::string_view quoted = literal.Text(sql_);
            Replace(token.begin, literal.end,
                    EqualsIgnoreCase(text, "_binary") ? "CAST(" + std::string(quoted) + " AS BLOB)"
                                                      : std::string(quoted));
            ++i;
            continue;
          }
          if (IsKeyword(sql_, token, "SELECT")) in_select_list.back() = true;
          if (EndsSelectList(sql_, token)) in_select_list.back() = false;
          if ((IsKeyword(sql_, token, "TRUE") || IsKeyword(sql_, token, "FALSE")) &&
              in_select_list.back() && IsWholeItem(i, i)) {
            Replace(token.begin, token.end,
                    std::string(text) + " AS " + engine::QuoteIdentifier(text));
            continue;
          }
          if (IsKeyword(sql_, token, "LIMIT")) {
            i = MySqlLimit(i);
            continue;
          }
          if (IsKeyword(sql_, token, "AS") && in_cast.back()) {
            i = MySqlIntegerCast(i);
            continue;
          }
          if (IsKeyword(sql_, token, "CONVERT")) MySqlConvert(i);
          size_t close = 0;
          std::optional<std::string> literal = SessionFunction(i, &close);
          if (literal) {
            Substitute(i, close, *literal, in_select_list.back());
            i = close;
          }
          continue;
        }
        default:
          continue;
      }
    }
    out_.append(sql_.substr(copied_));
    return std::move(out_);
  }

 private:
  Result<SystemVariable> Variable(std::string_view name) {
    for (std::string_view scope : {"session.", "global.", "local."}) {
      if (name.size() > scope.size() && StartsWithIgnoreCase(name, scope)) {
        name.remove_prefix(scope.size());
        break;
      }
    }
    return session_.variables().Get(name);
  }

  // MySQL's CAST(x AS SIGNED [INTEGER]) and AS UNSIGNED [INTEGER] become BIGINT and UBIGINT.
  // Returns the index of the last token consumed.
  size_t MySqlIntegerCast(size_t as) {
    const size_t type = NextSignificant(as);
    if (type >= tokens_.size()) return as;
    const bool is_signed = IsKeyword(sql_, tokens_[type], "SIGNED");
    if (!is_signed && !IsKeyword(sql_, tokens_[type], "UNSIGNED")) return as;
    size_t last = type;
    const size_t next = NextSignificant(type);
    if (next < tokens_.size() &&
        (IsKeyword(sql_, tokens_[next], "INTEGER") || IsKeyword(sql_, tokens_[next], "INT"))) {
      last = next;
    }
    Replace(tokens_[type].begin, tokens_[last].end, is_signed ? "BIGINT" : "UBIGINT");
    return last;
  }

  // MySQL's CONVERT(x, type) becomes CAST(x AS type): the word is replaced now, the comma
  // when the loop reaches it (convert_commas_). CONVERT(x USING charset) stays.
  void MySqlConvert(size_t convert) {
    const size_t open = NextSignificant(convert);
    if (open >= tokens_.size() || tokens_[open].Text(sql_) != "(") return;
    // x.convert(...) is someone's function, not MySQL's CONVERT.
    const size_t before = PrevSignificant(convert);
    if (before < tokens_.size() && tokens_[before].Text(sql_) == ".") return;
    int depth = 0;  // of parentheses, and of DuckDB's [list] and {struct} literals
    for (size_t j = open; j < tokens_.size(); ++j) {
      if (tokens_[j].kind != TokenKind::kPunct) continue;
      const std::string_view text = tokens_[j].Text(sql_);
      if (text == "(" || text == "[" || text == "{") ++depth;
      if ((text == ")" || text == "]" || text == "}") && --depth == 0) return;
      if (text == "," && depth == 1) {
        Replace(tokens_[convert].begin, tokens_[convert].end, "CAST");
        convert_commas_.insert(j);
        return;
      }
    }
  }

  // MySQL's `LIMIT offset, count` becomes `LIMIT count OFFSET offset`. Returns the index of
  // the last token consumed.
  size_t MySqlLimit(size_t limit) {
    const size_t offset = NextSignificant(limit);
    const size_t comma = NextSignificant(offset);
    const size_t count = NextSignificant(comma);
    if (count >= tokens_.size() || tokens_[offset].kind != TokenKind::kNumber ||
        tokens_[comma].Text(sql_) != "," || tokens_[count].kind != TokenKind::kNumber) {
      return limit;
    }
    Replace(tokens_[offset].begin, tokens_[count].end,
            std::string(tokens_[count].Text(sql_)) + " OFFSET " +
                std::string(tokens_[offset].Text(sql_)));
    return count;
  }

  // DATABASE() and friends: the literal replacing tokens [i, *close].
  std::optional<std::string> SessionFunction(size_t i, size_t* close) {
    const size_t open = NextSignificant(i);
    const size_t end = NextSignificant(open);
    if (end >= tokens_.size() || tokens_[open].Text(sql_) != "(" ||
        tokens_[end].Text(sql_) != ")") {
      return std::nullopt;
    }
    const size_t prev = PrevSignificant(i);
    if (prev < tokens_.size() && tokens_[prev].Text(sql_) == ".") return std::nullopt;
    const std::string name = ToUpper(tokens_[i].Text(sql_));
    const SessionInfo& info = session_.info();
    std::optional<std::string> literal;
    if (name == "DATABASE" || name == "SCHEMA") {
      literal = Literal(session_.database(), false);
    } else if (name == "USER" || name == "SESSION_USER" || name == "SYSTEM_USER") {
      literal = engine::QuoteLiteral(info.user + "@" + info.host);
    } else if (name == "CURRENT_USER") {
      literal = engine::QuoteLiteral(info.user + "@%");
    } else if (name == "CONNECTION_ID") {
      literal = std::to_string(info.connection_id);
    } else if (name == "VERSION") {
      literal = engine::QuoteLiteral(session_.router().options().server_version);
    } else if (name == "LAST_INSERT_ID") {
      literal = "0";
    }
    if (literal) *close = end;
    return literal;
  }

  // Replaces tokens [first, last] by `literal`, named after the original text when the
  // tokens form a whole select-list item (as MySQL names such columns).
  // MySQL's charset introducers that drivers write before string literals.
  static bool IsCharsetIntroducer(std::string_view word) {
    for (std::string_view name :
         {"_binary", "_utf8mb4", "_utf8mb3", "_utf8", "_latin1", "_ascii"}) {
      if (EqualsIgnoreCase(word, name)) return true;
    }
    return false;
  }

  void Substitute(size_t first, size_t last, const std::string& literal, bool in_select_list) {
    const size_t begin = tokens_[first].begin;
    const size_t end = tokens_[last].end;
    std::string replacement = literal;
    if (in_select_list && IsWholeItem(first, last)) {
      replacement += " AS " + engine::QuoteIdentifier(sql_.substr(begin, end - begin));
    }
    Replace(begin, end, replacement);
  }

  bool IsWholeItem(size_t first, size_t last) const {
    const size_t prev = PrevSignificant(first);
    if (prev >= tokens_.size()) return false;
    const Token& p = tokens_[prev];
    if (!(IsKeyword(sql_, p, "SELECT") || IsKeyword(sql_, p, "DISTINCT") ||
          IsKeyword(sql_, p, "ALL") || p.Text(sql_) == ",")) {
      return false;
    }
    const size_t next = NextSignificant(last);
    if (next >= tokens_.size()) return true;
    const Token& n = tokens_[next];
    const std::string_view t = n.Text(sql_);
    return t == "," || t == ";" || t == ")" || EndsSelectList(sql_, n);
  }

  size_t NextSignificant(size_t i) const {
    do {
      ++i;
    } while (i < tokens_.size() && tokens_[i].kind == TokenKind::kComment);
    return i;
  }
  // tokens_.size() when there is none.
  size_t PrevSignificant(size_t i) const {
    while (i > 0) {
      --i;
      if (tokens_[i].kind != TokenKind::kComment) return i;
    }
    return tokens_.size();
  }

  void Replace(size_t begin, size_t end, std::string_view text) {
    out_.append(sql_.substr(copied_, begin - copied_));
    out_.append(text);
    copied_ = end;
  }

  std::string_view sql_;
  Session& session_;
  std::vector<Token> tokens_;
  std::string out_;
  size_t copied_ = 0;
  std::set<size_t> convert_commas_;  // the commas of the CONVERT(x, type) being read
};

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
  SetActivity(handler != nullptr ? handler->ForLog(statement, tokens) : std::string(statement));
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

void Session::SetActivity(std::string statement) {
  const Clock::SteadyTime now = router_->options_.clock->SteadyNow();
  MutexLock lock(&router_->mu_);
  Router::Activity& activity = router_->activities_[connection_id_];
  // A KILL QUERY of the statement that ends here must not reach the next one.
  if (statement.empty()) conn_->ClearInterrupt();
  activity.statement = std::move(statement);
  activity.database = database_;
  activity.since = now;
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
  if (const std::vector<Token> tokens = SignificantTokens(statement);
      !tokens.empty() && IsKeyword(statement, tokens[0], "EXPLAIN")) {
    size_t next = 1;
    std::string prefix = "EXPLAIN ";
    if (next < tokens.size() && IsKeyword(statement, tokens[next], "ANALYZE")) {
      ++next;
      prefix = "EXPLAIN ANALYZE ";
    }
    if (next >= tokens.size()) return SyntaxError("EXPLAIN of nothing");
    MR_ASSIGN_OR_RETURN(TableFunctionRegistry::Rewritten explained,
                        Rewrite(statement.substr(tokens[next].begin), calls));
    explained.sql = prefix + explained.sql;
    explained.check_sql = prefix + explained.check_sql;
    return explained;
  }
  const std::shared_ptr<StatementGuard> guard = router_->guard();
  MR_ASSIGN_OR_RETURN(std::string translated, Translator(statement, *this).Run());
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
  MR_ASSIGN_OR_RETURN(std::string translated, Translator(query, *this).Run());
  MR_ASSIGN_OR_RETURN(std::optional<std::string> scoped, guard->Scope(*this, translated));
  return guard->CheckStatement(*this, scoped ? *scoped : translated);
}

Result<StatementResult> Session::ExecuteDuckDb(std::string_view statement) {
  MR_ASSIGN_OR_RETURN(std::string translated, Translator(statement, *this).Run());
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

void Session::RecordError(const Status& status) {
  last_error_ = status;
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
