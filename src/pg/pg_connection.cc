#include "pg/pg_connection.h"

#include <libpq-fe.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <memory>

#include "common/endpoint_policy.h"

namespace millrace::pg {
namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// libpq's messages end with a newline.
std::string Trimmed(const char* message) {
  std::string text = message == nullptr ? "" : message;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

}  // namespace

Status StatusFromResult(const PGresult* result) {
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  const std::string sqlstate = state == nullptr ? "" : state;
  std::string message = Trimmed(PQresultErrorMessage(result));
  if (message.rfind("ERROR:  ", 0) == 0) message.erase(0, 8);
  Status status(sqlstate.empty() ? StatusCode::kInternal : SqlStateStatusCode(sqlstate),
                "PostgreSQL: " + message);
  if (sqlstate.empty()) return status;
  return status.WithDetail(ErrorDetail{ErrorDomain::kPostgres, PackSqlState(sqlstate), 0});
}

std::string Describe(const ConnectParams& params) {
  return params.host + ":" + std::to_string(params.port) + "/" + params.database;
}

int32_t PackSqlState(std::string_view sqlstate) {
  int32_t packed = 0;
  for (char c : sqlstate.substr(0, 5)) {
    int digit = 0;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'A' && c <= 'Z') digit = c - 'A' + 10;
    packed = packed * 36 + digit;
  }
  return packed;
}

std::string SqlStateOf(const Status& status) {
  if (status.detail().domain != ErrorDomain::kPostgres) return "";
  int32_t packed = status.detail().code;
  std::string out(5, '0');
  for (int i = 4; i >= 0; --i) {
    const int digit = packed % 36;
    packed /= 36;
    out[i] = static_cast<char>(digit < 10 ? '0' + digit : 'A' + digit - 10);
  }
  return out;
}

StatusCode SqlStateStatusCode(std::string_view sqlstate) {
  const std::string_view cls = sqlstate.substr(0, 2);
  if (sqlstate == "42501") return StatusCode::kPermissionDenied;
  if (sqlstate == "42P01" || sqlstate == "42704" || sqlstate == "3D000" || sqlstate == "3F000") {
    return StatusCode::kNotFound;
  }
  if (sqlstate == "42710" || sqlstate == "42P07" || sqlstate == "42P04") {
    return StatusCode::kAlreadyExists;
  }
  if (sqlstate == "57014") return StatusCode::kCancelled;
  if (cls == "28") return StatusCode::kUnauthenticated;
  if (cls == "08" || cls == "57" || cls == "53") return StatusCode::kUnavailable;
  if (cls == "22" || cls == "23" || cls == "42") return StatusCode::kInvalidArgument;
  if (cls == "55") return StatusCode::kFailedPrecondition;
  if (cls == "40") return StatusCode::kAborted;
  return StatusCode::kInternal;
}

Result<ConnectParams> ParseConnectUri(std::string_view uri) {
  if (!uri.starts_with("postgresql://") && !uri.starts_with("postgres://")) {
    return Status::InvalidArgument(
        "a PostgreSQL URI starts with postgresql:// (postgresql://user:password@host:port/"
        "database)");
  }
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(uri).c_str(), &error);
  if (options == nullptr) {
    std::string why = error != nullptr ? error : "libpq could not read it";
    PQfreemem(error);
    while (!why.empty() && why.back() == '\n')
      why.pop_back();
    return Status::InvalidArgument("the PostgreSQL URI is malformed: " + why);
  }
  ConnectParams params;
  std::string port;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string_view key = o->keyword;
    if (key == "host") params.host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") params.database = o->val;
    if (key == "user") params.user = o->val;
    if (key == "password") params.password = o->val;
    if (key == "sslmode") params.sslmode = o->val;
  }
  PQconninfoFree(options);
  if (params.host.empty()) return Status::InvalidArgument("the PostgreSQL URI names no host");
  if (params.database.empty()) {
    return Status::InvalidArgument("the PostgreSQL URI names no database (.../database)");
  }
  if (!port.empty()) {
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535) {
      return Status::InvalidArgument("the PostgreSQL URI's port " + port + " is not a port");
    }
    params.port = value;
  }
  return params;
}

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const ConnectParams& params) {
  // The session's settings; warnings and errors only: a NOTICE (a table that already exists,
  // skipped) would reach the server's stderr through libpq's default notice printer.
  static constexpr char kSessionOptions[] =
      "-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=postgres -c extra_float_digits=1 -c "
      "client_min_messages=warning";
  const std::string port = std::to_string(params.port);
  const std::string timeout = std::to_string(params.connect_timeout.count());
  // libpq connects to exactly the address the endpoint policy allowed (hostaddr), and still
  // names the host (host) for TLS and messages.
  MR_ASSIGN_OR_RETURN(const std::string address, EndpointPolicy::Default().Resolve(params.host));
  std::vector<const char*> keys = {"host",
                                   "hostaddr",
                                   "port",
                                   "dbname",
                                   "user",
                                   "password",
                                   "connect_timeout",
                                   "application_name",
                                   "client_encoding",
                                   "options"};
  std::vector<const char*> values = {params.host.c_str(),
                                     address == params.host ? nullptr : address.c_str(),
                                     port.c_str(),
                                     params.database.c_str(),
                                     params.user.c_str(),
                                     params.password.c_str(),
                                     timeout.c_str(),
                                     "millrace",
                                     "UTF8",
                                     kSessionOptions};
  if (!params.sslmode.empty()) {
    keys.push_back("sslmode");
    values.push_back(params.sslmode.c_str());
  }
  if (params.replication) {
    keys.push_back("replication");
    values.push_back("database");
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/0);
  if (conn == nullptr) return Status::ResourceExhausted("libpq could not allocate a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    const bool used_password = PQconnectionUsedPassword(conn) != 0;
    const std::string message =
        "PostgreSQL " + Describe(params) + ": " + Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    return used_password ? Status::Unauthenticated(message) : Status::Unavailable(message);
  }
  return std::unique_ptr<PgConnection>(new PgConnection(conn, params));
}

