// The embedded engine: an RAII C++ layer over DuckDB's C API.
//
// Contract
// - Database owns a DuckDB instance (a file, or in memory when the path is empty or
//   ":memory:"). It must outlive every Connection made from it.
// - Connection is one DuckDB session: its own transaction state and settings. A Connection is
//   used by one thread at a time; many Connections of one Database may run concurrently.
//   Interrupt() is the exception: any thread may call it to cancel the running statement.
// - Every DuckDB failure arrives as a Status whose message is DuckDB's own (e.g.
//   "Catalog Error: Table with name t does not exist!") and whose detail says what it is:
//   ErrorDetail{kDuckDb, duckdb_error_type, DuckDbReason} (engine/duckdb_status.h), so callers
//   branch on the detail, never on the text. The code follows from the type and reason
//   (parser/binder errors: INVALID_ARGUMENT, catalog: NOT_FOUND for a missing entry or
//   ALREADY_EXISTS for an existing one, constraint: FAILED_PRECONDITION, transaction conflict:
//   ABORTED, interrupt: CANCELLED, I/O: IO_ERROR, out of memory: RESOURCE_EXHAUSTED).
// - Transaction rolls back on destruction unless committed; nothing of an abandoned
//   transaction is visible.
// - The library never throws: DuckDB's C API reports errors as values.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"
#include "engine/query_result.h"
#include "engine/table_function.h"

namespace millrace::engine {

struct DatabaseOptions {
  std::string path;          // "" or ":memory:" for an in-memory database
  std::string memory_limit;  // e.g. "1GB"; empty: DuckDB's default (80% of RAM)
  int threads = 0;           // 0: DuckDB's default (one per core)
  bool read_only = false;
  // DuckDB's preserve_insertion_order for every connection (false: results of queries
  // without ORDER BY, and loads, may come in any order; faster).
  bool preserve_insertion_order = true;
};

class Connection;

// Whether a registered table function is among those RegisteredTableFunctions lists.
enum class FunctionVisibility { kListed, kInternal };

class Database {
 public:
  static Result<std::unique_ptr<Database>> Open(const DatabaseOptions& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Result<std::unique_ptr<Connection>> Connect();

  // Makes `function` callable from SQL on every connection, as
  // `name(param := 'value', ...)`. The database shares ownership of the function. An internal
  // function serves Millrace's own statements: RegisteredTableFunctions leaves it out (the
  // access sandbox lets users call the listed ones).
  Status RegisterTableFunction(std::shared_ptr<TableFunction> function,
                               FunctionVisibility visibility = FunctionVisibility::kListed)
      EXCLUDES(mu_);
  // The names of the listed functions registered so far (lower case).
  std::vector<std::string> RegisteredTableFunctions() const EXCLUDES(mu_);

  // The engine's own lock, the backstop behind Millrace's statement checks: from now on DuckDB
  // reads and writes files only under `allowed_directories` (and its own database files),
  // installs and loads no extension, and refuses every configuration change (SET, RESET)
  // but the schema and search path. Irreversible for the life of the Database; call it once,
  // after the settings Millrace needs are made. The order of the settings matters (DuckDB
  // 1.4.4): the directories before external access is turned off, the lock last.
  Status LockDown(const std::vector<std::string>& allowed_directories);

  const DatabaseOptions& options() const { return options_; }

 private:
  Database(void* db, DatabaseOptions options);
  void* db_;  // duckdb_database, owned
  DatabaseOptions options_;
  mutable Mutex mu_;
  std::vector<std::string> registered_ GUARDED_BY(mu_);
};

// What kind of statement DuckDB parsed (duckdb_statement_type, mirrored so callers need not
// include duckdb.h).
enum class StatementKind : int {
  kInvalid = 0,
  kSelect = 1,
  kInsert = 2,
  kUpdate = 3,
  kExplain = 4,
  kDelete = 5,
  kPrepare = 6,
  kCreate = 7,
  kExecute = 8,
  kAlter = 9,
  kTransaction = 10,
  kCopy = 11,
  kAnalyze = 12,
  kVariableSet = 13,
  kCreateFunction = 14,
  kDrop = 15,
  kExport = 16,
  kPragma = 17,
  kVacuum = 18,
  kCall = 19,
  kSet = 20,
  kLoad = 21,
  kRelation = 22,
  kExtension = 23,
  kLogicalPlan = 24,
  kAttach = 25,
  kDetach = 26,
  kMulti = 27,
};
// "SELECT", "COPY", "ATTACH", ... as a user would name the statement.
std::string_view StatementKindName(StatementKind kind);

class PreparedStatement {
 public:
  ~PreparedStatement();
  PreparedStatement(const PreparedStatement&) = delete;
  PreparedStatement& operator=(const PreparedStatement&) = delete;

