#include "engine/database.h"

#include <duckdb.h>

#include <chrono>
#include <thread>
#include <utility>

#include "common/strings.h"
#include "engine/duckdb_status.h"
#include "engine/result_handle.h"
#include "engine/table_function_adapter.h"
#include "engine/value_format.h"

namespace millrace::engine {
namespace {

duckdb_database AsDb(void* p) {
  return static_cast<duckdb_database>(p);
}
duckdb_connection AsConn(void* p) {
  return static_cast<duckdb_connection>(p);
}
duckdb_prepared_statement AsPrepared(void* p) {
  return static_cast<duckdb_prepared_statement>(p);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Database

Database::Database(void* db, DatabaseOptions options) : db_(db), options_(std::move(options)) {}

Database::~Database() {
  duckdb_database db = AsDb(db_);
  duckdb_close(&db);
}

Result<std::unique_ptr<Database>> Database::Open(const DatabaseOptions& options) {
  duckdb_config config = nullptr;
  if (duckdb_create_config(&config) == DuckDBError) {
    return Status::Internal("cannot create DuckDB configuration");
  }
  auto set = [&](const char* name, const std::string& value) -> Status {
    if (duckdb_set_config(config, name, value.c_str()) == DuckDBError) {
      return Status::InvalidArgument(std::string("invalid DuckDB setting ") + name + " = '" +
                                     value + "'");
    }
    return Status::Ok();
  };
  Status status;
  if (!options.memory_limit.empty()) status = set("memory_limit", options.memory_limit);
  if (status.ok() && options.threads > 0) status = set("threads", std::to_string(options.threads));
  if (status.ok() && options.read_only) status = set("access_mode", "READ_ONLY");
  if (status.ok() && !options.preserve_insertion_order) {
    status = set("preserve_insertion_order", "false");
  }
  if (!status.ok()) {
    duckdb_destroy_config(&config);
    return status;
  }
  const bool in_memory = options.path.empty() || options.path == ":memory:";
  duckdb_database db = nullptr;
  char* error = nullptr;
  const duckdb_state state =
      duckdb_open_ext(in_memory ? nullptr : options.path.c_str(), &db, config, &error);
  duckdb_destroy_config(&config);
  if (state == DuckDBError) {
    std::string msg = "cannot open database '" + (in_memory ? ":memory:" : options.path) +
                      "': " + (error != nullptr ? error : "unknown error");
    // duckdb_open_ext reports text only: the detail is read from it, as for a failed prepare.
    const ErrorDetail detail =
        ReadDuckDbError(std::nullopt, error != nullptr ? error : std::string_view());
    duckdb_free(error);
    return Status::IoError(std::move(msg)).WithDetail(detail);
  }
  return std::unique_ptr<Database>(new Database(db, options));
}

Result<std::unique_ptr<Connection>> Database::Connect() {
  duckdb_connection conn = nullptr;
  if (duckdb_connect(AsDb(db_), &conn) == DuckDBError) {
    return Status::Internal("cannot connect to the DuckDB database");
  }
  return std::unique_ptr<Connection>(new Connection(conn));
}

Status Database::LockDown(const std::vector<std::string>& allowed_directories) {
  MR_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connect());
  std::string directories;
  for (const std::string& dir : allowed_directories) {
    if (!directories.empty()) directories += ", ";
    // DuckDB matches a directory as a path prefix: the trailing slash keeps "/a/work" from
    // allowing "/a/work2".
    directories += QuoteLiteral(dir.ends_with('/') ? dir : dir + "/");
  }
  return conn->Execute("SET allowed_directories = [" + directories +
                       "]; SET autoinstall_known_extensions = false; "
                       "SET autoload_known_extensions = false; "
                       "SET enable_external_access = false; SET lock_configuration = true");
}

Status Database::RegisterTableFunction(std::shared_ptr<TableFunction> function,
                                       FunctionVisibility visibility) {
  MR_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connect());
  std::string name = ToLower(function->name());
  MR_RETURN_IF_ERROR(RegisterTableFunctionOn(conn->conn_, std::move(function)));
  if (visibility == FunctionVisibility::kInternal) return Status::Ok();
  MutexLock lock(&mu_);
  registered_.push_back(std::move(name));
  return Status::Ok();
}

std::vector<std::string> Database::RegisteredTableFunctions() const {
  MutexLock lock(&mu_);
  return registered_;
}

// ---------------------------------------------------------------------------------------------
// PreparedStatement

PreparedStatement::~PreparedStatement() {
  duckdb_prepared_statement prepared = AsPrepared(prepared_);
  duckdb_destroy_prepare(&prepared);
}

size_t PreparedStatement::parameter_count() const {
  return duckdb_nparams(AsPrepared(prepared_));
}

static_assert(static_cast<int>(StatementKind::kSelect) == DUCKDB_STATEMENT_TYPE_SELECT);
static_assert(static_cast<int>(StatementKind::kCopy) == DUCKDB_STATEMENT_TYPE_COPY);
static_assert(static_cast<int>(StatementKind::kAttach) == DUCKDB_STATEMENT_TYPE_ATTACH);
static_assert(static_cast<int>(StatementKind::kMulti) == DUCKDB_STATEMENT_TYPE_MULTI);

StatementKind PreparedStatement::kind() const {
  return static_cast<StatementKind>(duckdb_prepared_statement_type(AsPrepared(prepared_)));
}

std::string_view StatementKindName(StatementKind kind) {
  switch (kind) {
    case StatementKind::kSelect:
      return "SELECT";
    case StatementKind::kInsert:
      return "INSERT";
    case StatementKind::kUpdate:
      return "UPDATE";
    case StatementKind::kExplain:
      return "EXPLAIN";
    case StatementKind::kDelete:
      return "DELETE";
    case StatementKind::kPrepare:
      return "PREPARE";
    case StatementKind::kCreate:
      return "CREATE";
    case StatementKind::kExecute:
      return "EXECUTE";
    case StatementKind::kAlter:
      return "ALTER";
    case StatementKind::kTransaction:
      return "a transaction statement";
    case StatementKind::kCopy:
      return "COPY";
    case StatementKind::kAnalyze:
      return "ANALYZE";
    case StatementKind::kVariableSet:
      return "SET VARIABLE";
    case StatementKind::kCreateFunction:
      return "CREATE MACRO/FUNCTION";
    case StatementKind::kDrop:
      return "DROP";
    case StatementKind::kExport:
      return "EXPORT/IMPORT DATABASE";
    case StatementKind::kPragma:
      return "PRAGMA";
    case StatementKind::kVacuum:
      return "VACUUM";
    case StatementKind::kCall:
      return "CALL";
    case StatementKind::kSet:
      return "SET/RESET";
    case StatementKind::kLoad:
      return "INSTALL/LOAD";
    case StatementKind::kRelation:
      return "a relation";
    case StatementKind::kExtension:
      return "an extension statement";
    case StatementKind::kLogicalPlan:
      return "a logical plan";
    case StatementKind::kAttach:
      return "ATTACH";
    case StatementKind::kDetach:
      return "DETACH";
    case StatementKind::kMulti:
      return "a multi-statement";
    case StatementKind::kInvalid:
      break;
  }
  return "an unknown statement";
}

Status PreparedStatement::CheckBind(int state, size_t index, const char* what) {
  if (state == DuckDBSuccess) return Status::Ok();
  return Status::InvalidArgument("cannot bind " + std::string(what) + " to parameter " +
                                 std::to_string(index) + " of " +
                                 std::to_string(parameter_count()));
}

Status PreparedStatement::BindNull(size_t index) {
  return CheckBind(duckdb_bind_null(AsPrepared(prepared_), index), index, "NULL");
}
Status PreparedStatement::BindBool(size_t index, bool value) {
  return CheckBind(duckdb_bind_boolean(AsPrepared(prepared_), index, value), index, "a boolean");
}
std::vector<PreparedStatement::Column> PreparedStatement::columns() const {
  duckdb_prepared_statement prepared = AsPrepared(prepared_);
  std::vector<Column> out;
  const idx_t count = duckdb_prepared_statement_column_count(prepared);
  for (idx_t i = 0; i < count; ++i) {
    duckdb_logical_type logical = duckdb_prepared_statement_column_logical_type(prepared, i);
    const char* name = duckdb_prepared_statement_column_name(prepared, i);  // ours to free
    out.push_back(Column{name != nullptr ? name : "", ColumnTypeOf(logical)});
    duckdb_free(const_cast<char*>(name));
    duckdb_destroy_logical_type(&logical);
  }
  return out;
}

Status PreparedStatement::BindUInt64(size_t index, uint64_t value) {
  return CheckBind(duckdb_bind_uint64(AsPrepared(prepared_), index, value), index, "an integer");
}

Status PreparedStatement::BindInt64(size_t index, int64_t value) {
  return CheckBind(duckdb_bind_int64(AsPrepared(prepared_), index, value), index, "an integer");
}
Status PreparedStatement::BindDouble(size_t index, double value) {
  return CheckBind(duckdb_bind_double(AsPrepared(prepared_), index, value), index, "a double");
}
Status PreparedStatement::BindString(size_t index, std::string_view value) {
  return CheckBind(
      duckdb_bind_varchar_length(AsPrepared(prepared_), index, value.data(), value.size()), index,
      "a string");
}
Status PreparedStatement::BindBlob(size_t index, std::string_view bytes) {
  return CheckBind(duckdb_bind_blob(AsPrepared(prepared_), index, bytes.data(), bytes.size()),
                   index, "a blob");
}
namespace {

// Binds a list of `type` whose item i is make(i) to parameter `index`; the C API's state.
template <typename Make>
duckdb_state BindListOf(duckdb_prepared_statement prepared, size_t index, duckdb_type type,
                        size_t count, Make make) {
  // duckdb_bind_value takes a parameter past the statement's without an error.
  if (index == 0 || index > duckdb_nparams(prepared)) return DuckDBError;
  duckdb_logical_type item_type = duckdb_create_logical_type(type);
  std::vector<duckdb_value> items(count);
  for (size_t i = 0; i < count; ++i)
    items[i] = make(i);
  // An empty vector's data() may be null, which the C API takes for an error.
  duckdb_value none = nullptr;
  duckdb_value list = duckdb_create_list_value(item_type, count == 0 ? &none : items.data(), count);
  for (duckdb_value& item : items)
    duckdb_destroy_value(&item);
  duckdb_destroy_logical_type(&item_type);
  if (list == nullptr) return DuckDBError;
  const duckdb_state state = duckdb_bind_value(prepared, index, list);
  duckdb_destroy_value(&list);
  return state;
}

}  // namespace

Status PreparedStatement::BindStringList(size_t index, const std::vector<std::string>& values) {
  return CheckBind(BindListOf(AsPrepared(prepared_), index, DUCKDB_TYPE_VARCHAR, values.size(),
                              [&](size_t i) {
                                return duckdb_create_varchar_length(values[i].data(),
                                                                    values[i].size());
                              }),
                   index, "a list of strings");
}
Status PreparedStatement::BindInt64List(size_t index, const std::vector<int64_t>& values) {
  return CheckBind(BindListOf(AsPrepared(prepared_), index, DUCKDB_TYPE_BIGINT, values.size(),
                              [&](size_t i) { return duckdb_create_int64(values[i]); }),
                   index, "a list of integers");
}
Status PreparedStatement::BindBoolList(size_t index, const std::vector<bool>& values) {
  return CheckBind(BindListOf(AsPrepared(prepared_), index, DUCKDB_TYPE_BOOLEAN, values.size(),
                              [&](size_t i) { return duckdb_create_bool(values[i]); }),
                   index, "a list of booleans");
}
Status PreparedStatement::ClearBindings() {
  if (duckdb_clear_bindings(AsPrepared(prepared_)) == DuckDBError) {
    return Status::Internal("cannot clear bindings");
  }
  return Status::Ok();
}

namespace {

// Runs a statement's tasks on the calling thread until its result is ready (or it failed).
// DuckDB's own wait (duckdb_execute_pending) calls for a task again at once while its worker
// threads hold every task the statement has, a busy loop over the connection's lock that kept
// a second core busy through each single-threaded INSERT of a change stream's batch, beside
// the source and the object store that share the machine. Here the caller yields its core,
// then sleeps a little, while it has nothing to run.
bool RunTasks(duckdb_pending_result pending) {
  constexpr int kYieldsBeforeSleeping = 64;
  constexpr auto kIdleSleep = std::chrono::microseconds(50);
  int idle = 0;
  while (true) {
    switch (duckdb_pending_execute_task(pending)) {
      case DUCKDB_PENDING_RESULT_READY:
        return true;
      case DUCKDB_PENDING_ERROR:
        return false;
      case DUCKDB_PENDING_NO_TASKS_AVAILABLE:
        if (++idle <= kYieldsBeforeSleeping) {
          std::this_thread::yield();
        } else {
          std::this_thread::sleep_for(kIdleSleep);
        }
        break;
      case DUCKDB_PENDING_RESULT_NOT_READY:
        idle = 0;
        break;
    }
  }
}

}  // namespace

Result<std::unique_ptr<QueryResult>> PreparedStatement::Execute() {
  MR_RETURN_IF_ERROR(conn_->CheckInterrupt());
  duckdb_pending_result pending = nullptr;
  if (duckdb_pending_prepared_streaming(AsPrepared(prepared_), &pending) == DuckDBError) {
    Status status = StatusFromDuckDBMessage(duckdb_pending_error(pending));
    duckdb_destroy_pending(&pending);
    return status;
  }
  // DuckDB has now cleared its interrupt flag for this statement. An interrupt sent before
  // that point is pending here and is sent again, so the statement runs no further: Interrupt
  // sets the pending flag before it calls duckdb_interrupt, so one of the two always sees it.
  if (conn_->interrupt_pending_.load()) duckdb_interrupt(AsConn(conn_->conn_));
  if (!RunTasks(pending)) {
    // The failed statement's message names its type ("Constraint Error: ..."); executing the
    // pending result now would wrap it in DuckDB's "unsuccessful pending query" error.
    Status status = StatusFromDuckDBMessage(duckdb_pending_error(pending));
    duckdb_destroy_pending(&pending);
    return status;
  }
  auto handle = std::make_unique<QueryResult::Handle>();
  const duckdb_state state = duckdb_execute_pending(pending, &handle->result);
  duckdb_destroy_pending(&pending);
  if (state == DuckDBError) {
    return StatusFromResult(&handle->result);  // Handle's destructor frees the result
  }
  return std::unique_ptr<QueryResult>(new QueryResult(std::move(handle)));
}

// ---------------------------------------------------------------------------------------------
// Connection

Connection::~Connection() {
  duckdb_connection conn = AsConn(conn_);
  duckdb_disconnect(&conn);
}

Status Connection::Execute(std::string_view sql) {
  // Through Query, not duckdb_query, so that an interrupt cannot be lost as the statement
  // starts (PreparedStatement::Execute).
  MR_ASSIGN_OR_RETURN(std::unique_ptr<QueryResult> result, Query(sql));
  while (true) {
    MR_ASSIGN_OR_RETURN(auto chunk, result->Next());
    if (chunk == nullptr) return Status::Ok();
  }
}

bool Connection::HasTable(const std::string& schema, const std::string& table) {
  duckdb_table_description description = nullptr;
  const duckdb_state state = duckdb_table_description_create_ext(
      AsConn(conn_), nullptr, schema.c_str(), table.c_str(), &description);
  duckdb_table_description_destroy(&description);  // after an error too (duckdb.h)
  return state == DuckDBSuccess;
}

Result<std::unique_ptr<PreparedStatement>> Connection::Prepare(std::string_view sql) {
  MR_RETURN_IF_ERROR(CheckInterrupt());
  duckdb_prepared_statement prepared = nullptr;
  const std::string text(sql);
  if (duckdb_prepare(AsConn(conn_), text.c_str(), &prepared) == DuckDBError) {
    // A failed prepare has no duckdb_error_type in the C API: only its message names the type.
    Status status = StatusFromDuckDBMessage(duckdb_prepare_error(prepared));
    duckdb_destroy_prepare(&prepared);
    return status;
  }
  return std::unique_ptr<PreparedStatement>(new PreparedStatement(prepared, this));
}

namespace {

// DuckDB's split of one text (duckdb_extract_statements), destroyed with its holder.
class Extracted {
 public:
  Extracted() = default;
  Extracted(const Extracted&) = delete;
  Extracted& operator=(const Extracted&) = delete;
  ~Extracted() { duckdb_destroy_extracted(&statements_); }