PgConnection::~PgConnection() {
  PQfinish(conn_);
}

bool PgConnection::healthy() const {
  return PQstatus(conn_) == CONNECTION_OK;
}

Status PgConnection::ConnectionError(std::string_view what) const {
  return Status::Unavailable("PostgreSQL " + Describe(params_) + ": " + std::string(what) + ": " +
                             Trimmed(PQerrorMessage(conn_)));
}

Result<Rows> PgConnection::Query(std::string_view sql) {
  return TakeResult(PQexec(conn_, std::string(sql).c_str()));
}

Result<Rows> PgConnection::Query(std::string_view sql, const std::vector<Field>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Field& p : params)
    values.push_back(p ? p->c_str() : nullptr);
  return TakeResult(PQexecParams(conn_, std::string(sql).c_str(), static_cast<int>(params.size()),
                                 /*paramTypes=*/nullptr, values.data(), /*paramLengths=*/nullptr,
                                 /*paramFormats=*/nullptr, /*resultFormat=*/0));
}

Result<Rows> PgConnection::TakeResult(PGresult* raw) {
  ResultPtr result(raw);
  if (result == nullptr) return ConnectionError("query failed");
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    if (status == PGRES_FATAL_ERROR && PQstatus(conn_) != CONNECTION_OK) {
      return ConnectionError("connection lost");
    }
    return StatusFromResult(result.get());
  }
  Rows rows;
  rows.command = PQcmdStatus(result.get());
  const char* changed = PQcmdTuples(result.get());
  if (changed != nullptr && *changed != '\0') rows.changed = std::strtoll(changed, nullptr, 10);
  const int fields = PQnfields(result.get());
  for (int c = 0; c < fields; ++c)
    rows.columns.emplace_back(PQfname(result.get(), c));
  const int n = PQntuples(result.get());
  rows.rows.reserve(n);
  for (int r = 0; r < n; ++r) {
    Row row;
    row.reserve(fields);
    for (int c = 0; c < fields; ++c) {
      if (PQgetisnull(result.get(), r, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(PQgetvalue(result.get(), r, c),
                                     static_cast<size_t>(PQgetlength(result.get(), r, c))));
      }
    }
    rows.rows.push_back(std::move(row));
  }
  return rows;
}

Status PgConnection::Execute(std::string_view sql) {
  return Query(sql).status();
}

Status PgConnection::CopyOut(std::string_view copy_sql, const std::function<Status(Row&)>& row) {
  ResultPtr started(PQexec(conn_, std::string(copy_sql).c_str()));
  if (started == nullptr) return ConnectionError("COPY failed");
  if (PQresultStatus(started.get()) != PGRES_COPY_OUT) return StatusFromResult(started.get());
  started.reset();
  Status stopped;
  for (;;) {
    char* buffer = nullptr;
    const int n = PQgetCopyData(conn_, &buffer, /*async=*/0);
    if (n == -1) break;
    if (n == -2) return ConnectionError("COPY failed");
    std::string_view line(buffer, static_cast<size_t>(n));
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (stopped.ok()) {
      Row fields = DecodeCopyLine(line);
      stopped = row(fields);
      // Stop the server's sending; the rest of the data is read and dropped below.
      if (!stopped.ok()) Cancel();
    }
    PQfreemem(buffer);
  }
  ResultPtr done(PQgetResult(conn_));
  Status final_status;
  if (done != nullptr && PQresultStatus(done.get()) != PGRES_COMMAND_OK) {
    final_status = StatusFromResult(done.get());
  }
  // Drain: libpq returns NULL once the command is complete.
  while (ResultPtr extra{PQgetResult(conn_)}) {
  }
  if (!stopped.ok()) return stopped;
  return final_status;
}

