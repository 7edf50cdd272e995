// The SQL layer: routes the statements of MySQL clients to DuckDB, to built-in MySQL
// statements, or to registered statement handlers (job statements).
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

// Who is connected, for USER(), CONNECTION_ID() and messages.
struct SessionInfo {
  uint32_t connection_id = 0;
  std::string user = "root";
  std::string host = "localhost";
  bool tls = false;  // the connection is encrypted
};

// A client session as SHOW PROCESSLIST shows it.
struct ProcessInfo {
  uint32_t id = 0;  // the MySQL connection id
  std::string user;
  std::string host;
  std::optional<std::string> database;
  bool running = false;   // a statement runs ("Query"), or the session waits ("Sleep")
  int64_t seconds = 0;    // in that state
  std::string statement;  // the running statement as it may be logged; "" when idle
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
  // Schemas no client statement may name at all, in an identifier or a string (the job catalog,
  // which holds the jobs' credentials): such a statement is refused with MySQL error 1044.
  // Names produced by table-function expansions (jobs(), job_files()) are not affected.
  std::vector<std::string> internal_databases;
};

// "5.7.99-millrace-<version>": MySQL 5.7 wire behaviour, which every client accepts.
std::string DefaultServerVersion();
// "Millrace <version> (DuckDB <version>)".
std::string DefaultVersionComment();

// What bounds a statement's run: a session variable and its value in seconds (0: none).
struct StatementBound {
  std::string variable;
  int64_t seconds = 0;
};

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

  Result<std::unique_ptr<Session>> NewSession(SessionInfo info);
  // `statement` as a log line may show it (StatementHandler::ForLog of its handler).
  std::string LoggableStatement(std::string_view statement) const EXCLUDES(mu_);

  const RouterOptions& options() const { return options_; }
  // The user of the session whose DuckDB connection has `connection_id` (engine::Connection::
  // id()); nullopt for a connection that is no session's (Millrace's own).
  std::optional<std::string> SessionUser(uint64_t connection_id) const EXCLUDES(mu_);
  // The client sessions, by id.
  std::vector<ProcessInfo> Processes() const EXCLUDES(mu_);
  // KILL QUERY (`end_session` false): interrupts the statement session `id` runs, if any; it
  // fails with 1317 and the session goes on. KILL [CONNECTION]: the same, and the session ends
  // (its kill hook closes an idle connection at once; a running one closes after its answer).
  // NOT_FOUND (1094) when no session has that id.
  Status Kill(uint32_t id, bool end_session) EXCLUDES(mu_);
  // Interrupts every statement that has run past its bound (query_timeout or insert_timeout
  // of its session, taken when it started, measured on RouterOptions::clock, rows still being
  // sent included); it then fails with 3024 naming the variable. Returns how many it
  // interrupted. The server calls it a few times a second (mysql_server.h).
  int InterruptOverdue() EXCLUDES(mu_);
  bool IsHiddenDatabase(std::string_view name) const;
  // `main`, `pg_catalog`, the MySQL information_schema's views and
  // RouterOptions::hidden_databases.
  std::vector<std::string> HiddenDatabases() const;
  // Creates the MySQL-shaped information_schema (mysql_information_schema.h) over the schemas
  // of HiddenDatabases() and routes client queries to it from then on. Called at start, before
  // the first session.
  Status InstallMysqlInformationSchema();

 private:
  friend class Session;
  // The handler registered for the longest keyword prefix of `tokens`, or null.
  std::shared_ptr<StatementHandler> FindHandler(std::string_view sql,
                                                const std::vector<Token>& tokens) const
      EXCLUDES(mu_);

  engine::Database* db_;
  RouterOptions options_;
  std::atomic<bool> mysql_information_schema_{false};
  std::vector<SystemVariable> variables_;
  TableFunctionRegistry table_functions_;
  mutable Mutex mu_;
  std::vector<std::pair<std::vector<std::string>, std::shared_ptr<StatementHandler>>> handlers_
      GUARDED_BY(mu_);
  std::shared_ptr<StatementGuard> guard_ GUARDED_BY(mu_);
  // What each session is doing (SHOW PROCESSLIST, KILL).
  struct Activity {
    Session* session = nullptr;
    std::optional<std::string> database;
    std::string statement;  // "" when idle
    Clock::SteadyTime since;
    bool killed = false;
    std::function<void()> on_kill;  // Session::SetKillHook
    // The statement's bound (Session::BoundOf): past `deadline` it is interrupted and fails
    // with 3024 naming `bound`.
    Clock::SteadyTime deadline = Clock::SteadyTime::max();
    StatementBound bound;
    bool timed_out = false;
  };
  // By the session's DuckDB connection id (engine::Connection::id(), SessionUser's key).
  std::map<uint64_t, Activity> activities_ GUARDED_BY(mu_);
};

