#include "server/mysql_session.h"

#include <poll.h>

#include <algorithm>
#include <limits>

#include "common/logging.h"
#include "server/binary_protocol.h"
#include "server/column_types.h"
#include "server/protocol.h"
#include "sql/lexer.h"
#include "sql/mysql_errors.h"

namespace millrace::server {
namespace {

// Output is sent whenever this much is buffered, so a result never accumulates in memory.
constexpr size_t kFlushThreshold = 64 * 1024;

std::string HostOf(const std::string& peer) {
  const size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

}  // namespace

MySqlSession::MySqlSession(uint32_t id, std::unique_ptr<Channel> channel, SessionEnvironment env)
    : id_(id), channel_(std::move(channel)), env_(env), peer_(channel_->Peer()) {}

MySqlSession::~MySqlSession() = default;

void MySqlSession::Run() {
  env_.metrics->active->Add(1);
  MR_LOG(kDebug) << "connection " << id_ << " from " << peer_ << " opened";
  const Status status = Serve();
  channel_->Close();
  CloseSession();  // the DuckDB connection closes on this thread, not the server's
  login_.reset();
  MR_LOG(kDebug) << "connection " << id_ << " closed: " << status.ToString();
  env_.metrics->active->Add(-1);
}

void MySqlSession::RequestStop() {
  channel_->Post([this] {
    if (idle_) channel_->Close();
  });
}

void MySqlSession::ForceStop() {
  {
    MutexLock lock(&mu_);
    if (interruptible_ != nullptr) interruptible_->Interrupt();
  }
  channel_->Post([this] {
    {
      MutexLock lock(&mu_);
      watch_fd_ = -1;  // before the descriptor can be closed and reused
    }
    channel_->Close();
  });
}

void MySqlSession::InterruptIfClientGone() {
  MutexLock lock(&mu_);
  if (watch_fd_ < 0 || interruptible_ == nullptr) return;
  pollfd p{watch_fd_, POLLRDHUP, 0};
  if (::poll(&p, 1, 0) != 1 || (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0) return;
  MR_LOG(kInfo) << "connection " << id_ << ": the client has gone; its statement is interrupted";
  interruptible_->Interrupt();
  watch_fd_ = -1;  // once
}

std::chrono::milliseconds MySqlSession::net_timeout() const {
  return env_.options->net_timeout;
}

Status MySqlSession::Serve() {
  MR_RETURN_IF_ERROR(Handshake());
  return CommandLoop();
}

Result<Packet> MySqlSession::ReadPacket(std::chrono::milliseconds idle_timeout, bool exact) {
  Result<Packet> packet = channel_->Read(idle_timeout, net_timeout(), exact);
  if (packet.ok()) return packet;
  const Status& status = packet.status();
  if (status.code() == StatusCode::kResourceExhausted) {
    env_.metrics->protocol_errors->Add();
    SendErrorAndFlush(sql::kErNetPacketTooLarge, "08S01", status.message()).IgnoreError();
  } else if (status.code() == StatusCode::kDataLoss) {
    env_.metrics->protocol_errors->Add();
    SendErrorAndFlush(sql::kErNetPacketsOutOfOrder, "08S01", status.message()).IgnoreError();
  }
  return status;  // the connection closes; a failed farewell ERR changes nothing
}

void MySqlSession::WriteError(uint16_t code, std::string_view sqlstate, std::string_view message) {
  // Not filtered for registered secrets: a secret is kept out of a message where the message
  // is made (a view, a job's error), and a mask over a client's own echoed text would tell it
  // that a guessed value is someone's secret.
  channel_->Write(BuildErr(code, sqlstate, message));
}

void MySqlSession::WriteError(const Status& status) {
  env_.metrics->query_errors->Add();
  const sql::MySqlError error = sql::ClassifyError(status);
  WriteError(error.code, error.sqlstate, status.message());
}

Status MySqlSession::SendErrorAndFlush(uint16_t code, std::string_view sqlstate,
                                       std::string_view message) {
  WriteError(code, sqlstate, message);
  return channel_->Flush(net_timeout());
}

uint16_t MySqlSession::StatusFlags(bool more) const {
  uint16_t flags = kServerStatusNoBackslashEscapes;
  if (session_ == nullptr || session_->autocommit()) flags |= kServerStatusAutocommit;
  if (session_ != nullptr && session_->in_transaction()) flags |= kServerStatusInTrans;
  if (more) flags |= kServerMoreResultsExists;
  return flags;
}

Status MySqlSession::RefuseHandshake(const Status& status) {
  env_.metrics->protocol_errors->Add();
  SendErrorAndFlush(sql::kErHandshake, "08S01", "Bad handshake: " + status.message())
      .IgnoreError();  // the connection closes either way
  return status;
}

Result<HandshakeResponse> MySqlSession::ReadHandshakeResponse() {
  // Exact: after an SSL request, the client's TLS handshake follows on the socket.
  MR_ASSIGN_OR_RETURN(Packet packet, ReadPacket(net_timeout(), /*exact=*/true));
  Result<HandshakeResponse> response = ParseHandshakeResponse(packet.payload);
  if (!response.ok()) return RefuseHandshake(response.status());
  if (!response->ssl_request) return response;
  if (env_.tls == nullptr) {
    return RefuseHandshake(
        Status::NotSupported("TLS was requested but this server has no certificate"));
  }
  if (Status status = channel_->StartTls(*env_.tls, net_timeout()); !status.ok()) {
    env_.metrics->tls_failures->Add();
    MR_LOG(kDebug) << "connection " << id_ << ": " << status.message();
    return status;  // no ERR: the client expects TLS records, not a plain packet
  }
  env_.metrics->tls_connections->Add();
  MR_ASSIGN_OR_RETURN(packet, ReadPacket(net_timeout()));
  response = ParseHandshakeResponse(packet.payload);
  if (response.ok() && response->ssl_request) {
    response = Status::InvalidArgument("malformed handshake response: a second SSL request");
  }
  if (!response.ok()) return RefuseHandshake(response.status());
  return response;
}

Status MySqlSession::Handshake() {
  MR_ASSIGN_OR_RETURN(scramble_, GenerateScramble());
  const sql::RouterOptions& router_options = env_.router->options();
  const uint32_t offered = kServerCapabilities | (env_.tls != nullptr ? kClientSsl : 0);
  channel_->ResetSequence();
  channel_->Write(BuildHandshakeV10(router_options.server_version, id_, scramble_, offered,
                                    StatusFlags(false)));
  MR_RETURN_IF_ERROR(channel_->Flush(net_timeout()));

  MR_ASSIGN_OR_RETURN(HandshakeResponse response, ReadHandshakeResponse());
  const std::string host = HostOf(peer_);
  if (env_.options->require_tls && !channel_->tls()) {
    env_.metrics->auth_failures->Add();
    const std::string message =
        "Connections using insecure transport are prohibited while --require-tls is on";
    MR_LOG(kWarning) << "connection " << id_ << " from " << host << ": " << message;
    SendErrorAndFlush(kErSecureTransportRequired, "HY000", message).IgnoreError();  // closing
    return Status::PermissionDenied(message);
  }
  capabilities_ = response.capabilities & offered;
  MR_RETURN_IF_ERROR(Authenticate(response));
  if (response.database) {
    if (Status status = session_->Use(*response.database); !status.ok()) {
      const sql::MySqlError error = sql::ClassifyError(status);
      SendErrorAndFlush(error.code, error.sqlstate, status.message()).IgnoreError();
      return status;
    }
  }
  channel_->Write(BuildOk(0, StatusFlags(false)));
  return channel_->Flush(net_timeout());
}

Status MySqlSession::Authenticate(const HandshakeResponse& response) {
  std::string auth = response.auth_response;
  if ((capabilities_ & kClientPluginAuth) != 0 && !response.auth_plugin.empty() &&
      response.auth_plugin != kNativePasswordPlugin) {
    // E.g. caching_sha2_password: ask the client to answer the scramble the native way.
    channel_->Write(BuildAuthSwitchRequest(kNativePasswordPlugin, scramble_));
    MR_RETURN_IF_ERROR(channel_->Flush(net_timeout()));
    MR_ASSIGN_OR_RETURN(Packet reply, ReadPacket(net_timeout()));
    auth = std::move(reply.payload);
  }
  MR_RETURN_IF_ERROR(Login(response, auth));
  return OpenSession(response.user);
}

Status MySqlSession::OpenSession(const std::string& user) {
  CloseSession();
  MR_ASSIGN_OR_RETURN(session_, env_.router->NewSession(
                                    sql::SessionInfo{id_, user, HostOf(peer_), channel_->tls()}));
  {
    MutexLock lock(&mu_);
    interruptible_ = session_.get();
  }
  // KILL CONNECTION: a session waiting for its client's next command is closed at once (one
  // running a statement is interrupted, and closes after answering).
  session_->SetKillHook([this] {
    channel_->Post([this] {
      if (idle_) channel_->Close();
    });
  });
  return Status::Ok();
}

void MySqlSession::CloseSession() {
  // What streams from the session's connection goes first.
  CloseCursor();
  statements_.clear();
  {
    MutexLock lock(&mu_);
    interruptible_ = nullptr;
  }
  session_.reset();
}

Status MySqlSession::Login(const HandshakeResponse& response, std::string_view auth) {
  const std::string host = HostOf(peer_);
  const bool secure = channel_->tls();
  Status status = env_.authenticator->Authenticate(response.user, host, scramble_, auth, secure);
  if (!status.ok()) {
    env_.metrics->auth_failures->Add();
  } else {
    Result<std::unique_ptr<Authenticator::Login>> login = env_.authenticator->Admit(response.user);
    if (login.ok()) {
      login_ = std::move(login).value();
    } else {
      status = login.status();
    }
  }
  if (status.ok()) return status;
  // The message names user and host only, never the password or the answer.
  MR_LOG(kWarning) << "connection " << id_ << ": " << status.message();
  const sql::MySqlError error = sql::ClassifyError(status);
  SendErrorAndFlush(error.code, error.sqlstate, status.message()).IgnoreError();  // closing anyway
  return status;
}

namespace {

// Whether the command runs statements on the session's DuckDB connection, which ends the rows
// an open cursor streams from it.
bool RunsStatements(uint8_t command) {
  switch (command) {
    case kComPing:
    case kComStatistics:
    case kComSetOption:
    case kComStmtFetch:
    case kComStmtSendLongData:
    case kComStmtClose:
    case kComStmtReset:
      return false;
    default:
      return true;
  }
}

}  // namespace

Status MySqlSession::CommandLoop() {
  while (!env_.stopping->load()) {
    channel_->ResetSequence();
    idle_ = true;
    Result<Packet> packet = ReadPacket(env_.options->idle_timeout);
    idle_ = false;
    if (!packet.ok()) return packet.status();
    // KILL CONNECTION of this session while it waited: it ends without running more.
    if (session_->killed()) return Status::Ok();
    if (packet->payload.empty()) {
      env_.metrics->protocol_errors->Add();
      return Status::InvalidArgument("empty command packet");
    }
    const uint8_t command = static_cast<uint8_t>(packet->payload[0]);
    const std::string_view body = std::string_view(packet->payload).substr(1);
    if (RunsStatements(command)) CloseCursor();
    switch (command) {
      case kComQuit:
        return Status::Ok();
      case kComPing:
        channel_->Write(BuildOk(0, StatusFlags(false)));
        break;
      case kComInitDb: {
        Status status = session_->Use(body);
        if (status.ok()) {
          channel_->Write(BuildOk(0, StatusFlags(false)));
        } else {
          WriteError(status);
        }
        break;
      }
      case kComQuery:
        MR_RETURN_IF_ERROR(HandleQuery(body));
        break;
      case kComStmtPrepare:
        MR_RETURN_IF_ERROR(HandlePrepare(body));
        break;
      case kComStmtExecute:
        MR_RETURN_IF_ERROR(HandleExecute(body));
        break;
      case kComStmtSendLongData:
        MR_RETURN_IF_ERROR(HandleSendLongData(body));
        continue;  // no answer
      case kComStmtClose:
        HandleClose(body);
        continue;  // no answer
      case kComStmtReset:
        HandleReset(body);
        break;
      case kComStmtFetch:
        MR_RETURN_IF_ERROR(HandleFetch(body));
        break;
      case kComFieldList:
        MR_RETURN_IF_ERROR(HandleFieldList(body));
        break;
      case kComChangeUser:
        MR_RETURN_IF_ERROR(HandleChangeUser(body));
        break;
      case kComResetConnection:
        MR_RETURN_IF_ERROR(HandleResetConnection());
        break;
      case kComSetOption:
        MR_RETURN_IF_ERROR(HandleSetOption(body));
        break;
      case kComStatistics:
        HandleStatistics();
        break;
      case kComProcessKill:
        HandleProcessKill(body);
        break;
      default:
        env_.metrics->query_errors->Add();
        WriteError(sql::kErUnknownCommand, "08S01",
                   "Command " + CommandName(command) + " is not supported by Millrace");
        break;
    }
    MR_RETURN_IF_ERROR(channel_->Flush(net_timeout()));
    if (session_->killed()) return Status::Ok();  // KILL CONNECTION: closed after its answer
  }
  return Status::Ok();
}

Status MySqlSession::HandleQuery(std::string_view text) {
  if (sql::HasUnterminatedToken(text)) {
    env_.metrics->queries->Add();
    WriteError(sql::SyntaxError("the query ends inside a comment, string or quoted name"));
    return Status::Ok();
  }
  std::vector<std::string_view> statements = sql::SplitStatements(text);
  if (statements.size() > 1 && (capabilities_ & kClientMultiStatements) == 0) {
    env_.metrics->queries->Add();
    WriteError(sql::SyntaxError(
        "several statements in one query need the client option CLIENT_MULTI_STATEMENTS"));
    return Status::Ok();
  }
  if (statements.empty()) statements.push_back(text);  // reported as "Query was empty"
  StatementWatch watch(this);
  for (size_t i = 0; i < statements.size(); ++i) {
    const bool more = i + 1 < statements.size();
    env_.metrics->queries->Add();
    RunningStatement running(env_.metrics->running);
    MR_LOG(kDebug) << "connection " << id_ << ": " << env_.router->LoggableStatement(statements[i]);
    Result<sql::StatementResult> result = session_->Execute(statements[i]);
    if (!result.ok()) {
      WriteError(result.status());
      return Status::Ok();  // the first error ends the batch, as in MySQL
    }
    if (result->rows == nullptr) {
      channel_->Write(BuildOk(static_cast<uint64_t>(result->affected_rows), StatusFlags(more)));
      continue;
    }
    bool failed = false;
    MR_RETURN_IF_ERROR(SendResultSet(*result, more, &failed));
    if (failed) return Status::Ok();
  }
  return Status::Ok();
}

MySqlSession::RowStream MySqlSession::WriteColumns(sql::StatementResult& result) {
  RowStream stream;
  stream.rows = result.rows.get();
  const size_t columns = stream.rows->column_count();
  WireWriter w;
  w.LenEncInt(columns);
  channel_->Write(w.data());
  const std::string schema = session_->database().value_or("");
  stream.types.reserve(columns);
  stream.columns.reserve(columns);
  for (size_t c = 0; c < columns; ++c) {
    const engine::ColumnType& type = stream.rows->column_type(c);
    stream.types.push_back(type.id);
    stream.columns.push_back(MySqlColumnFor(type));
    channel_->Write(
        BuildColumnDefinition(schema, stream.rows->column_name(c), stream.columns.back()));
  }
  return stream;
}

Status MySqlSession::WriteRows(RowStream& stream, size_t limit, bool binary, bool* failed) {
  WireWriter w;
  for (size_t sent = 0; sent < limit;) {
    if (stream.chunk == nullptr || stream.next_row >= stream.chunk->size()) {
      Result<std::unique_ptr<engine::DataChunk>> chunk = stream.rows->Next();
      if (!chunk.ok()) {
        WriteError(session_->RecordError(chunk.status()));
        *failed = true;
        return Status::Ok();
      }
      stream.chunk = std::move(chunk).value();
      stream.next_row = 0;
      if (stream.chunk == nullptr) {
        stream.done = true;
        return Status::Ok();
      }
      continue;
    }
    const engine::DataChunk& data = *stream.chunk;
    const size_t end = std::min(data.size(), stream.next_row + (limit - sent));
    for (size_t r = stream.next_row; r < end; ++r) {
      w.Clear();
      if (binary) {
        AppendBinaryRow(data, r, stream.types, stream.columns, &w);
      } else {
        for (size_t c = 0; c < stream.types.size(); ++c)
          AppendTextCell(data, c, r, stream.types[c], &w);
      }
      channel_->Write(w.data());
    }
    env_.metrics->rows_sent->Add(end - stream.next_row);
    sent += end - stream.next_row;
    stream.next_row = end;
    if (channel_->buffered() >= kFlushThreshold) MR_RETURN_IF_ERROR(channel_->Flush(net_timeout()));
  }
  return Status::Ok();
}

Status MySqlSession::SendResultSet(sql::StatementResult& result, bool more, bool* failed,
                                   bool binary) {
  RowStream stream = WriteColumns(result);
  const bool deprecate_eof = (capabilities_ & kClientDeprecateEof) != 0;
  if (!deprecate_eof) channel_->Write(BuildEof(StatusFlags(more)));
  MR_RETURN_IF_ERROR(WriteRows(stream, std::numeric_limits<size_t>::max(), binary, failed));
  if (*failed) return Status::Ok();
  channel_->Write(deprecate_eof ? BuildOk(0, StatusFlags(more), /*eof_header=*/true)
                                : BuildEof(StatusFlags(more)));
  return Status::Ok();
}

}  // namespace millrace::server
