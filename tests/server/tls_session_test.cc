// TLS on the MySQL port, in-process, driven with the raw protocol client: the SSL request, the
// handshake on the same socket, --require-tls, and the failures around them.
#include <gtest/gtest.h>

#include "server/mysql_test_util.h"
#include "server/protocol.h"
#include "sql/mysql_types.h"
#include "testing/tls_cert.h"

namespace millrace::server {
namespace {

using std::chrono::seconds;

// Answers `TLS_PROBE` with whether the session's connection is encrypted.
class TlsProbe final : public sql::StatementHandler {
 public:
  Result<sql::StatementResult> Execute(const sql::StatementContext& ctx) override {
    return ctx.session.ExecuteDuckDb(ctx.session.info().tls ? "SELECT 'encrypted' AS transport"
                                                            : "SELECT 'plain' AS transport");
  }
};

class TlsSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cert = testing::MakeSelfSignedCertificate(dir_.path());
    ASSERT_TRUE(cert.ok()) << cert.status().ToString();
    auto tls = TlsCredentials::Load(cert->cert_file, cert->key_file);
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    tls_ = *tls;
  }

  // The server with the test's certificate unless `options` says otherwise.
  void Start(MySqlServerOptions options, bool with_cert = true) {
    if (with_cert) options.tls = tls_;
    auto server = InProcessServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    server_->router().RegisterStatement({"tls_probe"}, std::make_shared<TlsProbe>());
  }

  // A connection whose greeting has been read into `*greeting`.
  std::unique_ptr<RawClient> Connect(Greeting* greeting) {
    auto client = RawClient::Connect(server_->port());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return nullptr;
    auto read = (*client)->ReadGreeting();
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    if (read.ok()) *greeting = *read;
    return read.ok() ? std::move(client).value() : nullptr;
  }

  // A connection that has sent the SSL request after the greeting.
  std::unique_ptr<RawClient> SentSslRequest() {
    Greeting greeting;
    auto client = Connect(&greeting);
    if (client == nullptr) return nullptr;
    const Status sent = client->SendSslRequest();
    EXPECT_TRUE(sent.ok()) << sent.ToString();
    return sent.ok() ? std::move(client) : nullptr;
  }

  // Connects into `*client` and logs in, over TLS when `tls`; the server's answer to the login.
  Result<Response> Login(bool tls, const LoginOptions& options,
                         std::unique_ptr<RawClient>* client) {
    MR_ASSIGN_OR_RETURN(*client, RawClient::Connect(server_->port()));
    MR_ASSIGN_OR_RETURN(Greeting greeting, (*client)->ReadGreeting());
    if (tls) MR_RETURN_IF_ERROR((*client)->StartTls(options));
    return (*client)->Login(greeting, options);
  }

  std::unique_ptr<RawClient> LoggedIn(bool tls) {
    std::unique_ptr<RawClient> client;
    auto response = Login(tls, {}, &client);
    EXPECT_TRUE(response.ok() && !response->is_error)
        << (response.ok() ? response->message : response.status().ToString());
    return response.ok() && !response->is_error ? std::move(client) : nullptr;
  }

  // The first column of the first row of `sql`'s only result.
  static std::string Scalar(RawClient& client, std::string_view sql) {
    auto responses = client.Query(sql);
    EXPECT_TRUE(responses.ok()) << responses.status().ToString();
    if (!responses.ok() || responses->size() != 1 || responses->front().rows.empty()) return "";
    return responses->front().rows[0][0].value_or("NULL");
  }

  testing::TempDir dir_;
  std::shared_ptr<const TlsCredentials> tls_;
  std::unique_ptr<InProcessServer> server_;
};

TEST_F(TlsSessionTest, TheGreetingOffersSslOnlyWithACertificate) {
  Start({});
  Greeting greeting;
  ASSERT_NE(Connect(&greeting), nullptr);
  EXPECT_NE(greeting.capabilities & kClientSsl, 0u);
  EXPECT_NE(greeting.capabilities & kClientProtocol41, 0u);

  Start({}, /*with_cert=*/false);
  ASSERT_NE(Connect(&greeting), nullptr);
  EXPECT_EQ(greeting.capabilities & kClientSsl, 0u);
}

TEST_F(TlsSessionTest, ATlsLoginRunsQueriesAndStreamsLargeResults) {
  Start({});
  auto client = LoggedIn(/*tls=*/true);
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->tls());
  EXPECT_EQ(Scalar(*client, "SELECT 40 + 2"), "42");
  // ~11 MB: many flushes, each written as several TLS records.
  client->set_keep_rows(false);
  auto big = client->Query("SELECT i, repeat('x', 100) FROM range(100000) t(i)");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  ASSERT_EQ(big->size(), 1u);
  EXPECT_FALSE(big->front().is_error) << big->front().message;
  EXPECT_EQ(big->front().row_count, 100000u);
  client->set_keep_rows(true);
  EXPECT_EQ(Scalar(*client, "SELECT 'still here'"), "still here");
  EXPECT_EQ(server_->Metric("millrace_mysql_tls_connections_total"), 1);
  EXPECT_GT(server_->Metric("millrace_mysql_bytes_sent_total"), 10e6);
}

