// StatementGuard: the check a client's statement passes before Millrace runs it. The SQL
// layer asks; the access layer (users, privileges and the sandbox) answers.
//
// Contract
// - CheckNames is called first for every statement of a client that reaches DuckDB, on its
//   translation to DuckDB SQL before Millrace renames anything in it (the MySQL
//   information_schema views, the filtered ones): it refuses a statement that names a relation
//   of the server's internal databases, as DuckDB's parser reads the names.
// - Scope is called next for every statement of a client that reaches DuckDB, after
//   translation: it returns the statement the session's user runs instead (a user without
//   ADMIN_PRIV reads a filtered information_schema), or nullopt to run it as it is. What it
//   returns then goes through CheckStatement like any statement.
// - CheckStatement is called for every statement of a client that reaches DuckDB (not for
//   the SQL Millrace builds itself to answer SHOW, DESC, ...), after translation to DuckDB
//   SQL and before it runs. `sql` is what DuckDB would run, except that each of Millrace's
//   file-reading table functions (S3(), local()) is replaced by a stand-in of the same columns
//   that reads nothing, so the statement can be described without reading any file.
// - CheckTableFunction is called for each Doris-style table-function call (S3, local, jobs,
//   ...) before it is expanded, that is before any file is listed or fetched.
// - CheckObject is called by the statements Millrace answers itself, for the object they
//   show or change (`table` empty: the database itself), and for the database a session is
//   to use (USE, COM_INIT_DB, the handshake's database).
// - Visible filters what SHOW DATABASES and SHOW TABLES list.
// - Executed is called after every statement of a client, whatever it was and however it
//   ended (refused included).
// - A refusal is a Status whose detail is the MySQL error the client receives.
// - Thread-safety: called concurrently from every session.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace::sql {

class Session;

enum class ObjectAction { kShow, kCreate, kDrop, kUse };

class StatementGuard {
 public:
  virtual ~StatementGuard() = default;
  virtual Status CheckNames(Session& session, std::string_view sql) = 0;
  virtual Result<std::optional<std::string>> Scope(Session& session, std::string_view sql) = 0;
  virtual Status CheckStatement(Session& session, std::string_view sql) = 0;
  virtual Status CheckTableFunction(Session& session, std::string_view name) = 0;
  virtual Status CheckObject(Session& session, ObjectAction action, std::string_view database,
                             std::string_view table) = 0;
  virtual bool Visible(Session& session, std::string_view database, std::string_view table) = 0;
  // True when the session's user may see and kill every session (SHOW PROCESSLIST, KILL);
  // otherwise only its own.
  virtual bool MayManageSessions(Session& session) = 0;
  // After each statement of a client, with its outcome (for the audit log).
  virtual void Executed(Session& session, std::string_view statement, const Status& outcome) = 0;
};

}  // namespace millrace::sql
