#include "server/mysql_test_util.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "access/password.h"
#include "server/protocol.h"
#include "server/wire.h"
#include "sql/mysql_types.h"
#include "testing/test_paths.h"

namespace millrace::server {
namespace {

using std::chrono::milliseconds;

}  // namespace

// ---------------------------------------------------------------------------------------------
// InProcessServer

Result<std::unique_ptr<InProcessServer>> InProcessServer::Start(MySqlServerOptions options) {
  std::unique_ptr<InProcessServer> s(new InProcessServer());
  MR_ASSIGN_OR_RETURN(s->db_, engine::Database::Open({}));
  sql::RouterOptions router_options;
  router_options.system_variables = options.SystemVariables();
  s->router_ = std::make_unique<sql::Router>(s->db_.get(), router_options);
  MR_RETURN_IF_ERROR(s->router_->InstallMysqlInformationSchema());
  options.port = 0;
  s->server_ = std::make_unique<MySqlServer>(options, s->router_.get(), &s->metrics_);
  MR_RETURN_IF_ERROR(s->server_->Start());
  return s;
}

InProcessServer::~InProcessServer() {
  if (server_) server_->Shutdown(std::chrono::seconds(5));
}

double PrometheusValue(const std::string& text, const std::string& name) {
  const std::string prefix = "\n" + name + " ";
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + prefix.size()));
}

double InProcessServer::Metric(const std::string& name) const {
  return PrometheusValue(metrics_.RenderPrometheus(), name);
}

// ---------------------------------------------------------------------------------------------
// ServerProcess

Result<std::unique_ptr<ServerProcess>> ServerProcess::Start(const std::string& data_dir,
                                                            const Options& options) {
  std::unique_ptr<ServerProcess> p(new ServerProcess());
  p->log_path_ = data_dir + "/server.log";
  std::vector<std::string> argv = {testing::MillraceBinary(),
                                   "serve",
                                   "--data-dir",
                                   data_dir,
                                   "--mysql-port",
                                   "0",
                                   "--http-port",
                                   "0"};
  argv.insert(argv.end(), options.args.begin(), options.args.end());
  MR_ASSIGN_OR_RETURN(p->pid_,
                      testing::SpawnProcess(argv, options.env, p->log_path_, p->log_path_));

  // The server writes ports.json once both servers listen. Until then (or while an older
  // server's file is there) the text is absent, not JSON yet, or names another pid.
  bool exited = false;
  int wait_status = 0;
  const bool done = testing::WaitFor(
      [&] {
        const nlohmann::json ports =
            nlohmann::json::parse(testing::ReadFile(data_dir + "/ports.json"), nullptr,
                                  /*allow_exceptions=*/false);
        auto number = [&](const char* name) -> int64_t {
          if (!ports.is_object()) return -1;
          const auto it = ports.find(name);
          return it != ports.end() && it->is_number_unsigned() ? it->get<int64_t>() : -1;
        };
        if (number("pid") == p->pid_ && number("mysql_port") > 0 && number("http_port") > 0) {
          p->mysql_port_ = static_cast<uint16_t>(number("mysql_port"));
          p->http_port_ = static_cast<uint16_t>(number("http_port"));
          return true;
        }
        exited = ::waitpid(p->pid_, &wait_status, WNOHANG) == p->pid_;
        return exited;
      },
      std::chrono::seconds(60));
  if (exited) {
    p->pid_ = -1;
    return Status::Unavailable("millrace serve exited with status " +
                               std::to_string(testing::ExitCode(wait_status)) + ": " + p->Log());
  }
  if (!done) {
    return Status::DeadlineExceeded("millrace serve did not start within 60 s: " + p->Log());
  }
  return p;
}

ServerProcess::~ServerProcess() {
  if (pid_ <= 0) return;
  int wait_status = 0;
  ::kill(pid_, SIGKILL);
  testing::WaitForExit(pid_, std::chrono::seconds(10), &wait_status);
}

Result<int> ServerProcess::Terminate(std::chrono::seconds timeout) {
  if (pid_ <= 0) return Status::FailedPrecondition("the server is not running");
  ::kill(pid_, SIGTERM);
  int wait_status = 0;
  if (!testing::WaitForExit(pid_, timeout, &wait_status)) {
    return Status::DeadlineExceeded("millrace serve did not stop within " +
                                    std::to_string(timeout.count()) + " s of SIGTERM");
  }
  pid_ = -1;
  return testing::ExitCode(wait_status);
}

