// The SQL layer: routes the statements of MySQL clients to DuckDB, to built-in MySQL
// statements, or to registered statement handlers (job statements). Three files: the router
// (here: the handlers, the guard, the options and the sessions' activities), the session
// (session.h: one client's statements), and the MySQL dialect (mysql_dialect.h).
//
// Model
// - A database is a DuckDB schema of the one database file. A session starts with no database
//   selected (DATABASE() is NULL) unless the client names one at connect; unqualified names then
//   resolve in DuckDB's `main` schema, which is hidden from SHOW DATABASES along with
//   `pg_catalog` and the schemas given in RouterOptions::hidden_databases. USE d selects d for
//   everything unqualified (DuckDB `SET schema`).
// - Routing of one statement, by its leading keywords (case-insensitive, comments skipped):
//   1. a registered StatementHandler whose keywords match (the longest match wins). The
//      built-ins are registered the same way: USE, CREATE/DROP DATABASE|SCHEMA, SHOW
//      DATABASES|TABLES|TABLE STATUS|COLUMNS|INDEX|ENGINES|CREATE TABLE|VARIABLES|WARNINGS|
//      COLLATION|CHARACTER SET..., DESC/DESCRIBE t, SET of MySQL session variables, BEGIN,
//      START TRANSACTION [READ ONLY|READ WRITE|WITH CONSISTENT SNAPSHOT], COMMIT/ROLLBACK
//      without a transaction.
//   2. everything else is DuckDB SQL, translated first: `backtick` identifiers become "double
//      quoted" ones, `# comments` are dropped, @@system_variables and the session functions
//      DATABASE(), SCHEMA(), USER(), CURRENT_USER(), CONNECTION_ID(), VERSION(),
//      LAST_INSERT_ID() become literals (named as MySQL names the column), literal select
//      items are named as MySQL names them ('abc' -> abc), `LIMIT offset, count` becomes
//      `LIMIT count OFFSET offset`, CAST(x AS SIGNED|UNSIGNED [INTEGER]) becomes BIGINT|UBIGINT
//      and CONVERT(x, type) CAST(x AS type), a SELECT of information_schema.<view> reads the
//      MySQL-shaped view (mysql_information_schema.h), and Doris-style table-function calls are
//      expanded (doris_table_functions.h). Double quotes keep DuckDB's meaning (identifiers);
//      strings are single-quoted and backslashes in them are plain characters (MySQL's
//      NO_BACKSLASH_ESCAPES, which the server announces so client libraries escape quotes by
//      doubling them).
// - Transactions: autocommit = 0 opens one before a client statement that runs in DuckDB
//   (Session::BeginImplicitTransaction); in_transaction() follows it for the protocol's status.
// - Errors are Status values whose message is DuckDB's own or MySQL's wording and whose detail
//   says what they are (DuckDB's error type and reason, or a MySQL errno); ClassifyError
//   (mysql_errors.h) gives the MySQL error number and SQLSTATE from that detail.
//
// Thread-safety
// - Router is shared by all sessions; registration may happen while sessions run.
// - A Session belongs to one client connection and is used by one thread at a time, except
//   Interrupt(), which any thread may call.
//
// Ownership
// - The Router borrows the engine::Database, which must outlive the Router and its sessions.
// - A StatementResult's rows must be consumed or destroyed before the session runs another
//   statement; its resources are released after the rows.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "engine/database.h"
#include "sql/client_statement.h"
#include "sql/doris_table_functions.h"
#include "sql/lexer.h"
#include "sql/session_activities.h"
#include "sql/session_info.h"
#include "sql/session_variables.h"
#include "sql/statement_guard.h"

namespace millrace::sql {

struct StatementResult {
  // Set when the statement returns rows (streamed); null for statements answered by OK.
  std::unique_ptr<engine::QueryResult> rows;
  int64_t affected_rows = 0;
  // Kept alive until the rows are consumed (downloaded files of a table function...); the
  // destructor releases the rows first.
  std::vector<std::unique_ptr<StatementResources>> resources;

