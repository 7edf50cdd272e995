// Internal to the server module: one client connection, from handshake to close, run on its
// own thread (see mysql_server.h for the protocol it speaks).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "server/authenticator.h"
#include "server/channel.h"
#include "server/column_types.h"
#include "server/mysql_server.h"
#include "server/protocol.h"
#include "server/server_metrics.h"
#include "sql/session.h"

namespace millrace::server {

// What all sessions share; owned by the server.
struct SessionEnvironment {
  sql::Router* router;
  const MySqlServerOptions* options;
  ServerMetrics* metrics;
  const std::atomic<bool>* stopping;
  Authenticator* authenticator;
  asio::ssl::context* tls = nullptr;  // null: no certificate, TLS not offered
  Clock::SteadyTime started{};        // when the server started (COM_STATISTICS' uptime)
};

class MySqlSession {
 public:
  MySqlSession(uint32_t id, std::unique_ptr<Channel> channel, SessionEnvironment env);
  ~MySqlSession();

  // Serves the connection until the client quits, an error closes it, or the server stops.
  void Run();
  // Any thread: closes the connection if it is waiting for a command; a running statement
  // finishes first and the session then ends.
  void RequestStop();
  // Any thread: interrupts the running statement and closes the connection.
  void ForceStop() EXCLUDES(mu_);
  // Any thread: when a statement runs and the client has closed its end of the connection
  // (it quit or died waiting), interrupts the statement, since nobody is left to read its
  // answer; the connection then closes when the answer cannot be sent.
  void InterruptIfClientGone() EXCLUDES(mu_);

 private:
  Status Serve();
  Status Handshake();
  // The client's handshake response, read after a TLS handshake when the client asks for TLS.
  // A malformed one is answered with ERR 1043 before its error is returned.
  Result<HandshakeResponse> ReadHandshakeResponse();
  // Sends ERR 1043 for a malformed handshake response; returns `status`.
  Status RefuseHandshake(const Status& status);
  // Asks the authenticator whether the client may log in; a refusal has been answered with ERR
  // when this returns it.
  Status Login(const HandshakeResponse& response, std::string_view auth);
  // Checks the client's answer to scramble_ (switching it to mysql_native_password first when
  // it named another plugin) and opens a session for the user; a refusal has been answered.
  Status Authenticate(const HandshakeResponse& response);
  // A new sql::Session for `user`, replacing the current one (CloseSession).
  Status OpenSession(const std::string& user);
  // Closes the cursor, the prepared statements and the sql::Session (its open transaction is
  // rolled back).
  void CloseSession();
  // COM_FIELD_LIST, COM_CHANGE_USER, COM_RESET_CONNECTION, COM_SET_OPTION, COM_STATISTICS and
  // COM_PROCESS_KILL (utility_commands.cc). A malformed packet, a broken connection or a
  // refused COM_CHANGE_USER (answered with ERR; the connection then closes) is an error.
  Status HandleFieldList(std::string_view body);
  Status HandleChangeUser(std::string_view body);
  Status HandleResetConnection();
  Status HandleSetOption(std::string_view body);
  void HandleStatistics();
  void HandleProcessKill(std::string_view body);
  Status CommandLoop();
  Status HandleQuery(std::string_view text);
  // Prepared statements (statement_commands.cc): COM_STMT_PREPARE, _EXECUTE, _SEND_LONG_DATA,
  // _CLOSE and _RESET. Only a broken connection or a malformed packet is an error here; a
  // statement's error is answered with ERR.
  Status HandlePrepare(std::string_view sql);
  Status HandleExecute(std::string_view body);
  Status HandleSendLongData(std::string_view body);
  void HandleClose(std::string_view body);
  void HandleReset(std::string_view body);
  // Sends one result set, in the text protocol or (`binary`) the prepared statements' one. A
  // statement error while streaming becomes an ERR packet and sets `*failed`; the returned
  // status is not OK only when the connection is broken.
  Status SendResultSet(sql::StatementResult& result, bool more, bool* failed, bool binary = false);
  // A result's rows as they are sent: whole (SendResultSet) or a cursor's fetches at a time.
  struct RowStream {
    engine::QueryResult* rows = nullptr;
    std::vector<engine::TypeId> types;
    std::vector<MySqlColumn> columns;
    std::unique_ptr<engine::DataChunk> chunk;  // being sent, from row next_row
    size_t next_row = 0;
    bool done = false;  // every row sent
  };
  // Writes the column count and definitions of `result` (no EOF after them).
  RowStream WriteColumns(sql::StatementResult& result);
  // Writes up to `limit` rows; an error while reading is answered with ERR and sets `*failed`.
  Status WriteRows(RowStream& stream, size_t limit, bool binary, bool* failed);
  // COM_STMT_FETCH (statement_commands.cc): the next rows of the cursor a COM_STMT_EXECUTE
  // with CURSOR_TYPE_READ_ONLY opened.
  Status HandleFetch(std::string_view body);
  // Closes the open cursor, if any (before another statement runs on the session: the
  // cursor's rows stream from the session's DuckDB connection).
  void CloseCursor();
  // The EOF after a cursor's metadata or rows (an OK with the EOF header under
  // CLIENT_DEPRECATE_EOF).
  void WriteEndOfRows(uint16_t flags);
  // Reads a packet; an oversized or out-of-order one is answered with ERR before the error
  // is returned.
  Result<Packet> ReadPacket(std::chrono::milliseconds idle_timeout, bool exact = false);
  void WriteError(const Status& status);
  void WriteError(uint16_t code, std::string_view sqlstate, std::string_view message);
  Status SendErrorAndFlush(uint16_t code, std::string_view sqlstate, std::string_view message);
  uint16_t StatusFlags(bool more) const;
  std::chrono::milliseconds net_timeout() const;