  // The number of statements of `sql` as DuckDB's parser splits them, or its parse error.
  Result<idx_t> Split(duckdb_connection conn, const std::string& sql) {
    const idx_t count = duckdb_extract_statements(conn, sql.c_str(), &statements_);
    if (count > 0) return count;
    const char* error = duckdb_extract_statements_error(statements_);
    // No error and no statement: the text holds only whitespace or comments.
    return error != nullptr ? StatusFromDuckDBMessage(error)
                            : Status::InvalidArgument("no SQL statement to run");
  }

  // Prepares statement `i` (bound, not run); DuckDB's error otherwise.
  Result<duckdb_prepared_statement> Prepare(duckdb_connection conn, idx_t i) {
    duckdb_prepared_statement prepared = nullptr;
    if (duckdb_prepare_extracted_statement(conn, statements_, i, &prepared) == DuckDBError) {
      Status status = StatusFromDuckDBMessage(duckdb_prepare_error(prepared));
      duckdb_destroy_prepare(&prepared);
      return status;
    }
    return prepared;
  }

 private:
  duckdb_extracted_statements statements_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<PreparedStatement>> Connection::PrepareOne(std::string_view sql) {
  MR_RETURN_IF_ERROR(CheckInterrupt());
  Extracted extracted;
  MR_ASSIGN_OR_RETURN(const idx_t count, extracted.Split(AsConn(conn_), std::string(sql)));
  if (count != 1) {
    return Status::InvalidArgument("expected one SQL statement, found " + std::to_string(count));
  }
  MR_ASSIGN_OR_RETURN(duckdb_prepared_statement prepared, extracted.Prepare(AsConn(conn_), 0));
  return std::unique_ptr<PreparedStatement>(new PreparedStatement(prepared, this));
}

Result<std::vector<StatementKind>> Connection::StatementKinds(std::string_view sql) {
  MR_RETURN_IF_ERROR(CheckInterrupt());
  Extracted extracted;
  MR_ASSIGN_OR_RETURN(const idx_t count, extracted.Split(AsConn(conn_), std::string(sql)));
  std::vector<StatementKind> kinds;
  for (idx_t i = 0; i < count; ++i) {
    MR_ASSIGN_OR_RETURN(duckdb_prepared_statement prepared, extracted.Prepare(AsConn(conn_), i));
    kinds.push_back(PreparedStatement(prepared, this).kind());
  }
  return kinds;
}

Result<std::unique_ptr<QueryResult>> Connection::Query(std::string_view sql) {
  Extracted extracted;
  MR_ASSIGN_OR_RETURN(const idx_t count, extracted.Split(AsConn(conn_), std::string(sql)));
  // Statements before the last run to completion; the last one streams.
  std::unique_ptr<QueryResult> last;
  for (idx_t i = 0; i < count; ++i) {
    MR_ASSIGN_OR_RETURN(duckdb_prepared_statement prepared, extracted.Prepare(AsConn(conn_), i));
    PreparedStatement statement(prepared, this);
    MR_ASSIGN_OR_RETURN(last, statement.Execute());
    if (i + 1 < count) {
      // Drain so errors raised while producing rows are reported.
      while (true) {
        MR_ASSIGN_OR_RETURN(std::unique_ptr<DataChunk> chunk, last->Next());
        if (chunk == nullptr) break;
      }
    }
  }
  return last;
}

Result<Transaction> Connection::Begin() {
  MR_RETURN_IF_ERROR(Execute("BEGIN TRANSACTION"));
  return Transaction(this);
}

Result<bool> Connection::InTransaction() {
  MR_ASSIGN_OR_RETURN(auto first, QueryTextRows(*this, "SELECT txid_current()"));
  MR_ASSIGN_OR_RETURN(auto second, QueryTextRows(*this, "SELECT txid_current()"));
  return first == second;
}

void Connection::Interrupt() {
  interrupt_pending_.store(true);  // before duckdb_interrupt: see PreparedStatement::Execute
  duckdb_interrupt(AsConn(conn_));
}

void Connection::ClearInterrupt() {
  interrupt_pending_.store(false);
}

Status Connection::RollBack() {
  duckdb_result result;
  const duckdb_state state = duckdb_query(AsConn(conn_), "ROLLBACK", &result);
  Status status = state == DuckDBError ? StatusFromResult(&result) : Status::Ok();
  duckdb_destroy_result(&result);
  return status;
}

Status Connection::CheckInterrupt() const {
  if (!interrupt_pending_.load()) return Status::Ok();
  return StatusFromDuckDB(DUCKDB_ERROR_INTERRUPT, "INTERRUPT Error: Interrupted!");
}

uint64_t Connection::id() const {
  duckdb_client_context context = nullptr;
  duckdb_connection_get_client_context(AsConn(conn_), &context);
  const uint64_t id = duckdb_client_context_get_connection_id(context);
  duckdb_destroy_client_context(&context);
  return id;
}

// ---------------------------------------------------------------------------------------------
// Transaction

Transaction::Transaction(Transaction&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)) {}

Transaction& Transaction::operator=(Transaction&& other) noexcept {
  if (this != &other) {
    if (conn_ != nullptr) Rollback().IgnoreError();  // abandoned: nothing may survive
    conn_ = std::exchange(other.conn_, nullptr);
  }
  return *this;
}

Transaction::~Transaction() {
  // A rollback failure here means DuckDB already aborted the transaction: nothing to undo.
  if (conn_ != nullptr) Rollback().IgnoreError();
}

Status Transaction::Commit() {
  if (conn_ == nullptr) return Status::FailedPrecondition("transaction already finished");
  Connection* conn = std::exchange(conn_, nullptr);
  Status status = conn->Execute("COMMIT");
  if (!status.ok()) {
    // A failed COMMIT (e.g. a write conflict) leaves DuckDB's transaction aborted; close it
    // so the connection is usable again.
    conn->RollBack().IgnoreError();
  }
  return status;
}

Status Transaction::Rollback() {
  if (conn_ == nullptr) return Status::FailedPrecondition("transaction already finished");
  return std::exchange(conn_, nullptr)->RollBack();
}

// ---------------------------------------------------------------------------------------------

Result<std::vector<std::vector<std::string>>> QueryTextRows(Connection& conn,
                                                            std::string_view sql) {
  MR_ASSIGN_OR_RETURN(auto result, conn.Query(sql));
  std::vector<std::vector<std::string>> rows;
  while (true) {
    MR_ASSIGN_OR_RETURN(auto chunk, result->Next());
    if (!chunk) break;
    for (size_t r = 0; r < chunk->size(); ++r) {
      std::vector<std::string> row;
      for (size_t c = 0; c < chunk->column_count(); ++c) {
        row.push_back(chunk->IsNull(c, r) ? std::string() : chunk->GetText(c, r));
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string LibraryVersion() {
  return duckdb_library_version();
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string QuoteLiteral(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

}  // namespace millrace::engine