  size_t parameter_count() const;
  StatementKind kind() const;
  // The result columns the statement will return, as bound (none for a statement without rows).
  struct Column {
    std::string name;
    ColumnType type;
  };
  std::vector<Column> columns() const;
  // Parameters are numbered from 1, as in SQL ($1, ?).
  Status BindNull(size_t index);
  Status BindBool(size_t index, bool value);
  Status BindInt64(size_t index, int64_t value);
  Status BindUInt64(size_t index, uint64_t value);
  Status BindDouble(size_t index, double value);
  Status BindString(size_t index, std::string_view value);
  Status BindBlob(size_t index, std::string_view bytes);
  // A list parameter (`unnest(?::VARCHAR[])`): many rows' values of a column in one binding.
  Status BindStringList(size_t index, const std::vector<std::string>& values);
  Status BindInt64List(size_t index, const std::vector<int64_t>& values);
  Status BindBoolList(size_t index, const std::vector<bool>& values);
  Status ClearBindings();

  // Runs the statement with the current bindings and streams its result. CANCELLED while an
  // interrupt of its connection is pending (Connection::Interrupt).
  Result<std::unique_ptr<QueryResult>> Execute();

 private:
  friend class Connection;
  PreparedStatement(void* prepared, Connection* conn) : prepared_(prepared), conn_(conn) {}
  Status CheckBind(int state, size_t index, const char* what);
  void* prepared_;    // duckdb_prepared_statement, owned
  Connection* conn_;  // the connection it was prepared on; outlives it
};

class Transaction;

class Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements and discards their results.
  Status Execute(std::string_view sql);
  // True when DuckDB's catalog lookup finds a table `schema`.`table` (names as DuckDB resolves
  // them, without regard to case) in the default database, in this connection's transaction;
  // false when it finds none or cannot look (a view of that name, an aborted transaction):
  // a caller that must know why asks the catalog with a query instead.
  bool HasTable(const std::string& schema, const std::string& table);
  // Runs the statements in `sql`; all but the last run to completion, the last one streams.
  Result<std::unique_ptr<QueryResult>> Query(std::string_view sql);
  Result<std::unique_ptr<PreparedStatement>> Prepare(std::string_view sql);
  // Prepares `sql`, which must hold exactly one statement as DuckDB's own parser splits it
  // (INVALID_ARGUMENT naming the count otherwise). Preparing binds: names are resolved, table
  // functions are bound, nothing runs.
  Result<std::unique_ptr<PreparedStatement>> PrepareOne(std::string_view sql);
  // DuckDB's own split and classification of `sql`: the kind of each statement, in order, as
  // DuckDB's parser splits the text and prepares each one (bound, not run). DuckDB's parse or
  // bind error otherwise; INVALID_ARGUMENT when the text holds no statement.
  Result<std::vector<StatementKind>> StatementKinds(std::string_view sql);

  // Starts a transaction; see Transaction.
  Result<Transaction> Begin();
  // True while a transaction begun on this connection (BEGIN, or Begin()) is open. DuckDB
  // gives every statement outside one a transaction of its own: two reads of txid_current()
  // agree only inside one.
  Result<bool> InTransaction();

  // Cancels the statement running on this connection and every statement started after it,
  // until ClearInterrupt(); any thread may call it. They fail with CANCELLED. The interrupt
  // stays pending because DuckDB forgets an interrupt when its next statement starts: one sent
  // just before a statement starts would otherwise be lost and the statement run on.
  void Interrupt();
  // Ends a pending interrupt: statements started after it run.
  void ClearInterrupt();
  // DuckDB's id of this connection (what TableFunctionArgs::connection_id reports).
  uint64_t id() const;

 private:
  friend class Database;
  friend class PreparedStatement;
  friend class Transaction;
  explicit Connection(void* conn) : conn_(conn) {}
  // CANCELLED, as DuckDB reports an interrupted statement, while an interrupt is pending.
  Status CheckInterrupt() const;
  // ROLLBACK, run even while an interrupt is pending: an interrupted transaction must end.
  Status RollBack();
  void* conn_;  // duckdb_connection, owned
  std::atomic<bool> interrupt_pending_{false};
};

class Transaction {
 public:
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&& other) noexcept;
  // Rolls back if still active.
  ~Transaction();

  Status Commit();
  Status Rollback();
  bool active() const { return conn_ != nullptr; }

 private:
  friend class Connection;
  explicit Transaction(Connection* conn) : conn_(conn) {}
  Connection* conn_;  // not owned; nullptr once finished
};

// Runs `sql` and returns every cell as DataChunk::GetText renders it, NULL as "". For the small
// results Millrace reads itself (catalog rows, file shapes); user results are streamed instead.
Result<std::vector<std::vector<std::string>>> QueryTextRows(Connection& conn, std::string_view sql);

// The version of the DuckDB library loaded at run time, e.g. "v1.4.4".
std::string LibraryVersion();

// Quotes an identifier for DuckDB SQL ("a""b").
std::string QuoteIdentifier(std::string_view name);
// Quotes a string literal for DuckDB SQL ('it''s').
std::string QuoteLiteral(std::string_view value);

}  // namespace millrace::engine
