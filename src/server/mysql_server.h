// MySqlServer: the MySQL-protocol front end of Millrace (port 9030 by default).
//
// What it speaks
// - Protocol 4.1 handshake v10 with mysql_native_password; a client asking for another plugin
//   (caching_sha2_password, ...) receives an AuthSwitchRequest to mysql_native_password. Who
//   may log in is the Authenticator's to say (authenticator.h); without one, only `root`, with
//   the configured password (empty by default). A wrong user or password is MySQL error 1045
//   (28000), counted in the auth failures metric and logged without the password.
// - COM_QUERY (text result sets, OK packets with affected rows, ERR packets with MySQL error
//   numbers and SQLSTATEs from sql::ClassifyError), COM_INIT_DB, COM_PING, COM_QUIT. Any other
//   command is ERR 1047 (08S01) naming the command. Several statements in one COM_QUERY run in
//   order when the client set CLIENT_MULTI_STATEMENTS (each result but the last flagged
//   SERVER_MORE_RESULTS_EXISTS; the first error ends the batch); without it they are ERR 1064.
//   CLIENT_DEPRECATE_EOF is honoured when the client asks for it.
// - Statements are routed by sql::Router; column types and values follow column_types.h.
// - TLS, when MySqlServerOptions::tls holds a certificate: the greeting announces CLIENT_SSL;
//   a client that answers with an SSL request (a 32-byte handshake response with CLIENT_SSL)
//   runs the TLS handshake on the same socket and sends its full handshake response
//   encrypted, sequence ids continuing. With require_tls a client that logs in without TLS
//   gets ERR 3159 (HY000) before its password is checked. An SSL request to a server without
//   a certificate is ERR 1043; a failed TLS handshake closes the connection.
//   sql::SessionInfo::tls tells the SQL layer whether the session is encrypted.
//
// Concurrency model
// - One thread per connection. DuckDB calls block, so a session runs its statements on its own
//   thread; a slow or dead client therefore only ever holds its own thread. --max-connections
//   bounds the threads: the connection over the limit receives ERR 1040 and is closed.
// - Results stream: each DuckDB chunk is encoded and sent before the next one is fetched,
//   with at most ~64 KiB buffered per connection, so memory does not grow with result size.
// - Timeouts: a connection idle for --idle-timeout is closed; a packet that has started
//   arriving, the handshake, and every send of buffered output must complete within
//   --net-timeout. A packet longer than --max-packet-size is ERR 1153 and closes the
//   connection; a malformed packet or out-of-order sequence id closes that connection only.
//
// Lifecycle
// - Start() binds (port 0: any free port; see port()) and accepts on a background thread.
// - Shutdown(grace) stops accepting, closes idle connections at once, lets running statements
//   finish for up to `grace`, then interrupts them (ERR 1317 is not sent: the connection is
//   closed) and joins every thread. The Router and its Database must outlive the server.
// - Thread-safety: Start and Shutdown are called by the owner thread; port() and
//   active_sessions() from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/flags.h"
#include "common/metrics.h"
#include "common/result.h"
#include "common/server_config.h"
#include "common/tls.h"
#include "server/authenticator.h"
#include "sql/router.h"

namespace millrace::server {

struct MySqlServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 9030;
  std::string root_password;  // empty: no password
  // Who may log in; not owned, must outlive the server. Null: root alone, with root_password.
  Authenticator* authenticator = nullptr;
  std::chrono::seconds idle_timeout{28800};
  std::chrono::seconds net_timeout{60};
  size_t max_packet_size = 64 << 20;
  int max_connections = 512;
  // A user's connections when its own max_user_connections is 0 (enforced by the
  // authenticator's Admit; shown as @@max_user_connections); 0: no limit.
  int max_connections_per_user = 100;
  std::chrono::seconds shutdown_grace{30};
  std::shared_ptr<const TlsCredentials> tls;  // null: no TLS
  bool require_tls = false;                   // needs `tls`

  // The flags of `millrace serve` specific to this server (beyond ServerConfig::Flags()).
  static const std::vector<FlagSpec>& Flags();
  // Options from ServerConfig (address, port, password) and the flags above; `tls` is left
  // for the caller to load (common/tls.h), --require-tls without --tls-cert is refused.
  static Result<MySqlServerOptions> FromFlags(const ServerConfig& config, const ParsedFlags& flags);
  // The MySQL system variables these options define (@@wait_timeout, @@max_allowed_packet...).
  std::vector<sql::SystemVariable> SystemVariables() const;
};

class MySqlServer {
 public:
  MySqlServer(MySqlServerOptions options, sql::Router* router, MetricsRegistry* metrics);
  // Shuts down without grace if still running.
  ~MySqlServer();
  MySqlServer(const MySqlServer&) = delete;
  MySqlServer& operator=(const MySqlServer&) = delete;

  Status Start();
  uint16_t port() const;
  void Shutdown(std::chrono::milliseconds grace);
  // Connections whose session thread is still running.
  size_t active_sessions() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace millrace::server
