#include "http/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>

#include "common/clock.h"
#include "common/metrics.h"
#include "http/test_authenticator.h"

namespace millrace::http {
namespace {

TEST(JsonQuoteTest, EscapesControlCharactersAndQuotes) {
  EXPECT_EQ(JsonQuote("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
}

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer() {
    auth_.SetUser("ann", "ann-pw");
    HttpServerOptions options{"127.0.0.1", 0};
    options.authenticator = &auth_;
    options.metrics_public = true;
    server_ = std::make_unique<HttpServer>(
        options, &metrics_,
        [this] {
          HealthReport report;
          report.healthy = healthy_.load();
          if (!report.healthy) report.reason = "database closed";
          report.fields.emplace_back("answer", "42");
          return report;
        },
        &clock_);
    server_->Get("/api/echo", [](const HttpRequest& request) {
      return HttpResponse{
          200, "application/json",
          "{\"q\":" + JsonQuote(request.Param("q")) + ",\"user\":" + JsonQuote(request.user) + "}"};
    });
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_basic_auth("ann", "ann-pw");
  }

  TestAuthenticator auth_;
  MetricsRegistry metrics_;
  ManualClock clock_;
  std::atomic<bool> healthy_{true};
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpServerTest, HealthReportsStatusUptimeAndFields) {
  StartServer();
  clock_.Advance(std::chrono::seconds(5));
  auto res = client_->Get("/api/health");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(res->body,
            "{\"status\":\"ok\",\"version\":\"0.1.0\",\"uptime_seconds\":5,\"answer\":42}\n");

  healthy_ = false;
  res = client_->Get("/api/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("\"status\":\"unavailable\",\"reason\":\"database closed\""),
            std::string::npos)
      << res->body;
}

TEST_F(HttpServerTest, MetricsRoutesAndUnknownPaths) {
  metrics_.AddCounter("millrace_test_total", "a test counter")->Add(7);
  StartServer();
  auto echo = client_->Get("/api/echo?q=a%20b");
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->body, "{\"q\":\"a b\",\"user\":\"ann\"}");
  EXPECT_EQ(client_->Get("/nope")->status, 404);
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(res->body.find("\nmillrace_test_total 7\n"), std::string::npos) << res->body;
  // The echo, the 404 and this request: only routed requests are counted, this one included.
  EXPECT_NE(res->body.find("\nmillrace_http_requests_total 2\n"), std::string::npos) << res->body;
}

TEST_F(HttpServerTest, BindFailureNamesTheAddressAndStopIsIdempotent) {
  StartServer();
  HttpServer second(HttpServerOptions{"127.0.0.1", server_->port()}, &metrics_, nullptr, &clock_);
  Status status = second.Start();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("127.0.0.1:" + std::to_string(server_->port())),
            std::string::npos)
      << status.message();
  server_->Stop();
  server_->Stop();
  EXPECT_FALSE(client_->Get("/api/health"));
}

}  // namespace
}  // namespace millrace::http