Status PgConnection::CopyIn(std::string_view copy_sql,
                            const std::function<Result<bool>(std::string*)>& fill) {
  ResultPtr started(PQexec(conn_, std::string(copy_sql).c_str()));
  if (started == nullptr) return ConnectionError("COPY failed");
  if (PQresultStatus(started.get()) != PGRES_COPY_IN) return StatusFromResult(started.get());
  started.reset();
  std::string buffer;
  Status stopped;
  for (;;) {
    buffer.clear();
    Result<bool> more = fill(&buffer);
    if (!more.ok()) {
      stopped = more.status();
      break;
    }
    if (!buffer.empty() &&
        PQputCopyData(conn_, buffer.data(), static_cast<int>(buffer.size())) != 1) {
      return ConnectionError("COPY failed");
    }
    if (!*more) break;
  }
  // An error ends the copy with a message the server reports back as the statement's failure.
  if (PQputCopyEnd(conn_, stopped.ok() ? nullptr : "stopped by Millrace") != 1) {
    return ConnectionError("COPY failed");
  }
  ResultPtr done(PQgetResult(conn_));
  Status final_status;
  if (done == nullptr) {
    final_status = ConnectionError("COPY failed");
  } else if (PQresultStatus(done.get()) != PGRES_COMMAND_OK) {
    final_status = StatusFromResult(done.get());
  }
  while (ResultPtr extra{PQgetResult(conn_)}) {
  }
  if (!stopped.ok()) return stopped;
  return final_status;
}

void EncodeCopyField(const Field& value, std::string* line) {
  if (!value) {
    *line += "\\N";
    return;
  }
  for (char c : *value) {
    switch (c) {
      case '\\':
        *line += "\\\\";
        break;
      case '\t':
        *line += "\\t";
        break;
      case '\n':
        *line += "\\n";
        break;
      case '\r':
        *line += "\\r";
        break;
      default:
        *line += c;
    }
  }
}

std::string PgConnection::Literal(std::string_view value) const {
  char* quoted = PQescapeLiteral(conn_, value.data(), value.size());
  if (quoted == nullptr) return "''";
  std::string out = quoted;
  PQfreemem(quoted);
  return out;
}

std::string PgConnection::Identifier(std::string_view name) const {
  char* quoted = PQescapeIdentifier(conn_, name.data(), name.size());
  if (quoted == nullptr) return "\"\"";
  std::string out = quoted;
  PQfreemem(quoted);
  return out;
}

void PgConnection::Cancel() {
  PGcancel* cancel = PQgetCancel(conn_);
  if (cancel == nullptr) return;
  char error[256];
  // Best effort: a cancel that does not reach the server leaves the statement to finish.
  (void)PQcancel(cancel, error, sizeof(error));
  PQfreeCancel(cancel);
}

Row DecodeCopyLine(std::string_view line) {
  Row fields;
  std::string current;
  size_t field_start = 0;
  auto finish = [&](size_t end) {
    if (end - field_start == 2 && line.substr(field_start, 2) == "\\N") {
      fields.emplace_back(std::nullopt);
    } else {
      fields.emplace_back(std::move(current));
    }
    current.clear();
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\t') {
      finish(i);
      field_start = i + 1;
      continue;
    }
    if (c != '\\' || i + 1 == line.size()) {
      current += c;
      continue;
    }
    const char e = line[++i];
    switch (e) {
      case 'b':
        current += '\b';
        break;
      case 'f':
        current += '\f';
        break;
      case 'n':
        current += '\n';
        break;
      case 'r':
        current += '\r';
        break;
      case 't':
        current += '\t';
        break;
      case 'v':
        current += '\v';
        break;
      case 'x': {
        int value = 0;
        int digits = 0;
        while (digits < 2 && i + 1 < line.size() &&
               std::isxdigit(static_cast<unsigned char>(line[i + 1]))) {
          const char h = line[++i];
          value = value * 16 + (std::isdigit(static_cast<unsigned char>(h))
                                    ? h - '0'
                                    : (std::tolower(h) - 'a' + 10));
          ++digits;
        }
        if (digits == 0)
          current += 'x';
        else
          current += static_cast<char>(value);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = e - '0';
          for (int digits = 1;
               digits < 3 && i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '7';
               ++digits) {
            value = value * 8 + (line[++i] - '0');
          }
          current += static_cast<char>(value);
        } else {
          current += e;  // \\ and any other escaped character stand for themselves
        }
    }
  }
  finish(line.size());
  return fields;
}

}  // namespace millrace::pg
