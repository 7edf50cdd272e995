#include "sql/router.h"

#include <algorithm>
#include <array>

#include "common/version.h"
#include "engine/duckdb_status.h"
#include "sql/builtin_statements.h"
#include "sql/mysql_errors.h"
#include "sql/mysql_information_schema.h"
#include "sql/session.h"

namespace millrace::sql {
namespace {

constexpr std::array<std::string_view, 3> kAlwaysHidden = {"main", "pg_catalog", kMysqlInfoSchema};

}  // namespace

std::string DefaultServerVersion() {
  return std::string("5.7.99-millrace-") + kMillraceVersion;
}

std::string DefaultVersionComment() {
  return std::string("Millrace ") + kMillraceVersion + " (DuckDB " + engine::LibraryVersion() + ")";
}

Router::Router(engine::Database* db, RouterOptions options)
    : db_(db), options_(std::move(options)), activities_(options_.clock) {
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

std::vector<ProcessInfo> Router::Processes() const {
  return activities_.Processes();
}

Status Router::Kill(uint32_t id, bool end_session) {
  return activities_.Kill(id, end_session);
}

std::optional<std::string> Router::SessionUser(uint64_t connection_id) const {
  return activities_.User(connection_id);
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

int Router::InterruptOverdue() {
  return activities_.InterruptOverdue();
}

}  // namespace millrace::sql
