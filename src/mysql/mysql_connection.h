// MysqlConnection: one Connector/C connection to a MySQL or MariaDB server that a change
// stream reads, with errors as Status values.
//
// Contract
// - Connect opens a TCP connection (utf8mb4, time_zone '+00:00', so TIMESTAMP values print in
//   UTC, and sql_mode '', so no mode changes how values print or compare). A failure to reach the
//   server is UNAVAILABLE, rejected credentials UNAUTHENTICATED; the message is Connector/C's,
//   prefixed with "host:port". It never holds the password.
// - A failed statement is a Status whose detail is ErrorDetail{kMySqlSource, errno} and whose
//   code follows from the errno (StatusCodeOfErrno): callers branch on ErrnoOf(status), never
//   on the message.
// - Query returns every value as the server's text (NULL as nullopt; binary values as their
//   bytes). Execute runs statements and discards their results.
// - raw() hands the MYSQL handle to the binlog stream (binlog_stream.h), which then owns the
//   connection's protocol state: a connection streaming the binlog runs no statements.
// - Thread-safety: one thread at a time.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

typedef struct st_mysql MYSQL;

namespace millrace::mysql {

struct ConnectParams {
  std::string host;
  int port = 3306;
  std::string user;
  std::string password;
  std::string database;  // "" : none
  std::chrono::seconds connect_timeout{10};
  // How long a read may wait (0: for ever); the binlog stream relies on heartbeats instead.
  std::chrono::seconds read_timeout{0};
};

// "host:port", for messages.
std::string Describe(const ConnectParams& params);

// The errno of a source server's error (0 when `status` is not one).
int ErrnoOf(const Status& status);
StatusCode StatusCodeOfErrno(int error);

using Field = std::optional<std::string>;
using Row = std::vector<Field>;

struct Rows {
  std::vector<std::string> columns;
  std::vector<Row> rows;
};

class MysqlConnection {
 public:
  static Result<std::unique_ptr<MysqlConnection>> Connect(const ConnectParams& params);
  ~MysqlConnection();
  MysqlConnection(const MysqlConnection&) = delete;
  MysqlConnection& operator=(const MysqlConnection&) = delete;

  Result<Rows> Query(std::string_view sql);
  Status Execute(std::string_view sql);

  // A string literal for `value`, quoted and escaped for this connection.
  std::string Literal(std::string_view value) const;
  // `name`, backquoted.
  static std::string Identifier(std::string_view name);

  MYSQL* raw() { return mysql_; }
  const ConnectParams& params() const { return params_; }
  // The connection's last error as a Status with context `what`.
  Status LastError(std::string_view what) const;

 private:
  MysqlConnection(MYSQL* mysql, ConnectParams params) : mysql_(mysql), params_(std::move(params)) {}
  MYSQL* mysql_;
  const ConnectParams params_;
};

}  // namespace millrace::mysql
