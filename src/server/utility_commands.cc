// MySqlSession's utility commands (mysql_session.h): COM_FIELD_LIST, COM_CHANGE_USER,
// COM_RESET_CONNECTION, COM_SET_OPTION, COM_STATISTICS and COM_PROCESS_KILL.
#include <cstdio>

#include "common/strings.h"
#include "server/mysql_session.h"
#include "server/wire.h"
#include "sql/lexer.h"
#include "sql/mysql_errors.h"

namespace millrace::server {
namespace {

// COM_SET_OPTION's options.
constexpr uint16_t kMultiStatementsOn = 0;
constexpr uint16_t kMultiStatementsOff = 1;

// SQL LIKE on a column name, case-insensitively as MySQL's general collation compares: `%`
// any run, `_` one character, `\` escapes the next.
bool LikeMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0;
  size_t t = 0;
  size_t star = std::string_view::npos;  // the last `%` seen, and where it resumed in text
  size_t resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star = p++;
      resume = t;
      continue;
    }
    if (p < pattern.size()) {
      const bool escaped = pattern[p] == '\\' && p + 1 < pattern.size();
      const char want = escaped ? pattern[p + 1] : pattern[p];
      if ((!escaped && want == '_') || ToLower(want) == ToLower(text[t])) {
        p += escaped ? 2 : 1;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++resume;
  }
  while (p < pattern.size() && pattern[p] == '%')
    ++p;
  return p == pattern.size();
}

}  // namespace

// COM_FIELD_LIST table\0 [wildcard]: the table's column definitions, each followed by its
// default (sent as NULL), then EOF. The columns are read as SELECT reads them, so privileges
// apply.
Status MySqlSession::HandleFieldList(std::string_view body) {
  // The table name ends at its NUL (some clients omit it when no wildcard follows).
  const size_t nul = body.find('\0');
  const std::string_view table = body.substr(0, nul);
  const std::string_view wildcard =
      nul == std::string_view::npos ? std::string_view() : body.substr(nul + 1);
  env_.metrics->queries->Add();
  Result<sql::StatementResult> result =
      session_->Execute("SELECT * FROM " + Backquoted(table) + " LIMIT 0");
  if (!result.ok()) {
    WriteError(result.status());
    return Status::Ok();
  }
  const engine::QueryResult& rows = *result->rows;
  const std::string schema = session_->database().value_or("");
  for (size_t c = 0; c < rows.column_count(); ++c) {
    if (!wildcard.empty() && !LikeMatch(wildcard, rows.column_name(c))) continue;
    WireWriter w;
    w.Null();  // the column's default
    channel_->Write(BuildColumnDefinition(schema, rows.column_name(c),
                                          MySqlColumnFor(rows.column_type(c)), table) +
                    w.Take());
  }
  WriteEndOfRows(StatusFlags(false));
  return Status::Ok();
}

// COM_CHANGE_USER: logs in as another user with the connection's scramble, with a new session
// (no prepared statements, variables at their defaults, the open transaction rolled back). A
// refused login, or a database the new user cannot use, is answered with ERR and closes.
Status MySqlSession::HandleChangeUser(std::string_view body) {
  Result<HandshakeResponse> request = ParseChangeUser(body, capabilities_);
  if (!request.ok()) {
    env_.metrics->protocol_errors->Add();
    WriteError(sql::kErMalformedPacket, "HY000", request.status().message());
    return request.status();
  }
  CloseSession();
  login_.reset();  // the new user is admitted in its place
  MR_RETURN_IF_ERROR(Authenticate(*request));
  if (request->database) {
    // Refused like a login: the client keeps its old user on an ERR, so the connection
    // cannot go on as the new one.
    if (Status status = session_->Use(*request->database); !status.ok()) {
      WriteError(status);
      return status;
    }
  }
  channel_->Write(BuildOk(0, StatusFlags(false)));
  return Status::Ok();
}

// COM_RESET_CONNECTION: the same user and database, with a new session.
Status MySqlSession::HandleResetConnection() {
  const std::string user = session_->info().user;
  const std::optional<std::string> database = session_->database();
  MR_RETURN_IF_ERROR(OpenSession(user));
  if (database) {
    if (Status status = session_->Use(*database); !status.ok()) {
      WriteError(status);
      return Status::Ok();
    }
  }
  channel_->Write(BuildOk(0, StatusFlags(false)));
  return Status::Ok();
}

// COM_SET_OPTION: multi-statements on or off; answered with EOF, as MySQL answers it.
Status MySqlSession::HandleSetOption(std::string_view body) {
  WireReader r(body);
  uint16_t option = 0;
  if (!r.Int2(&option)) {
    env_.metrics->protocol_errors->Add();
    WriteError(sql::kErMalformedPacket, "HY000", "COM_SET_OPTION is shorter than its 2 bytes");
    return Status::InvalidArgument("COM_SET_OPTION is shorter than its 2 bytes");
  }
  switch (option) {
    case kMultiStatementsOn:
      capabilities_ |= kClientMultiStatements;
      break;
    case kMultiStatementsOff:
      capabilities_ &= ~kClientMultiStatements;
      break;
    default:
      WriteError(sql::kErUnknownCommand, "08S01",
                 "Unknown COM_SET_OPTION option " + std::to_string(option));
      return Status::Ok();
  }
  WriteEndOfRows(StatusFlags(false));
  return Status::Ok();
}

// COM_STATISTICS: MySQL's one-line summary, as a bare string packet.
void MySqlSession::HandleStatistics() {
  const double uptime =
      std::chrono::duration<double>(env_.router->options().clock->SteadyNow() - env_.started)
          .count();
  const uint64_t questions = env_.metrics->queries->value();
  char line[256];
  std::snprintf(line, sizeof(line),
                "Uptime: %llu  Threads: %lld  Questions: %llu  Slow queries: 0  Opens: 0  "
                "Flush tables: 0  Open tables: 0  Queries per second avg: %.3f",
                static_cast<unsigned long long>(uptime),
                static_cast<long long>(env_.metrics->active->value()),
                static_cast<unsigned long long>(questions),
                uptime > 0 ? static_cast<double>(questions) / uptime : 0.0);
  channel_->Write(line);
}

// COM_PROCESS_KILL id: KILL CONNECTION id, with its privilege check.
void MySqlSession::HandleProcessKill(std::string_view body) {
  WireReader r(body);
  uint32_t id = 0;
  env_.metrics->queries->Add();
  Result<sql::StatementResult> result =
      r.Int4(&id) ? session_->Execute("KILL CONNECTION " + std::to_string(id))
                  : Result<sql::StatementResult>(
                        Status::InvalidArgument("COM_PROCESS_KILL is shorter than its 4 bytes"));
  if (!result.ok()) {
    WriteError(result.status());
    return;
  }
  channel_->Write(BuildOk(0, StatusFlags(false)));
}

}  // namespace millrace::server
