// Test support for the MySQL front end: the server in-process or as the real `millrace serve`
// binary, a raw protocol client (to send exactly the bytes a test wants), the `mariadb` CLI and
// MariaDB Connector/C.
#pragma once

#include <gtest/gtest.h>
#include <mysql.h>
#include <openssl/types.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "common/result.h"
#include "engine/database.h"
#include "server/mysql_server.h"
#include "server/packet.h"
#include "sql/session.h"
#include "testing/s3rver.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

namespace millrace::server {

// The value of metric `name` in a Prometheus text rendering; -1 when absent.
double PrometheusValue(const std::string& text, const std::string& name);

// Database, router and MySqlServer in this process, on a free port.
class InProcessServer {
 public:
  // `options.port` is ignored (0: any free port).
  static Result<std::unique_ptr<InProcessServer>> Start(MySqlServerOptions options = {});
  ~InProcessServer();

  uint16_t port() const { return server_->port(); }
  MySqlServer& server() { return *server_; }
  sql::Router& router() { return *router_; }
  MetricsRegistry& metrics() { return metrics_; }
  // The value of a metric in the Prometheus rendering; -1 when absent.
  double Metric(const std::string& name) const;

 private:
  InProcessServer() = default;
  std::unique_ptr<engine::Database> db_;
  MetricsRegistry metrics_;
  std::unique_ptr<sql::Router> router_;
  std::unique_ptr<MySqlServer> server_;
};

// `millrace serve --data-dir <dir> --mysql-port 0 --http-port 0 ...` as a child process.
class ServerProcess {
 public:
  struct Options {
    std::vector<std::string> args;  // extra flags
    std::vector<std::string> env;   // "NAME=value"
  };
  static Result<std::unique_ptr<ServerProcess>> Start(const std::string& data_dir,
                                                      const Options& options);
  // Kills the server if it still runs.
  ~ServerProcess();

  // SIGTERM, then waits for the exit status (128+signal when killed).
  Result<int> Terminate(std::chrono::seconds timeout = std::chrono::seconds(30));

  pid_t pid() const { return pid_; }
  uint16_t mysql_port() const { return mysql_port_; }
  uint16_t http_port() const { return http_port_; }
  // VmRSS of the server, in bytes (0 when it cannot be read).
  size_t RssBytes() const;
  // What the server wrote to stderr so far.
  std::string Log() const;

 private:
  ServerProcess() = default;
  pid_t pid_ = -1;
  uint16_t mysql_port_ = 0;
  uint16_t http_port_ = 0;
  std::string log_path_;
};

// A fixture whose tests share one `millrace serve` process, started once per suite.
class SharedServerTest : public ::testing::Test {
 protected:
  static void StartServer(const ServerProcess::Options& options = {});
  static void StopServer();
  static ServerProcess& server() { return *server_; }
  // The server's --data-dir (local() and local-file jobs read under its inbox/).
  static const std::string& data_dir() { return dir_->path(); }

 private:
  static std::unique_ptr<testing::TempDir> dir_;
  static std::unique_ptr<ServerProcess> server_;
};

// GET http://127.0.0.1:<port><path> with cpp-httplib's client; returns the status code and
// body. With `ca_file`, GET https://... trusting that certificate (and verifying the server's).
// With a `user`, the request carries HTTP Basic credentials (every route but /api/health needs
// a login).
struct HttpReply {
  int status = 0;
  std::string body;
};
Result<HttpReply> HttpGet(uint16_t port, const std::string& path, const std::string& ca_file = "",
                          const std::string& user = "", const std::string& password = "");
// POST http://127.0.0.1:<port><path> of `body` (application/json), without a login.
Result<HttpReply> HttpPost(uint16_t port, const std::string& path, const std::string& body);
// The same GET as root with no password (the test servers' default).
inline Result<HttpReply> HttpGetAsRoot(uint16_t port, const std::string& path) {
  return HttpGet(port, path, "", "root", "");
}

// Runs `mariadb --batch -e <sql>` against 127.0.0.1:<port> as root.
Result<testing::ProcessResult> MariaDb(uint16_t port, const std::string& sql,
                                       const std::vector<std::string>& extra_args = {});

// `sql` through the same client with --skip-column-names: the rows, cells split at tabs.
// INTERNAL with the client's stderr when it exits non-zero.
Result<std::vector<std::vector<std::string>>> MariaDbRows(uint16_t port, const std::string& sql);

// ---------------------------------------------------------------------------------------------
// A protocol-level client for tests.

struct Greeting {
  uint8_t protocol = 0;
  std::string server_version;
  uint32_t connection_id = 0;
  std::string scramble;
  uint32_t capabilities = 0;
  uint16_t status = 0;
  std::string auth_plugin;
};

struct ColumnInfo {
  std::string schema;
  std::string name;
  uint8_t type = 0;
  uint16_t flags = 0;
  uint16_t charset = 0;
  uint32_t length = 0;
  uint8_t decimals = 0;
};

// One response to a command: OK, ERR, or a result set (possibly ended by an ERR).
struct Response {
  bool is_error = false;
  uint16_t error_code = 0;
  std::string sqlstate;
  std::string message;
  uint64_t affected_rows = 0;
  uint16_t status_flags = 0;
  bool has_result_set = false;
  std::vector<ColumnInfo> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;  // unless the client discards them
  uint64_t row_count = 0;
};

struct LoginOptions {
  std::string user = "root";
  std::string password;
  std::string auth_plugin = "mysql_native_password";
  std::optional<std::string> database;
  uint32_t capabilities = 0;  // 0: a modern client's flags
};

class RawClient {
 public:
  static Result<std::unique_ptr<RawClient>> Connect(uint16_t port);
  ~RawClient();

