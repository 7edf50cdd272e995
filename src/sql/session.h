// Session: one MySQL client's statements, routed by the router (router.h, whose header holds
// the routing model): handlers first, else the client's MySQL-dialect SQL translated
// (mysql_dialect.h), scoped and checked by the router's guard, and run on the session's own
// DuckDB connection.
//
// Contract
// - Used by one thread at a time (the connection's), except Interrupt(), which any thread may
//   call.
// - A StatementResult's rows must be consumed or destroyed before the session runs another
//   statement; its resources are released after the rows.
// - The session records each statement in the router's SessionActivities, for SHOW
//   PROCESSLIST, KILL and its bound (query_timeout, insert_timeout).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/database.h"
#include "sql/client_statement.h"
#include "sql/doris_table_functions.h"
#include "sql/lexer.h"
#include "sql/mysql_dialect.h"
#include "sql/router.h"
#include "sql/session_info.h"
#include "sql/session_variables.h"
#include "sql/statement_guard.h"

namespace millrace::sql {

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

  // Selects a database (USE d, COM_INIT_DB, the handshake's), if the guard allows the session
  // to use it (StatementGuard::CheckObject, kUse); unknown names are MySQL error 1049.
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
  friend class Router;  // NewSession: sessions are made by their router only
  Session(Router* router, std::unique_ptr<engine::Connection> conn, SessionInfo info);
  // Records what the session does now, for SHOW PROCESSLIST ("" when idle), and the bound
  // of a statement that starts (BoundOf).
  void SetActivity(std::string statement, StatementBound bound = {});
  // What the MySQL dialect translator reads of the session.
  DialectContext Dialect() const;
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