size_t ServerProcess::RssBytes() const {
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string ServerProcess::Log() const {
  return testing::ReadFile(log_path_);
}

std::unique_ptr<testing::TempDir> SharedServerTest::dir_;
std::unique_ptr<ServerProcess> SharedServerTest::server_;

void SharedServerTest::StartServer(const ServerProcess::Options& options) {
  dir_ = std::make_unique<testing::TempDir>();
  auto server = ServerProcess::Start(dir_->path(), options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server_ = std::move(server).value();
}

void SharedServerTest::StopServer() {
  server_.reset();
  dir_.reset();
}

Result<HttpReply> HttpGet(uint16_t port, const std::string& path, const std::string& ca_file,
                          const std::string& user, const std::string& password) {
  httplib::Client client((ca_file.empty() ? "http://127.0.0.1:" : "https://127.0.0.1:") +
                         std::to_string(port));
  client.set_read_timeout(std::chrono::seconds(10));
  if (!ca_file.empty()) {
    client.set_ca_cert_path(ca_file.c_str());
    client.enable_server_certificate_verification(true);
  }
  if (!user.empty()) client.set_basic_auth(user.c_str(), password.c_str());
  auto res = client.Get(path.c_str());
  if (!res) {
    return Status::Unavailable("GET " + path + " failed: " + httplib::to_string(res.error()));
  }
  return HttpReply{res->status, res->body};
}

Result<HttpReply> HttpPost(uint16_t port, const std::string& path, const std::string& body) {
  httplib::Client client("http://127.0.0.1:" + std::to_string(port));
  client.set_read_timeout(std::chrono::seconds(10));
  auto res = client.Post(path.c_str(), body, "application/json");
  if (!res) {
    return Status::Unavailable("POST " + path + " failed: " + httplib::to_string(res.error()));
  }
  return HttpReply{res->status, res->body};
}

Result<testing::ProcessResult> MariaDb(uint16_t port, const std::string& sql,
                                       const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {"/usr/bin/mariadb",          "--no-defaults", "-h127.0.0.1",
                                   "-P" + std::to_string(port), "-uroot",        "--batch"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  argv.push_back("-e");
  argv.push_back(sql);
  return testing::RunProcess(argv, {}, std::chrono::seconds(60));
}

Result<std::vector<std::vector<std::string>>> MariaDbRows(uint16_t port, const std::string& sql) {
  MR_ASSIGN_OR_RETURN(auto result, MariaDb(port, sql, {"--skip-column-names"}));
  if (result.exit_code != 0) return Status::Internal("mariadb: " + result.err);
  std::vector<std::vector<std::string>> rows;
  size_t start = 0;
  while (start < result.out.size()) {
    size_t end = result.out.find('\n', start);
    if (end == std::string::npos) end = result.out.size();
    std::vector<std::string> row;
    size_t cell = start;
    while (true) {
      const size_t tab = result.out.find('\t', cell);
      if (tab == std::string::npos || tab > end) {
        row.push_back(result.out.substr(cell, end - cell));
        break;
      }
      row.push_back(result.out.substr(cell, tab - cell));
      cell = tab + 1;
    }
    rows.push_back(std::move(row));
    start = end + 1;
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// RawClient

uint32_t DefaultClientCapabilities() {
  return kClientLongPassword | kClientLongFlag | kClientProtocol41 | kClientTransactions |
         kClientSecureConnection | kClientMultiStatements | kClientMultiResults |
         kClientPluginAuth | kClientPluginAuthLenencData | kClientDeprecateEof;
}

std::string BuildClientHandshake(const LoginOptions& options, const std::string& scramble,
                                 uint32_t capabilities) {
  const std::string auth = access::NativePasswordResponse(options.password, scramble);
  WireWriter w;
  w.Int4(capabilities)
      .Int4(1 << 24)
      .Int1(static_cast<uint8_t>(sql::kUtf8mb4GeneralCi))
      .Zeros(23)
      .NulString(options.user);
  if ((capabilities & kClientPluginAuthLenencData) != 0) {
    w.LenEncString(auth);
  } else {
    w.Int1(static_cast<uint8_t>(auth.size())).Raw(auth);
  }
  if ((capabilities & kClientConnectWithDb) != 0) w.NulString(options.database.value_or(""));
  if ((capabilities & kClientPluginAuth) != 0) w.NulString(options.auth_plugin);
  return w.Take();
}

Result<std::unique_ptr<RawClient>> RawClient::Connect(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    return Status::Unavailable("connect to port " + std::to_string(port) + ": " + error);
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return std::unique_ptr<RawClient>(new RawClient(fd));
}

RawClient::~RawClient() {
  SSL_free(ssl_);
  SSL_CTX_free(ssl_ctx_);
  ::close(fd_);
}

Status RawClient::SendBytes(std::string_view bytes) {
  if (ssl_ != nullptr) {
    if (bytes.empty()) return Status::Ok();
    if (SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) <= 0) {
      ERR_clear_error();
      return Status::Unavailable("TLS send failed");
    }
    return Status::Ok();
  }
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable(std::string("send: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status RawClient::SendPacket(std::string_view payload) {
  std::string framed;
  AppendPacket(payload, &sequence_, &framed);
  return SendBytes(framed);
}

Result<std::string> RawClient::ReadPacket(milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    MR_ASSIGN_OR_RETURN(std::optional<Packet> packet, decoder_.Next(&sequence_));
    if (packet) return std::move(packet->payload);
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::DeadlineExceeded("no packet from the server");
    if (!Readable(left)) continue;
    char buf[65536];
    const ssize_t n = Receive(buf, sizeof(buf));
    if (n == 0) return Status::Unavailable("the server closed the connection");
    if (n < 0) return Status::Unavailable(std::string("recv: ") + std::strerror(errno));
    decoder_.Append(std::string_view(buf, static_cast<size_t>(n)));
  }
}

bool RawClient::Readable(milliseconds timeout) {
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  pollfd pfd{fd_, POLLIN, 0};
  return ::poll(&pfd, 1, static_cast<int>(timeout.count())) > 0;
}

ssize_t RawClient::Receive(char* buffer, size_t size) {
  if (ssl_ == nullptr) return ::recv(fd_, buffer, size, 0);
  const int n = SSL_read(ssl_, buffer, static_cast<int>(size));
  if (n > 0) return n;
  const int error = SSL_get_error(ssl_, n);
  ERR_clear_error();
  // A close_notify, or the server closing the socket without one.
  return error == SSL_ERROR_ZERO_RETURN || error == SSL_ERROR_SYSCALL || error == SSL_ERROR_SSL
             ? 0
             : -1;
}

bool RawClient::WaitClosed(milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!Readable(milliseconds(50))) continue;
    char buf[65536];
    const ssize_t n = Receive(buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return true;
  }
  return false;
}

Result<Greeting> RawClient::ReadGreeting() {
  sequence_ = 0;
  MR_ASSIGN_OR_RETURN(std::string payload, ReadPacket());
  WireReader r(payload);
  Greeting g;
  std::string_view version, part1, part2, plugin;
  uint16_t caps_low = 0, caps_high = 0;
  uint8_t charset = 0, auth_length = 0;
  if (!r.Int1(&g.protocol) || !r.NulString(&version) || !r.Int4(&g.connection_id) ||
      !r.Bytes(8, &part1) || !r.Skip(1) || !r.Int2(&caps_low) || !r.Int1(&charset) ||
      !r.Int2(&g.status) || !r.Int2(&caps_high) || !r.Int1(&auth_length) || !r.Skip(10) ||
      !r.Bytes(std::max<int>(13, auth_length - 8), &part2) || !r.NulString(&plugin)) {
    return Status::DataLoss("malformed greeting");
  }
  g.server_version = std::string(version);
  g.capabilities = caps_low | (uint32_t{caps_high} << 16);
  g.scramble = std::string(part1) + std::string(part2.substr(0, part2.size() - 1));
  g.auth_plugin = std::string(plugin);
  return g;
}

namespace {

void ParseError(WireReader& r, Response* response) {
  std::string_view state;
  response->is_error = true;
  r.Int2(&response->error_code);
  r.Skip(1);
  r.Bytes(5, &state);
  response->sqlstate = std::string(state);
  response->message = std::string(r.Rest());
}

void ParseOk(WireReader& r, Response* response) {
  uint64_t insert_id = 0;
  r.LenEncInt(&response->affected_rows);
  r.LenEncInt(&insert_id);
  r.Int2(&response->status_flags);
}

}  // namespace

uint32_t RawClient::ClientCapabilities(const LoginOptions& options) const {
  return (options.capabilities != 0 ? options.capabilities : DefaultClientCapabilities()) |
         (options.database ? kClientConnectWithDb : 0) | (ssl_ != nullptr ? kClientSsl : 0);
}

Status RawClient::SendSslRequest(const LoginOptions& options, int send_flags) {
  const std::string request =
      BuildClientHandshake(options, "", ClientCapabilities(options) | kClientSsl).substr(0, 32);
  std::string framed;
  AppendPacket(request, &sequence_, &framed);
  if (::send(fd_, framed.data(), framed.size(), MSG_NOSIGNAL | send_flags) !=
      static_cast<ssize_t>(framed.size())) {
    return Status::Unavailable(std::string("send: ") + std::strerror(errno));
  }
  return Status::Ok();
}

Status RawClient::StartTls(const LoginOptions& options) {
  // OpenSSL writes with write(): a server that hangs up must not kill the test with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  ssl_ctx_ = SSL_CTX_new(TLS_client_method());
  if (ssl_ctx_ == nullptr) return Status::Internal("SSL_CTX_new failed");
  SSL* ssl = SSL_new(ssl_ctx_);
  if (ssl == nullptr || SSL_set_fd(ssl, fd_) != 1) {
    SSL_free(ssl);
    return Status::Internal("SSL_new failed");
  }
  // MSG_MORE holds the request back until the ClientHello joins it in one segment.
  if (Status sent = SendSslRequest(options, MSG_MORE); !sent.ok()) {
    SSL_free(ssl);
    return sent;
  }
  const timeval timeout{10, 0};  // the handshake reads block; bound them
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (SSL_connect(ssl) != 1) {
    const unsigned long error = ERR_get_error();
    ERR_clear_error();
    SSL_free(ssl);
    return Status::Unavailable(std::string("TLS handshake failed: ") +
                               (error != 0 ? ERR_reason_error_string(error) : "connection closed"));
  }
  ssl_ = ssl;
  return Status::Ok();
}

Result<Response> RawClient::Login(const Greeting& greeting, const LoginOptions& options) {
  capabilities_ = ClientCapabilities(options);
  MR_RETURN_IF_ERROR(SendPacket(BuildClientHandshake(options, greeting.scramble, capabilities_)));
  MR_ASSIGN_OR_RETURN(std::string reply, ReadPacket());
  if (!reply.empty() && static_cast<uint8_t>(reply[0]) == 0xfe && reply.size() > 1) {
    // AuthSwitchRequest: answer the new scramble the native way.
    WireReader r(reply);
    std::string_view plugin, data;
    r.Skip(1);
    if (!r.NulString(&plugin) || !r.NulString(&data)) return Status::DataLoss("bad auth switch");
    if (plugin != kNativePasswordPlugin) return Status::DataLoss("unexpected plugin");
    MR_RETURN_IF_ERROR(SendPacket(access::NativePasswordResponse(options.password, data)));
    MR_ASSIGN_OR_RETURN(reply, ReadPacket());
  }
  WireReader r(reply);
  Response response;
  uint8_t header = 0;
  r.Int1(&header);
  if (header == 0xff) {
    ParseError(r, &response);
  } else if (header == 0x00) {
    ParseOk(r, &response);
  } else {
    return Status::DataLoss("unexpected login reply");
  }
  return response;
}

Status RawClient::Handshake(const LoginOptions& options) {
  MR_ASSIGN_OR_RETURN(Greeting greeting, ReadGreeting());
  MR_ASSIGN_OR_RETURN(Response response, Login(greeting, options));
  if (response.is_error) {
    return Status::PermissionDenied(std::to_string(response.error_code) + ": " + response.message);
  }
  return Status::Ok();
}

Result<Response> RawClient::ReadResponse() {
  MR_ASSIGN_OR_RETURN(std::string first, ReadPacket());
  Response response;
  WireReader r(first);
  uint8_t header = 0;
  if (!r.Int1(&header)) return Status::DataLoss("empty response packet");
  if (header == 0xff) {
    ParseError(r, &response);
    return response;
  }
  if (header == 0x00) {
    ParseOk(r, &response);
    return response;
  }
  WireReader count_reader(first);
  uint64_t columns = 0;
  if (!count_reader.LenEncInt(&columns)) return Status::DataLoss("bad column count");
  response.has_result_set = true;
  for (uint64_t i = 0; i < columns; ++i) {
    MR_ASSIGN_OR_RETURN(std::string def, ReadPacket());
    WireReader d(def);
    std::string_view catalog, schema, table, org_table, name, org_name;
    uint64_t fixed = 0;
    ColumnInfo column;
    if (!d.LenEncString(&catalog) || !d.LenEncString(&schema) || !d.LenEncString(&table) ||
        !d.LenEncString(&org_table) || !d.LenEncString(&name) || !d.LenEncString(&org_name) ||
        !d.LenEncInt(&fixed) || !d.Int2(&column.charset) || !d.Int4(&column.length) ||
        !d.Int1(&column.type) || !d.Int2(&column.flags) || !d.Int1(&column.decimals)) {
      return Status::DataLoss("malformed column definition");
    }
    column.schema = std::string(schema);
    column.name = std::string(name);
    response.columns.push_back(std::move(column));
  }
  const bool deprecate_eof = (capabilities_ & kClientDeprecateEof) != 0;
  if (!deprecate_eof) {
    MR_ASSIGN_OR_RETURN(std::string eof, ReadPacket());
    if (eof.empty() || static_cast<uint8_t>(eof[0]) != 0xfe) {
      return Status::DataLoss("missing EOF after the column definitions");
    }
  }
  while (true) {
    MR_ASSIGN_OR_RETURN(std::string row, ReadPacket());
    WireReader rr(row);
    const uint8_t first_byte = row.empty() ? 0 : static_cast<uint8_t>(row[0]);
    if (first_byte == 0xfe && row.size() < 9) {
      rr.Skip(1);
      if (deprecate_eof) {
        ParseOk(rr, &response);
      } else {
        uint16_t warnings = 0;
        rr.Int2(&warnings);
        rr.Int2(&response.status_flags);
      }
      return response;
    }
    if (first_byte == 0xff) {
      rr.Skip(1);
      ParseError(rr, &response);
      return response;
    }
    std::vector<std::optional<std::string>> values;
    for (size_t c = 0; c < response.columns.size(); ++c) {
      if (rr.remaining() > 0 && static_cast<uint8_t>(row[row.size() - rr.remaining()]) == 0xfb) {
        rr.Skip(1);
        values.emplace_back(std::nullopt);
        continue;
      }
      std::string_view value;
      if (!rr.LenEncString(&value)) return Status::DataLoss("malformed row");
      values.emplace_back(std::string(value));
    }
    ++response.row_count;
    if (keep_rows_) response.rows.push_back(std::move(values));
  }
}

Result<std::vector<Response>> RawClient::Command(uint8_t command, std::string_view body) {
  sequence_ = 0;
  std::string payload(1, static_cast<char>(command));
  payload.append(body);
  MR_RETURN_IF_ERROR(SendPacket(payload));
  std::vector<Response> responses;
  while (true) {
    MR_ASSIGN_OR_RETURN(Response response, ReadResponse());
    const bool more = !response.is_error && (response.status_flags & kServerMoreResultsExists);
    responses.push_back(std::move(response));
    if (!more) return responses;
  }
}

// ---------------------------------------------------------------------------------------------
// Connector/C

MysqlPtr ConnectorC(uint16_t port, const std::string& password, unsigned long flags,
                    const char* database, std::string* error,
                    const std::function<void(MYSQL*)>& configure, const std::string& user) {
  MysqlPtr mysql(mysql_init(nullptr));
  const unsigned int timeout = 30;
  mysql_options(mysql.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(mysql.get(), MYSQL_OPT_READ_TIMEOUT, &timeout);
  if (configure) configure(mysql.get());
  if (mysql_real_connect(mysql.get(), "127.0.0.1", user.c_str(), password.c_str(), database, port,
                         nullptr, flags) == nullptr) {
    if (error != nullptr) {
      *error = std::to_string(mysql_errno(mysql.get())) + " (" + mysql_sqlstate(mysql.get()) +
               "): " + mysql_error(mysql.get());
    }
    return nullptr;
  }
  return mysql;
}

std::string Scalar(MYSQL* mysql, const std::string& sql) {
  if (mysql_query(mysql, sql.c_str()) != 0) {
    ADD_FAILURE() << sql << ": " << mysql_error(mysql);
    return "";
  }
  MYSQL_RES* res = mysql_store_result(mysql);
  if (res == nullptr) return "";
  MYSQL_ROW row = mysql_fetch_row(res);
  std::string value = row != nullptr && row[0] != nullptr ? row[0] : "NULL";
  mysql_free_result(res);
  return value;
}

}  // namespace millrace::server