  // Raw bytes, no framing.
  Status SendBytes(std::string_view bytes);
  // A framed packet with the current sequence id.
  Status SendPacket(std::string_view payload);
  Result<std::string> ReadPacket(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // True when the server closes the connection within `timeout` (after discarding what it
  // still sends).
  bool WaitClosed(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  Result<Greeting> ReadGreeting();
  // After ReadGreeting: sends the SSL request (the first 32 bytes of a handshake response,
  // with CLIENT_SSL) in the same TCP segment as the TLS ClientHello, the hardest case for the
  // server, and completes the TLS handshake without verifying the server's certificate. Every
  // later packet, Login's first, travels encrypted.
  Status StartTls(const LoginOptions& options = {});
  // Sends the SSL request alone (a test then sends what it wants instead of a TLS handshake).
  Status SendSslRequest(const LoginOptions& options = {}, int send_flags = 0);
  bool tls() const { return ssl_ != nullptr; }
  // Completes the login after ReadGreeting; returns the server's final OK or ERR.
  Result<Response> Login(const Greeting& greeting, const LoginOptions& options);
  // ReadGreeting + Login; fails unless the server answers OK.
  Status Handshake(const LoginOptions& options = {});

  // Sends a command (sequence id 0) and reads every response it produces.
  Result<std::vector<Response>> Command(uint8_t command, std::string_view body);
  Result<std::vector<Response>> Query(std::string_view sql) { return Command(0x03, sql); }

  uint32_t capabilities() const { return capabilities_; }
  // Counts rows without keeping them (for large results).
  void set_keep_rows(bool keep) { keep_rows_ = keep; }
  uint8_t& sequence() { return sequence_; }

 private:
  RawClient(int fd) : fd_(fd), decoder_(1 << 30) {}
  Result<Response> ReadResponse();
  uint32_t ClientCapabilities(const LoginOptions& options) const;
  // recv() or SSL_read(): > 0 bytes read, 0 when the server closed, < 0 on an error.
  ssize_t Receive(char* buffer, size_t size);
  // True when bytes are ready without waiting (decrypted ones buffered, or the socket's).
  bool Readable(std::chrono::milliseconds timeout);

  int fd_;
  SSL_CTX* ssl_ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  PacketDecoder decoder_;
  uint8_t sequence_ = 0;
  uint32_t capabilities_ = 0;
  bool keep_rows_ = true;
};

// The handshake response a client sends (for tests that corrupt it).
std::string BuildClientHandshake(const LoginOptions& options, const std::string& scramble,
                                 uint32_t capabilities);
// The capability flags a modern client sends.
uint32_t DefaultClientCapabilities();

// ---------------------------------------------------------------------------------------------
// MariaDB Connector/C

struct MysqlCloser {
  void operator()(MYSQL* mysql) const { mysql_close(mysql); }
};
using MysqlPtr = std::unique_ptr<MYSQL, MysqlCloser>;

// Connects as `user` (root by default); on failure returns null and sets `*error`
// ("1045 (28000): ..."). `configure` sets further options (TLS) before the connection is made.
MysqlPtr ConnectorC(uint16_t port, const std::string& password, unsigned long flags = 0,
                    const char* database = nullptr, std::string* error = nullptr,
                    const std::function<void(MYSQL*)>& configure = nullptr,
                    const std::string& user = "root");

// The first column of the first row of `sql` ("NULL" for NULL); a failed query is a test
// failure and "".
std::string Scalar(MYSQL* mysql, const std::string& sql);

}  // namespace millrace::server
