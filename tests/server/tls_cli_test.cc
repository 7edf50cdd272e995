// TLS through the real `millrace serve` binary: the `mariadb` client and MariaDB Connector/C
// over TLS (verifying the server against a certificate made at run time), --require-tls,
// HTTPS on the HTTP port, and the start-up errors of bad certificates.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server/mysql_test_util.h"
#include "testing/test_paths.h"
#include "testing/tls_cert.h"

namespace millrace::server {
namespace {

// The certificate of the suite's servers, and a second one whose key does not match it.
struct Certificates {
  testing::TempDir dir;
  testing::TestCertificate server;
  testing::TestCertificate other;
};

std::unique_ptr<Certificates> MakeCertificates() {
  auto certs = std::make_unique<Certificates>();
  auto server = testing::MakeSelfSignedCertificate(certs->dir.path(), "server");
  auto other = testing::MakeSelfSignedCertificate(certs->dir.path(), "other");
  EXPECT_TRUE(server.ok() && other.ok());
  if (!server.ok() || !other.ok()) return nullptr;
  certs->server = *server;
  certs->other = *other;
  return certs;
}

std::vector<std::string> TlsFlags(const Certificates& certs) {
  return {"--tls-cert", certs.server.cert_file, "--tls-key", certs.server.key_file};
}

// mariadb options for TLS that verifies the server (its host name included).
std::vector<std::string> MariaDbTls(const std::string& ca_file) {
  return {"--ssl", "--ssl-ca=" + ca_file, "--ssl-verify-server-cert"};
}

// Connector/C options for TLS, enforced and verified against `ca_file`.
std::function<void(MYSQL*)> ConnectorTls(const std::string& ca_file) {
  return [ca_file](MYSQL* mysql) {
    mysql_ssl_set(mysql, nullptr, nullptr, ca_file.c_str(), nullptr, nullptr);
    const my_bool on = 1;
    mysql_options(mysql, MYSQL_OPT_SSL_ENFORCE, &on);
    mysql_options(mysql, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
  };
}

class TlsServeTest : public SharedServerTest {
 protected:
  static void SetUpTestSuite() {
    mysql_library_init(0, nullptr, nullptr);
    certs_ = MakeCertificates();
    ASSERT_NE(certs_, nullptr);
    StartServer({TlsFlags(*certs_), {}});
  }
  static void TearDownTestSuite() {
    StopServer();
    certs_.reset();
  }

  static std::unique_ptr<Certificates> certs_;
};

std::unique_ptr<Certificates> TlsServeTest::certs_;

TEST_F(TlsServeTest, TheMariadbClientConnectsOverVerifiedTls) {
  auto result = MariaDb(server().mysql_port(), "SELECT 40 + 2 AS answer; \\s",
                        MariaDbTls(certs_->server.cert_file));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->exit_code, 0) << result->err;
  EXPECT_EQ(result->out.rfind("answer\n42\n", 0), 0u) << result->out;
  EXPECT_NE(result->out.find("SSL:\t\t\tCipher in use is TLS_"), std::string::npos) << result->out;
  // TLS is offered, not required: a plain client still connects. (The mariadb client uses
  // TLS whenever it is offered, unverified, unless told not to.)
  auto plain = MariaDb(server().mysql_port(), "\\s", {"--skip-ssl"});
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(plain->exit_code, 0) << plain->err;
  EXPECT_NE(plain->out.find("SSL:\t\t\tNot in use"), std::string::npos) << plain->out;
}

TEST_F(TlsServeTest, ConnectorCEnforcesAndVerifiesTls) {
  std::string error;
  MysqlPtr mysql = ConnectorC(server().mysql_port(), "", 0, nullptr, &error,
                              ConnectorTls(certs_->server.cert_file));
  ASSERT_NE(mysql, nullptr) << error;
  ASSERT_NE(mysql_get_ssl_cipher(mysql.get()), nullptr);
  EXPECT_EQ(Scalar(mysql.get(), "SELECT count(*) FROM range(100000)"), "100000");
  // A streamed result of several MB over TLS.
  ASSERT_EQ(mysql_query(mysql.get(), "SELECT i, repeat('y', 200) FROM range(50000) t(i)"), 0);
  MYSQL_RES* res = mysql_use_result(mysql.get());
  ASSERT_NE(res, nullptr);
  size_t rows = 0;
  while (mysql_fetch_row(res) != nullptr)
    ++rows;
  EXPECT_EQ(mysql_errno(mysql.get()), 0u) << mysql_error(mysql.get());
  mysql_free_result(res);
  EXPECT_EQ(rows, 50000u);

  // A client that trusts another certificate refuses this server.
  MysqlPtr untrusting = ConnectorC(server().mysql_port(), "", 0, nullptr, &error,
                                   ConnectorTls(certs_->other.cert_file));
  EXPECT_EQ(untrusting, nullptr);
  EXPECT_EQ(error.rfind("2026 (HY000): ", 0), 0u) << error;  // CR_SSL_CONNECTION_ERROR
}

// A user created with REQUIRE SSL logs in over TLS only.
TEST_F(TlsServeTest, AUserThatRequiresSslLogsInOverTlsOnly) {
  std::string error;
  MysqlPtr root = ConnectorC(server().mysql_port(), "", 0, nullptr, &error,
                             ConnectorTls(certs_->server.cert_file));
  ASSERT_NE(root, nullptr) << error;
  ASSERT_EQ(mysql_query(root.get(), "CREATE USER sec IDENTIFIED BY 'Sec-Pw-1' REQUIRE SSL"), 0)
      << mysql_error(root.get());
  EXPECT_EQ(ConnectorC(server().mysql_port(), "Sec-Pw-1", 0, nullptr, &error, nullptr, "sec"),
            nullptr);
  EXPECT_EQ(error, "1045 (28000): Access denied for user 'sec'@'127.0.0.1' (using password: YES)");
  MysqlPtr secure = ConnectorC(server().mysql_port(), "Sec-Pw-1", 0, nullptr, &error,
                               ConnectorTls(certs_->server.cert_file), "sec");
  ASSERT_NE(secure, nullptr) << error;
  EXPECT_EQ(Scalar(secure.get(), "SELECT CURRENT_USER()"), "sec@%");
}

TEST_F(TlsServeTest, TheHttpPortServesHttpsOnly) {
  auto health = HttpGet(server().http_port(), "/api/health", certs_->server.cert_file);
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  EXPECT_EQ(health->status, 200);
  EXPECT_NE(health->body.find("\"status\":\"ok\""), std::string::npos) << health->body;
  EXPECT_FALSE(HttpGet(server().http_port(), "/api/health").ok());
  const std::string log = server().Log();
  EXPECT_NE(log.find("(TLS offered)"), std::string::npos) << log;
  EXPECT_NE(log.find("(HTTPS only)"), std::string::npos) << log;
}

TEST(TlsRequiredTest, PlainLoginsAreRefusedWith3159AndTlsOnesAccepted) {
  auto certs = MakeCertificates();
  ASSERT_NE(certs, nullptr);
  testing::TempDir dir;
  std::vector<std::string> args = TlsFlags(*certs);
  args.push_back("--require-tls");
  auto server = ServerProcess::Start(dir.path(), {args, {}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->mysql_port();
  const std::string message =
      "Connections using insecure transport are prohibited while --require-tls is on";

  auto plain = MariaDb(port, "SELECT 1", {"--skip-ssl"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->exit_code, 1);
  EXPECT_NE(plain->err.find("ERROR 3159 (HY000): " + message), std::string::npos) << plain->err;
  std::string error;
  EXPECT_EQ(ConnectorC(port, "", 0, nullptr, &error), nullptr);
  EXPECT_EQ(error, "3159 (HY000): " + message);

  auto secure = MariaDb(port, "SELECT 'over tls' AS t", MariaDbTls(certs->server.cert_file));
  ASSERT_TRUE(secure.ok());
  EXPECT_EQ(secure->exit_code, 0) << secure->err;
  EXPECT_EQ(secure->out, "t\nover tls\n");
  MysqlPtr mysql = ConnectorC(port, "", 0, nullptr, &error, ConnectorTls(certs->server.cert_file));
  ASSERT_NE(mysql, nullptr) << error;
  EXPECT_EQ(Scalar(mysql.get(), "SELECT 7"), "7");
  EXPECT_NE((*server)->Log().find("(TLS required)"), std::string::npos);
}

// `millrace serve` with `flags`: its exit code and stderr.
testing::ProcessResult Serve(const testing::TempDir& dir, std::vector<std::string> flags) {
  std::vector<std::string> argv = {testing::MillraceBinary(),
                                   "serve",
                                   "--data-dir",
                                   dir.Join("data"),
                                   "--mysql-port",
                                   "0",
                                   "--http-port",
                                   "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto result = testing::RunProcess(argv);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : testing::ProcessResult{};
}

TEST(TlsStartupTest, BadCertificatesAndKeysStopTheServerWithOneLine) {
  auto certs = MakeCertificates();
  ASSERT_NE(certs, nullptr);
  testing::TempDir dir;
  const std::string missing = dir.Join("missing.crt");
  const std::string garbage = dir.Join("garbage.crt");
  { std::ofstream(garbage) << "-----BEGIN CERTIFICATE-----\nnot base64 at all\n"; }
  const std::string& cert = certs->server.cert_file;
  const std::string& key = certs->server.key_file;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--tls-cert", missing, "--tls-key", key},
       "cannot read TLS certificate file '" + missing + "': No such file or directory"},
      {{"--tls-cert", garbage, "--tls-key", key},
       "TLS certificate file '" + garbage + "' holds no PEM certificate"},
      {{"--tls-cert", cert, "--tls-key", certs->other.key_file},
       "TLS key file '" + certs->other.key_file + "' does not match the certificate in '" + cert +
           "'"},
      {{"--tls-cert", cert}, "--tls-cert and --tls-key go together: give both or neither"},
      {{"--require-tls"}, "--require-tls needs a certificate: set --tls-cert and --tls-key"},
  };
  for (const auto& [flags, error] : cases) {
    const testing::ProcessResult result = Serve(dir, flags);
    EXPECT_EQ(result.exit_code, 2) << error;
    EXPECT_EQ(result.err, "millrace serve: " + error + "\n");
  }
  // Refused before anything was created.
  EXPECT_FALSE(std::filesystem::exists(dir.Join("data")));
}

TEST(TlsStartupTest, HelpListsTheTlsFlagsAndTheirEnvironment) {
  auto help = testing::RunProcess({testing::MillraceBinary(), "serve", "--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_EQ(help->exit_code, 0);
  for (const char* text :
       {"--tls-cert", "[env MILLRACE_TLS_CERT]", "--tls-key", "[env MILLRACE_TLS_KEY]",
        "--require-tls", "[env MILLRACE_REQUIRE_TLS]"}) {
    EXPECT_NE(help->out.find(text), std::string::npos) << text << "\n" << help->out;
  }
}

TEST(TlsStartupTest, TheEnvironmentSetsTheCertificate) {
  auto certs = MakeCertificates();
  ASSERT_NE(certs, nullptr);
  testing::TempDir dir;
  auto server = ServerProcess::Start(
      dir.path(), {{},
                   {"MILLRACE_TLS_CERT=" + certs->server.cert_file,
                    "MILLRACE_TLS_KEY=" + certs->server.key_file, "MILLRACE_REQUIRE_TLS=1"}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto secure = MariaDb((*server)->mysql_port(), "SELECT 1", MariaDbTls(certs->server.cert_file));
  ASSERT_TRUE(secure.ok());
  EXPECT_EQ(secure->exit_code, 0) << secure->err;
  auto plain = MariaDb((*server)->mysql_port(), "SELECT 1", {"--skip-ssl"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->exit_code, 1);
}

}  // namespace
}  // namespace millrace::server