  const uint32_t id_;
  std::unique_ptr<Channel> channel_;
  SessionEnvironment env_;
  std::string peer_;
  std::string scramble_;
  uint32_t capabilities_ = 0;
  bool idle_ = false;  // waiting for a command; touched on the session thread only
  std::unique_ptr<Authenticator::Login> login_;  // held until the connection closes
  std::unique_ptr<sql::Session> session_;
  // The client's prepared statements, by id; released before session_.
  struct Prepared {
    std::unique_ptr<sql::ClientStatement> statement;
    std::vector<uint16_t> types;                        // bound by the last COM_STMT_EXECUTE
    std::vector<std::optional<std::string>> long_data;  // COM_STMT_SEND_LONG_DATA, per param
  };
  std::map<uint32_t, Prepared> statements_;
  // The open cursor (at most one), released before session_.
  struct Cursor {
    uint32_t statement_id = 0;
    sql::StatementResult result;
    RowStream stream;
  };
  std::unique_ptr<Cursor> cursor_;
  uint32_t next_statement_id_ = 1;
  Mutex mu_;
  sql::Session* interruptible_ GUARDED_BY(mu_) = nullptr;  // session_, for ForceStop
  // The socket's descriptor while a statement runs (StatementWatch), -1 otherwise: the watch
  // polls it only under mu_, and it is cleared under mu_ before the socket can close.
  int watch_fd_ GUARDED_BY(mu_) = -1;
  class StatementWatch;
};

// Exposes the socket to the watch while a command's statement runs.
class MySqlSession::StatementWatch {
 public:
  explicit StatementWatch(MySqlSession* session) : session_(session) {
    const int fd = session_->channel_->fd();
    MutexLock lock(&session_->mu_);
    session_->watch_fd_ = fd;
  }
  ~StatementWatch() {
    MutexLock lock(&session_->mu_);
    session_->watch_fd_ = -1;
  }
  StatementWatch(const StatementWatch&) = delete;
  StatementWatch& operator=(const StatementWatch&) = delete;

 private:
  MySqlSession* session_;
};

}  // namespace millrace::server
