// HttpServer with TLS credentials: HTTPS only, on a certificate made at run time.
#include <gtest/gtest.h>
#include <httplib.h>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/tls.h"
#include "http/http_server.h"
#include "http/test_authenticator.h"
#include "testing/temp_dir.h"
#include "testing/tls_cert.h"

namespace millrace::http {
namespace {

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cert = testing::MakeSelfSignedCertificate(dir_.path());
    ASSERT_TRUE(cert.ok()) << cert.status().ToString();
    cert_ = *cert;
    auto tls = TlsCredentials::Load(cert_.cert_file, cert_.key_file);
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    auth_.SetUser("ann", "ann-pw");
    HttpServerOptions options{"127.0.0.1", 0, *tls};
    options.authenticator = &auth_;
    server_ = std::make_unique<HttpServer>(options, &metrics_, nullptr, &clock_);
    ASSERT_TRUE(server_->Start().ok());
  }

  // A client of https://127.0.0.1:<port> that verifies the server against `ca_file`.
  std::unique_ptr<httplib::SSLClient> Client(const std::string& ca_file) {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port());
    client->set_connection_timeout(std::chrono::seconds(10));
    client->set_read_timeout(std::chrono::seconds(10));
    if (!ca_file.empty()) client->set_ca_cert_path(ca_file.c_str());
    client->enable_server_certificate_verification(true);
    return client;
  }

  testing::TempDir dir_;
  testing::TestCertificate cert_;
  TestAuthenticator auth_;
  MetricsRegistry metrics_;
  ManualClock clock_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpsServerTest, HealthIsServedToAClientThatTrustsTheCertificate) {
  auto client = Client(cert_.cert_file);
  auto res = client->Get("/api/health");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("\"status\":\"ok\""), std::string::npos) << res->body;
  EXPECT_EQ(client->get_openssl_verify_result(), X509_V_OK);
  EXPECT_EQ(client->Get("/metrics")->status, 401);
  client->set_basic_auth("ann", "ann-pw");
  res = client->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("\nmillrace_http_requests_total 3\n"), std::string::npos) << res->body;
}

TEST_F(HttpsServerTest, TheSessionCookieIsSecureOverHttps) {
  auto client = Client(cert_.cert_file);
  auto res =
      client->Post("/api/login", R"({"user":"ann","password":"ann-pw"})", "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  const std::string cookie = res->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("; HttpOnly; SameSite=Strict; Secure"), std::string::npos) << cookie;
}

TEST_F(HttpsServerTest, PlainHttpAndUntrustingClientsGetNothing) {
  httplib::Client plain("127.0.0.1", server_->port());
  plain.set_read_timeout(std::chrono::seconds(10));
  EXPECT_FALSE(plain.Get("/api/health"));

  auto other = testing::MakeSelfSignedCertificate(dir_.path(), "other");
  ASSERT_TRUE(other.ok());
  auto untrusting = Client(other->cert_file);
  auto res = untrusting->Get("/api/health");
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::SSLServerVerification);
  // Nothing reached a handler.
  EXPECT_NE(metrics_.RenderPrometheus().find("\nmillrace_http_requests_total 0\n"),
            std::string::npos);
}

}  // namespace
}  // namespace millrace::http