class Session {
 public:
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs one statement (see SplitStatements for multi-statement text). Records the outcome
  // for SHOW WARNINGS. A statement that returns rows runs (SHOW PROCESSLIST, KILL QUERY) until
  // its result is released, which must happen before the session's next statement and before
  // the session ends.
  Result<StatementResult> Execute(std::string_view statement);
  // Prepares one statement for a client, and runs it with bound values (client_statement.h).
  Result<std::unique_ptr<ClientStatement>> Prepare(std::string_view statement);
  Result<StatementResult> ExecutePrepared(ClientStatement& statement,
                                          const std::vector<ParamValue>& params);
  // Runs the client's own MySQL-dialect statement on DuckDB (step 2 of the routing): it is
  // translated, its table-function calls expanded, and it passes the router's guard before it
  // runs. For the fall-through and for handlers that hand a client's statement to DuckDB.
  Result<StatementResult> ExecuteClientSql(std::string_view statement);
  // Runs SQL a handler built itself on DuckDB after translation, skipping the handlers and the
  // guard: the handler answers for what its SQL reads.
  Result<StatementResult> ExecuteDuckDb(std::string_view statement);
  // Checks a client's query as ExecuteClientSql would (translated, passed to the guard)
  // without running it: for client text a handler puts into SQL it runs itself (the WHERE of
  // SHOW ... WHERE). OK when there is no guard.
  Status CheckClientQuery(std::string_view query);
  // Asks the router's guard about an object a handler shows or changes; OK without a guard.
  Status CheckObject(ObjectAction action, std::string_view database, std::string_view table);
  // Whether SHOW lists the object; true without a guard.
  bool Visible(std::string_view database, std::string_view table);
  // The guard's StatementGuard::MayManageSessions; true without a guard.
  bool MayManageSessions();
  // Records an error raised after Execute returned (while streaming rows), and returns the
  // error the client is to see (a statement interrupted by its bound: 3024, as Execute's).
  Status RecordError(const Status& status);

  // Selects a database (USE d); unknown names are MySQL error 1049.
  Status Use(std::string_view database);
  const std::optional<std::string>& database() const { return database_; }
  // Forgets the current database (it was dropped); unqualified names go back to `main`.
  Status ClearDatabase();

  // The canonical name of an existing database (names match case-insensitively), or nullopt.
  Result<std::optional<std::string>> FindDatabase(std::string_view name);
  // The first cell of the first row of `sql`, or nullopt when there is no row or it is NULL.
  Result<std::optional<std::string>> QueryScalar(std::string_view sql);

  SessionVariables& variables() { return variables_; }
  const SessionInfo& info() const { return info_; }
  Router& router() { return *router_; }
  engine::Connection& connection() { return *conn_; }
  bool autocommit() const;
  // With autocommit = 0, MySQL's implicit transaction: opens one before a client statement
  // that runs in DuckDB (ExecuteClientSql, ExecutePrepared) when none is open; it stays open
  // until COMMIT, ROLLBACK, SET autocommit = 1 or the session's end (rolled back).
  Status BeginImplicitTransaction();
  // Whether a transaction is open on the session (the protocol's SERVER_STATUS_IN_TRANS), as
  // of the last statement that could open or end one.
  bool in_transaction() const { return in_transaction_; }
  // After `statement`: reads whether a transaction is open when the statement could have
  // opened or ended one.
  void NoteTransactionState(std::string_view statement, const std::vector<Token>& tokens);
  // The last statement's error, for SHOW WARNINGS/ERRORS; OK when it succeeded.
  const Status& last_error() const { return last_error_; }

  // Cancels the running statement from any thread; it fails with MySQL error 1317.
  void Interrupt() { conn_->Interrupt(); }
  // True once KILL [CONNECTION] named this session: the server closes it.
  bool killed() const;
  // Called (from the killing session's thread, under the router's lock: it must not block)
  // when KILL [CONNECTION] names this session, so the server can close an idle connection.
  void SetKillHook(std::function<void()> hook);

 private:
  friend class Router;
  Session(Router* router, std::unique_ptr<engine::Connection> conn, SessionInfo info);
  // Records what the session does now, for SHOW PROCESSLIST ("" when idle), and the bound
  // of a statement that starts (BoundOf).
  void SetActivity(std::string statement, StatementBound bound = {});
  // insert_timeout for a statement that writes rows (INSERT, REPLACE, UPDATE, DELETE, MERGE),
  // query_timeout for any other, as Doris bounds them; from the session's variables.
  // `tokens` are those of `statement`.
  StatementBound BoundOf(const std::vector<Token>& tokens, std::string_view statement) const;
  // `status`, or 3024 naming the bound when the statement ran past it and was interrupted.
  Status BoundError(const Status& status) const;
  // The end of a statement begun with SetActivity: records its error (unless
  // `keep_diagnostics`), tells the guard, and ends the activity when its rows are released.
  Result<StatementResult> Finish(std::string_view statement, Result<StatementResult> result,
                                 bool keep_diagnostics);
  // Translates, scopes and expands a client's statement, and has the guard check
  // `rewritten.check_sql`. `calls`, when given, is set when the statement called a table
  // function.
  Result<TableFunctionRegistry::Rewritten> Rewrite(std::string_view statement,
                                                   bool* calls = nullptr);
  // Ends the session's statement when its rows are released.
  class StatementEnd final : public StatementResources {
   public:
    explicit StatementEnd(Session* session) : session_(session) {}
    ~StatementEnd() override { session_->SetActivity(""); }

   private:
    Session* session_;
  };
  // Runs an expanded statement; its resources live until its rows are consumed.
  Result<StatementResult> Run(TableFunctionRegistry::Rewritten rewritten);
  // Runs a client's expanded statement as exactly one DuckDB statement (prepared from
  // `rewritten.sql`, of the kind of `rewritten.check_sql`); anything else is refused unrun.
  Result<StatementResult> RunOne(TableFunctionRegistry::Rewritten rewritten);
  // Refuses a statement whose words name an internal database (the job catalog, the routed
  // information_schema): a first screen on the text, for Millrace's statements too; the
  // guard refuses the same on DuckDB's plan.
  Status ScreenInternalNames(std::string_view statement, const std::vector<Token>& tokens) const;

  Router* router_;
  std::unique_ptr<engine::Connection> conn_;
  const uint64_t connection_id_;  // conn_->id(), read once
  SessionInfo info_;
  SessionVariables variables_;
  std::optional<std::string> database_;
  Status last_error_;
  bool in_transaction_ = false;
};

}  // namespace millrace::sql