TEST_F(TlsSessionTest, SessionsKnowWhetherTheirConnectionIsEncrypted) {
  Start({});
  auto encrypted = LoggedIn(/*tls=*/true);
  auto plain = LoggedIn(/*tls=*/false);  // TLS is offered, not required
  ASSERT_NE(encrypted, nullptr);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(Scalar(*encrypted, "TLS_PROBE"), "encrypted");
  EXPECT_EQ(Scalar(*plain, "tls_probe"), "plain");
}

TEST_F(TlsSessionTest, RequireTlsRefusesAPlainLoginBeforeItsPasswordIsChecked) {
  MySqlServerOptions options;
  options.require_tls = true;
  options.root_password = "pw";
  Start(options);
  std::unique_ptr<RawClient> plain;
  LoginOptions wrong;
  wrong.password = "not the password";
  auto refused = Login(/*tls=*/false, wrong, &plain);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_TRUE(refused->is_error);
  EXPECT_EQ(refused->error_code, kErSecureTransportRequired);
  EXPECT_EQ(refused->sqlstate, "HY000");
  EXPECT_EQ(refused->message,
            "Connections using insecure transport are prohibited while --require-tls is on");
  EXPECT_TRUE(plain->WaitClosed());

  std::unique_ptr<RawClient> secure;
  LoginOptions right;
  right.password = "pw";
  auto accepted = Login(/*tls=*/true, right, &secure);
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_FALSE(accepted->is_error) << accepted->message;
  EXPECT_EQ(Scalar(*secure, "TLS_PROBE"), "encrypted");
  EXPECT_EQ(server_->Metric("millrace_mysql_auth_failures_total"), 1);
}

TEST_F(TlsSessionTest, RequireTlsWithoutACertificateDoesNotStart) {
  MySqlServerOptions options;
  options.require_tls = true;
  auto server = InProcessServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().message(), "require_tls needs a certificate");
}

TEST_F(TlsSessionTest, AnSslRequestToAServerWithoutCertificateIsABadHandshake) {
  Start({}, /*with_cert=*/false);
  auto client = SentSslRequest();
  ASSERT_NE(client, nullptr);
  auto reply = client->ReadPacket();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_FALSE(reply->empty());
  EXPECT_EQ(static_cast<uint8_t>((*reply)[0]), 0xff);
  EXPECT_NE(reply->find("Bad handshake: TLS was requested but this server has no certificate"),
            std::string::npos)
      << *reply;
  EXPECT_TRUE(client->WaitClosed());
}

TEST_F(TlsSessionTest, AFailedTlsHandshakeClosesOnlyItsConnection) {
  Start({});
  auto client = SentSslRequest();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->SendBytes("GET / HTTP/1.0\r\n\r\n").ok());  // not a ClientHello
  EXPECT_TRUE(client->WaitClosed());
  EXPECT_TRUE(testing::WaitFor(
      [&] { return server_->Metric("millrace_mysql_tls_handshake_failures_total") == 1; }));
  auto other = LoggedIn(/*tls=*/true);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(Scalar(*other, "SELECT 1"), "1");
}

TEST_F(TlsSessionTest, AStalledTlsHandshakeEndsAtTheNetTimeout) {
  MySqlServerOptions options;
  options.net_timeout = seconds(1);
  Start(options);
  auto client = SentSslRequest();  // and no ClientHello after it
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->WaitClosed(seconds(30)));
  EXPECT_TRUE(testing::WaitFor([&] { return server_->server().active_sessions() == 0; }));
}

TEST(TlsProtocolTest, A32ByteResponseWithClientSslIsAnSslRequest) {
  LoginOptions options;
  const std::string full = BuildClientHandshake(options, std::string(kScrambleLength, 'a'),
                                                DefaultClientCapabilities() | kClientSsl);
  auto request = ParseHandshakeResponse(full.substr(0, 32));
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_TRUE(request->ssl_request);
  EXPECT_NE(request->capabilities & kClientSsl, 0u);
  EXPECT_EQ(request->charset, sql::kUtf8mb4GeneralCi);
  // The full response that follows over TLS keeps the flag and parses as a login.
  auto login = ParseHandshakeResponse(full);
  ASSERT_TRUE(login.ok()) << login.status().ToString();
  EXPECT_FALSE(login->ssl_request);
  EXPECT_EQ(login->user, "root");
  // Without CLIENT_SSL, 32 bytes are a response cut short.
  const std::string plain =
      BuildClientHandshake(options, std::string(kScrambleLength, 'a'), DefaultClientCapabilities());
  auto cut = ParseHandshakeResponse(plain.substr(0, 32));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(), "malformed handshake response: unterminated user name");
}

TEST(TlsProtocolTest, TheDecoderSaysHowManyBytesEndThePacket) {
  PacketDecoder decoder(1 << 20);
  uint8_t sequence = 1;
  EXPECT_EQ(decoder.Missing(), 4u);
  std::string framed;
  uint8_t out_sequence = 1;
  AppendPacket(std::string(32, 'x'), &out_sequence, &framed);
  decoder.Append(framed.substr(0, 2));
  EXPECT_EQ(decoder.Missing(), 2u);
  decoder.Append(framed.substr(2, 10));
  EXPECT_EQ(decoder.Missing(), 24u);
  decoder.Append(framed.substr(12));
  EXPECT_EQ(decoder.Missing(), 0u);
  auto packet = decoder.Next(&sequence);
  ASSERT_TRUE(packet.ok() && packet->has_value());
  EXPECT_EQ((*packet)->payload.size(), 32u);
  EXPECT_EQ(decoder.Missing(), 4u);
}

}  // namespace
}  // namespace millrace::server
