// PgConnection: one libpq connection to PostgreSQL, with errors as Status values.
//
// Contract
// - Connect opens a connection with the given parameters (TCP; libpq's sslmode "prefer" unless
//   the parameters name another). Every session is set to TimeZone UTC, DateStyle ISO,
//   IntervalStyle postgres and UTF8, so values print in the forms pg_types.h converts.
//   `replication` opens a logical replication connection (replication=database) for replication.h.
// - A failure to connect is UNAVAILABLE when the server was not reached or refused before
//   authentication, UNAUTHENTICATED when it rejected the credentials offered; the message is
//   libpq's, prefixed with "host:port". It never holds the password.
// - A failed statement is a Status whose detail is ErrorDetail{kPostgres, PackSqlState(code)}
//   and whose StatusCode follows from the SQLSTATE's class (SqlStateStatusCode). Callers branch
//   on SqlStateOf(status), never on the message.
// - Query returns every value as PostgreSQL's text output (NULL as nullopt). CopyOut runs a
//   COPY ... TO STDOUT (text format) and hands each row's fields, decoded from COPY's escapes,
//   to `row`; an error from `row` stops the copy and is returned. CopyIn sends rows to a
//   COPY ... FROM STDIN.
// - Thread-safety: one thread at a time, except Cancel, which may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace millrace::pg {

struct ConnectParams {
  std::string host;
  int port = 5432;
  std::string database;
  std::string user;
  std::string password;
  bool replication = false;
  std::chrono::seconds connect_timeout{10};
  std::string sslmode;  // libpq's sslmode; empty: its default, "prefer"
};

// "host:port/database", for messages.
std::string Describe(const ConnectParams& params);

// The parameters a PostgreSQL connection URI gives (postgresql://user:password@host:port/
// database?sslmode=...; postgres:// too), as libpq reads it (PQconninfoParse): host and
// database required, port 5432 unless given. INVALID_ARGUMENT saying what is wrong, never with
// the password.
Result<ConnectParams> ParseConnectUri(std::string_view uri);

// SQLSTATE codes are five characters of [0-9A-Z]: packed in base 36 they fit an int32.
int32_t PackSqlState(std::string_view sqlstate);
// The SQLSTATE of a PostgreSQL error ("" when `status` is not one).
std::string SqlStateOf(const Status& status);
StatusCode SqlStateStatusCode(std::string_view sqlstate);
// The error a failed PGresult reports, as described above (the result is not freed).
Status StatusFromResult(const PGresult* result);

using Field = std::optional<std::string>;
using Row = std::vector<Field>;

struct Rows {
  std::vector<std::string> columns;
  std::vector<Row> rows;
  int64_t changed = 0;  // the rows an INSERT, UPDATE or DELETE changed
  std::string command;  // the command tag ("COMMIT", "ROLLBACK", "INSERT 0 1", ...)
};

class PgConnection {
 public:
  static Result<std::unique_ptr<PgConnection>> Connect(const ConnectParams& params);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  Result<Rows> Query(std::string_view sql);
  // One statement with parameters $1, $2, ... given as text (NULL as nullopt); PostgreSQL
  // infers their types from where they appear.
  Result<Rows> Query(std::string_view sql, const std::vector<Field>& params);
  Status Execute(std::string_view sql);
  Status CopyOut(std::string_view copy_sql, const std::function<Status(Row&)>& row);
  // Runs a COPY ... FROM STDIN and sends what `fill` appends to its buffer (whole lines of
  // COPY's text format, EncodeCopyField) until it returns false; an error from `fill` ends the
  // copy with it (the server discards what was sent) and is returned. The server's error
  // (a value its type refuses, a constraint) is returned as a statement's.
  Status CopyIn(std::string_view copy_sql, const std::function<Result<bool>(std::string*)>& fill);

  // A string literal for `value`, quoted and escaped for this connection.
  std::string Literal(std::string_view value) const;
  // An identifier, quoted if needed.
  std::string Identifier(std::string_view name) const;

  // Asks the server to cancel the statement running on this connection, from any thread.
  void Cancel();

  PGconn* raw() { return conn_; }
  // False once the connection is known to be broken (libpq's status, no round trip).
  bool healthy() const;
  const ConnectParams& params() const { return params_; }
  // The error of the connection itself (a lost connection, a protocol error), with context.
  Status ConnectionError(std::string_view what) const;

 private:
  PgConnection(PGconn* conn, ConnectParams params) : conn_(conn), params_(std::move(params)) {}
  // The rows of a statement's result (freed here), or its error.
  Result<Rows> TakeResult(PGresult* result);
  PGconn* conn_;
  const ConnectParams params_;
};

// Appends `value` to `line` as a field of COPY's text format (backslash, tab, newline and
// carriage return escaped); NULL is \N.
void EncodeCopyField(const Field& value, std::string* line);

// Decodes one line of COPY's text format (without its newline) into fields: tab-separated,
// \N is NULL, backslash escapes (\b \f \n \r \t \v \\, octal and \x hex) decoded.
Row DecodeCopyLine(std::string_view line);

}  // namespace millrace::pg
