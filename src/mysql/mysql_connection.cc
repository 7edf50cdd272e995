#include "mysql/mysql_connection.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include "common/endpoint_policy.h"
#include "common/strings.h"

namespace millrace::mysql {
namespace {

Status ErrnoStatus(int error, const std::string& message) {
  return Status(StatusCodeOfErrno(error), message)
      .WithDetail(ErrorDetail{ErrorDomain::kMySqlSource, error, 0});
}

}  // namespace

std::string Describe(const ConnectParams& params) {
  return params.host + ":" + std::to_string(params.port);
}

int ErrnoOf(const Status& status) {
  return status.detail().domain == ErrorDomain::kMySqlSource ? status.detail().code : 0;
}

StatusCode StatusCodeOfErrno(int error) {
  switch (error) {
    case ER_ACCESS_DENIED_ERROR:
      return StatusCode::kUnauthenticated;
    case ER_DBACCESS_DENIED_ERROR:
    case ER_TABLEACCESS_DENIED_ERROR:
    case ER_COLUMNACCESS_DENIED_ERROR:
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
      return StatusCode::kPermissionDenied;
    case ER_NO_SUCH_TABLE:
    case ER_BAD_DB_ERROR:
    case ER_BAD_FIELD_ERROR:
      return StatusCode::kNotFound;
    case ER_PARSE_ERROR:
    case ER_SYNTAX_ERROR:
      return StatusCode::kInvalidArgument;
    case ER_MASTER_FATAL_ERROR_READING_BINLOG:  // e.g. the position was purged
      return StatusCode::kOutOfRange;
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_UNKNOWN_HOST:
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case ER_SERVER_SHUTDOWN:
    case ER_CON_COUNT_ERROR:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

Result<std::unique_ptr<MysqlConnection>> MysqlConnection::Connect(const ConnectParams& params) {
  MYSQL* mysql = mysql_init(nullptr);
  if (mysql == nullptr) return Status::ResourceExhausted("cannot allocate a MySQL connection");
  const unsigned int connect_timeout = static_cast<unsigned int>(params.connect_timeout.count());
  mysql_optionsv(mysql, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
  if (params.read_timeout.count() > 0) {
    const unsigned int read_timeout = static_cast<unsigned int>(params.read_timeout.count());
    mysql_optionsv(mysql, MYSQL_OPT_READ_TIMEOUT, &read_timeout);
  }
  mysql_optionsv(mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  const unsigned int tcp = MYSQL_PROTOCOL_TCP;
  mysql_optionsv(mysql, MYSQL_OPT_PROTOCOL, &tcp);
  // Connects to exactly the address the endpoint policy allowed.
  Result<std::string> address = EndpointPolicy::Default().Resolve(params.host);
  if (!address.ok()) {
    mysql_close(mysql);
    return address.status();
  }
  if (mysql_real_connect(mysql, address->c_str(), params.user.c_str(), params.password.c_str(),
                         params.database.empty() ? nullptr : params.database.c_str(),
                         static_cast<unsigned int>(params.port), nullptr, 0) == nullptr) {
    const int error = static_cast<int>(mysql_errno(mysql));
    Status failed = ErrnoStatus(error, Describe(params) + ": " + mysql_error(mysql));
    mysql_close(mysql);
    return failed;
  }
  std::unique_ptr<MysqlConnection> conn(new MysqlConnection(mysql, params));
  // UTC timestamps, and a sql_mode that cannot change how values print or compare
  // (NO_BACKSLASH_ESCAPES, PAD_CHAR_TO_FULL_LENGTH, EMPTY_STRING_IS_NULL).
  MR_RETURN_IF_ERROR(conn->Execute("SET time_zone = '+00:00', sql_mode = ''"));
  return conn;
}

MysqlConnection::~MysqlConnection() {
  mysql_close(mysql_);
}

Status MysqlConnection::LastError(std::string_view what) const {
  const int error = static_cast<int>(mysql_errno(mysql_));
  return ErrnoStatus(
      error, "MySQL " + Describe(params_) + ": " + std::string(what) + ": " + mysql_error(mysql_));
}

Status MysqlConnection::Execute(std::string_view sql) {
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return LastError("statement failed");
  // Drain the result (a CALL may return several).
  do {
    MYSQL_RES* result = mysql_store_result(mysql_);
    if (result != nullptr) mysql_free_result(result);
    if (mysql_errno(mysql_) != 0) return LastError("statement failed");
  } while (mysql_next_result(mysql_) == 0);
  if (mysql_errno(mysql_) != 0) return LastError("statement failed");
  return Status::Ok();
}

Result<Rows> MysqlConnection::Query(std::string_view sql) {
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return LastError("query failed");
  MYSQL_RES* result = mysql_store_result(mysql_);
  Rows out;
  if (result == nullptr) {
    if (mysql_errno(mysql_) != 0) return LastError("query failed");
    return out;  // a statement without a result
  }
  const unsigned int fields = mysql_num_fields(result);
  for (unsigned int i = 0; i < fields; ++i)
    out.columns.emplace_back(mysql_fetch_field_direct(result, i)->name);
  while (MYSQL_ROW row = mysql_fetch_row(result)) {
    const unsigned long* lengths = mysql_fetch_lengths(result);
    Row values;
    values.reserve(fields);
    for (unsigned int i = 0; i < fields; ++i) {
      if (row[i] == nullptr) {
        values.emplace_back(std::nullopt);
      } else {
        values.emplace_back(std::string(row[i], lengths[i]));
      }
    }
    out.rows.push_back(std::move(values));
  }
  mysql_free_result(result);
  return out;
}

std::string MysqlConnection::Literal(std::string_view value) const {
  std::string escaped(value.size() * 2 + 1, '\0');
  const unsigned long n = mysql_real_escape_string(mysql_, escaped.data(), value.data(),
                                                   static_cast<unsigned long>(value.size()));
  escaped.resize(n);
  return "'" + escaped + "'";
}

std::string MysqlConnection::Identifier(std::string_view name) {
  return Backquoted(name);
}

}  // namespace millrace::mysql