  StatementResult() = default;
  // A DuckDB result: its rows when it returns rows, else the count of rows it changed.
  static StatementResult Of(std::unique_ptr<engine::QueryResult> rows);
  StatementResult(StatementResult&&) = default;
  StatementResult& operator=(StatementResult&&) = default;
  ~StatementResult() { rows.reset(); }
};

class Session;

struct StatementContext {
  std::string_view sql;              // one statement, without its ';'
  const std::vector<Token>& tokens;  // its significant tokens (comments dropped)
  Session& session;
};

// Executes the statements that start with the keywords it is registered under.
class StatementHandler {
 public:
  virtual ~StatementHandler() = default;
  virtual Result<StatementResult> Execute(const StatementContext& ctx) = 0;
  // True for statements that report diagnostics (SHOW WARNINGS) and so must not reset them.
  virtual bool PreservesDiagnostics() const { return false; }
  // The statement as a log line may show it: a handler of statements that carry a password
  // returns it with the password masked. The statement may be malformed.
  virtual std::string ForLog(std::string_view sql, const std::vector<Token>& tokens) const {
    return std::string(sql);
  }
};

struct RouterOptions {
  // Time for SHOW PROCESSLIST (how long a session has been in its state); borrowed.
  Clock* clock = Clock::Real();
  std::string server_version;   // reported as @@version and in the handshake
  std::string version_comment;  // @@version_comment
  // Extra or overriding system variables (the server's port, timeouts, packet size).
  std::vector<SystemVariable> system_variables;
  // Schemas kept out of SHOW DATABASES and protected from DROP DATABASE.
  std::vector<std::string> hidden_databases;
};

// "5.7.99-millrace-<version>": MySQL 5.7 wire behaviour, which every client accepts.
std::string DefaultServerVersion();
// "Millrace <version> (DuckDB <version>)".
std::string DefaultVersionComment();

class Router {
 public:
  Router(engine::Database* db, RouterOptions options);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Routes statements starting with `keywords` (e.g. {"CREATE", "JOB"}) to `handler`,
  // replacing an earlier registration of the same keywords.
  void RegisterStatement(std::vector<std::string> keywords,
                         std::shared_ptr<StatementHandler> handler) EXCLUDES(mu_);
  // The handler registered for exactly `keywords`, or null: a module replacing a handler can
  // hand the statements it does not answer to the one it replaced.
  std::shared_ptr<StatementHandler> HandlerFor(std::vector<std::string> keywords) const
      EXCLUDES(mu_);
  TableFunctionRegistry& table_functions() { return table_functions_; }
  // Every client statement passes `guard` from now on (statement_guard.h); null: none.
  void SetGuard(std::shared_ptr<StatementGuard> guard) EXCLUDES(mu_);
  std::shared_ptr<StatementGuard> guard() const EXCLUDES(mu_);

  // A session for a client (session.h).
  Result<std::unique_ptr<Session>> NewSession(SessionInfo info);
  // `statement` as a log line may show it (StatementHandler::ForLog of its handler).
  std::string LoggableStatement(std::string_view statement) const EXCLUDES(mu_);

  const RouterOptions& options() const { return options_; }
  // The system variables a new session starts from.
  const std::vector<SystemVariable>& system_variables() const { return variables_; }
  // Whether client queries of information_schema read the MySQL-shaped views
  // (InstallMysqlInformationSchema has run).
  bool routes_mysql_information_schema() const { return mysql_information_schema_; }
  // What the sessions are doing (SHOW PROCESSLIST, KILL, statement bounds).
  SessionActivities& activities() { return activities_; }
  // The handler registered for the longest keyword prefix of `tokens`, or null.
  std::shared_ptr<StatementHandler> FindHandler(std::string_view sql,
                                                const std::vector<Token>& tokens) const
      EXCLUDES(mu_);
  // The user of the session whose DuckDB connection has `connection_id` (engine::Connection::
  // id()); nullopt for a connection that is no session's (Millrace's own).
  std::optional<std::string> SessionUser(uint64_t connection_id) const;
  // The client sessions, by id.
  std::vector<ProcessInfo> Processes() const;
  // KILL QUERY (`end_session` false): interrupts the statement session `id` runs, if any; it
  // fails with 1317 and the session goes on. KILL [CONNECTION]: the same, and the session ends
  // (its kill hook closes an idle connection at once; a running one closes after its answer).
  // NOT_FOUND (1094) when no session has that id.
  Status Kill(uint32_t id, bool end_session);
  // Interrupts every statement that has run past its bound (query_timeout or insert_timeout
  // of its session, taken when it started, measured on RouterOptions::clock, rows still being
  // sent included); it then fails with 3024 naming the variable. Returns how many it
  // interrupted. The server calls it a few times a second (mysql_server.h).
  int InterruptOverdue();
  bool IsHiddenDatabase(std::string_view name) const;
  // `main`, `pg_catalog`, the MySQL information_schema's views and
  // RouterOptions::hidden_databases.
  std::vector<std::string> HiddenDatabases() const;
  // Creates the MySQL-shaped information_schema (mysql_information_schema.h) over the schemas
  // of HiddenDatabases() and routes client queries to it from then on. Called at start, before
  // the first session.
  Status InstallMysqlInformationSchema();

 private:
  engine::Database* db_;
  RouterOptions options_;
  std::atomic<bool> mysql_information_schema_{false};
  std::vector<SystemVariable> variables_;
  TableFunctionRegistry table_functions_;
  mutable Mutex mu_;
  std::vector<std::pair<std::vector<std::string>, std::shared_ptr<StatementHandler>>> handlers_
      GUARDED_BY(mu_);
  std::shared_ptr<StatementGuard> guard_ GUARDED_BY(mu_);
  SessionActivities activities_;
};

}  // namespace millrace::sql
