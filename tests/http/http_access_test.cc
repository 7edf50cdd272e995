// Who may use the HTTP port: HTTP Basic, the login form and its session cookie, the CSRF token,
// foreign origins, idle expiry (injected clock), dropped users, throttled addresses, and
// --metrics-public. Over a real HttpServer on loopback and cpp-httplib's client.
#include <gtest/gtest.h>
#include <httplib.h>

#include "common/clock.h"
#include "common/metrics.h"
#include "http/http_server.h"
#include "http/test_authenticator.h"

namespace millrace::http {
namespace {

class HttpAccessTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(false); }

  void Start(bool metrics_public) {
    server_.reset();
    auth_.SetUser("ann", "ann-pw");
    auth_.SetUser("bob", "bob-pw");
    HttpServerOptions options{"127.0.0.1", 0};
    options.authenticator = &auth_;
    options.metrics_public = metrics_public;
    options.sessions.idle_timeout = std::chrono::minutes(30);
    server_ = std::make_unique<HttpServer>(options, &metrics_, nullptr, &clock_);
    server_->Post("/api/poke", [this](const HttpRequest& request) {
      ++pokes_;
      return HttpResponse{200, "application/json", "{\"poked_by\":\"" + request.user + "\"}", {}};
    });
    ASSERT_TRUE(server_->Start().ok());
  }

  httplib::Client Client() {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_read_timeout(std::chrono::seconds(10));
    return client;
  }

  // Logs in with JSON; returns the cookie ("millrace_session=...") and sets `*csrf`.
  std::string LogIn(const std::string& user, const std::string& password, std::string* csrf) {
    auto res =
        Client().Post("/api/login", "{\"user\":\"" + user + "\",\"password\":\"" + password + "\"}",
                      "application/json");
    EXPECT_TRUE(res);
    if (!res) return "";
    EXPECT_EQ(res->status, 200) << res->body;
    const std::string set_cookie = res->get_header_value("Set-Cookie");
    const std::string token_key = "\"csrf_token\":\"";
    const size_t at = res->body.find(token_key);
    if (at != std::string::npos && csrf != nullptr) {
      *csrf = res->body.substr(at + token_key.size(), 64);
    }
    return set_cookie.substr(0, set_cookie.find(';'));
  }

  httplib::Result GetWithCookie(const std::string& path, const std::string& cookie) {
    return Client().Get(path.c_str(), {{"Cookie", cookie}});
  }

  TestAuthenticator auth_;
  MetricsRegistry metrics_;
  ManualClock clock_;
  std::unique_ptr<HttpServer> server_;
  std::atomic<int> pokes_{0};
};

TEST_F(HttpAccessTest, OnlyHealthAndTheLoginAreOpen) {
  httplib::Client client = Client();
  EXPECT_EQ(client.Get("/api/health")->status, 200);
  EXPECT_EQ(client.Get("/login")->status, 200);
  for (const char* path : {"/metrics", "/api/session"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401) << path;
    EXPECT_EQ(res->get_header_value("WWW-Authenticate"),
              "Basic realm=\"millrace\", charset=\"UTF-8\"");
    EXPECT_NE(res->body.find("login required"), std::string::npos) << res->body;
  }
  EXPECT_EQ(client.Post("/api/poke", "", "application/json")->status, 401);
  EXPECT_EQ(pokes_.load(), 0);
  // A browser asking for the start page is sent to the login form.
  auto page = client.Get("/");
  EXPECT_EQ(page->status, 303);
  EXPECT_EQ(page->get_header_value("Location"), "/login");
  EXPECT_NE(metrics_.RenderPrometheus().find("\nmillrace_http_auth_refusals_total 4\n"),
            std::string::npos);
}

TEST_F(HttpAccessTest, MetricsArePublicOnlyWhenAsked) {
  Start(true);
  EXPECT_EQ(Client().Get("/metrics")->status, 200);
  EXPECT_EQ(Client().Get("/api/session")->status, 401);
}

TEST_F(HttpAccessTest, BasicAuthenticationChecksThePasswordAndRemembersItForAMinute) {
  httplib::Client client = Client();
  client.set_basic_auth("ann", "wrong");
  auto res = client.Get("/metrics");
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->body.find("wrong"), std::string::npos) << "the password is never repeated";
  client.set_basic_auth("ann", "ann-pw");
  res = client.Get("/api/session");
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "{\"user\":\"ann\"}\n");
  // A POST with Basic needs no CSRF token: no browser sends these credentials on its own.
  EXPECT_EQ(client.Post("/api/poke", "", "application/json")->body, "{\"poked_by\":\"ann\"}");
  EXPECT_EQ(auth_.checks(), 2);  // one refusal, then one check for both requests
  clock_.Advance(kBasicMemory + std::chrono::seconds(1));
  EXPECT_EQ(client.Get("/metrics")->status, 200);
  EXPECT_EQ(auth_.checks(), 3);
  // A dropped user's remembered credentials stop working at once.
  auth_.DropUser("ann");
  EXPECT_EQ(client.Get("/metrics")->status, 401);
  // Malformed headers are refused, not misread.
  for (const char* header : {"Basic !!!", "Basic ====", "Basic =", "Basic YQ==", "Bearer abc"}) {
    EXPECT_EQ(Client().Get("/metrics", {{"Authorization", header}})->status, 401) << header;
  }
}

TEST_F(HttpAccessTest, AChangedPasswordEndsSessionsAndRememberedLogins) {
  const std::string cookie = LogIn("ann", "ann-pw", nullptr);
  httplib::Client client = Client();
  client.set_basic_auth("ann", "ann-pw");
  EXPECT_EQ(client.Get("/metrics")->status, 200);
  auth_.SetUser("ann", "new-pw");
  EXPECT_EQ(GetWithCookie("/api/session", cookie)->status, 401);
  EXPECT_EQ(client.Get("/metrics")->status, 401) << "the remembered login is checked again";
  // Dropped and made again with the old password: a new user, whose old session stays ended.
  const std::string again = LogIn("bob", "bob-pw", nullptr);
  auth_.DropUser("bob");
  auth_.SetUser("bob", "bob-pw");
  EXPECT_EQ(GetWithCookie("/api/session", again)->status, 401);
}

TEST_F(HttpAccessTest, BrowsersAreNeverAskedForBasicCredentials) {
  auto api = Client().Get("/metrics");
  EXPECT_FALSE(api->get_header_value("WWW-Authenticate").empty());
  auto page = Client().Get("/metrics", {{"Accept", "text/html,application/xhtml+xml"}});
  EXPECT_EQ(page->status, 401);
  EXPECT_TRUE(page->get_header_value("WWW-Authenticate").empty());
  auto stale = GetWithCookie("/api/session", "millrace_session=" + std::string(64, 'b'));
  EXPECT_EQ(stale->status, 401);
  EXPECT_TRUE(stale->get_header_value("WWW-Authenticate").empty());
}

TEST_F(HttpAccessTest, ALargeBodyIsRefusedBeforeAnyLogin) {
  auto res = Client().Post("/api/logout", std::string(1 << 20, 'x'), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  res = Client().Post("/api/login", std::string(1 << 20, 'x'), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
}

TEST_F(HttpAccessTest, TheLoginFormSetsAStrictHttpOnlyCookie) {
  httplib::Client client = Client();
  auto res =
      client.Post("/api/login", "user=bob&password=bob-pw", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 303);
  EXPECT_EQ(res->get_header_value("Location"), "/");
  const std::string set_cookie = res->get_header_value("Set-Cookie");
  EXPECT_EQ(set_cookie.rfind("millrace_session=", 0), 0u) << set_cookie;
  EXPECT_NE(set_cookie.find("; Path=/; HttpOnly; SameSite=Strict"), std::string::npos);
  EXPECT_EQ(set_cookie.find("Secure"), std::string::npos) << "plain HTTP: the cookie is not Secure";
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  EXPECT_EQ(cookie.size(), std::string("millrace_session=").size() + 64);

  auto page = GetWithCookie("/", cookie);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("Logged in as <b>bob</b>"), std::string::npos) << page->body;
  EXPECT_NE(page->body.find("name=\"csrf_token\""), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);

  // A wrong password shows the form again with the error, escaped.
  res = client.Post("/api/login", "user=%3Cscript%3E&password=x",
                    "application/x-www-form-urlencoded");
  EXPECT_EQ(res->status, 401);
  EXPECT_TRUE(res->get_header_value("Set-Cookie").empty());
  EXPECT_NE(res->body.find("&lt;script&gt;"), std::string::npos) << res->body;
  EXPECT_EQ(res->body.find("<script>"), std::string::npos);
  EXPECT_EQ(client.Post("/api/login", "{}", "application/json")->status, 400);
}

TEST_F(HttpAccessTest, StateChangingRequestsOfASessionNeedItsCsrfToken) {
  std::string csrf;
  const std::string cookie = LogIn("ann", "ann-pw", &csrf);
  ASSERT_EQ(csrf.size(), 64u);
  auto session = GetWithCookie("/api/session", cookie);
  EXPECT_EQ(session->body, "{\"user\":\"ann\",\"csrf_token\":\"" + csrf + "\"}\n");

  httplib::Client client = Client();
  auto res = client.Post("/api/poke", {{"Cookie", cookie}}, "", "application/json");
  EXPECT_EQ(res->status, 403);
  EXPECT_NE(res->body.find("CSRF token"), std::string::npos) << res->body;
  std::string other = csrf;
  other[0] = other[0] == 'a' ? 'b' : 'a';
  EXPECT_EQ(
      client
          .Post("/api/poke", {{"Cookie", cookie}, {"X-CSRF-Token", other}}, "", "application/json")
          ->status,
      403);
  // Another user's token does not do either.
  std::string bob_csrf;
  LogIn("bob", "bob-pw", &bob_csrf);
  EXPECT_EQ(client
                .Post("/api/poke", {{"Cookie", cookie}, {"X-CSRF-Token", bob_csrf}}, "",
                      "application/json")
                ->status,
            403);
  EXPECT_EQ(pokes_.load(), 0);
  res = client.Post("/api/poke", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}, "",
                    "application/json");
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "{\"poked_by\":\"ann\"}");
  // The form field works as the header does (the logout button of the start page).
  res = client.Post("/api/poke", {{"Cookie", cookie}}, "csrf_token=" + csrf,
                    "application/x-www-form-urlencoded");
  EXPECT_EQ(res->status, 200);
  // A page of another site cannot post here, token or not.
  res = client.Post("/api/poke",
                    {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, {"Origin", "http://evil.example"}},
                    "", "application/json");
  EXPECT_EQ(res->status, 403);
  EXPECT_NE(res->body.find("cross-origin"), std::string::npos);
  EXPECT_EQ(client
                .Post("/api/login", {{"Origin", "http://evil.example"}},
                      R"({"user":"ann","password":"ann-pw"})", "application/json")
                ->status,
            403);
  EXPECT_EQ(pokes_.load(), 2);
}

TEST_F(HttpAccessTest, LogoutEndsTheSession) {
  std::string csrf;
  const std::string cookie = LogIn("ann", "ann-pw", &csrf);
  EXPECT_EQ(Client().Post("/api/logout", {{"Cookie", cookie}}, "", "application/json")->status,
            403);
  auto res = Client().Post("/api/logout", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}, "",
                           "application/json");
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Set-Cookie").find("Max-Age=0"), std::string::npos);
  res = GetWithCookie("/api/session", cookie);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("the session has ended"), std::string::npos);
}

TEST_F(HttpAccessTest, AnIdleSessionExpiresAndAnActiveOneDoesNot) {
  const std::string cookie = LogIn("ann", "ann-pw", nullptr);
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(std::chrono::minutes(20));
    EXPECT_EQ(GetWithCookie("/api/session", cookie)->status, 200) << i;
  }
  clock_.Advance(std::chrono::minutes(30));
  EXPECT_EQ(GetWithCookie("/api/session", cookie)->status, 401);
  // A made-up id is no session either.
  EXPECT_EQ(GetWithCookie("/api/session", "millrace_session=" + std::string(64, 'a'))->status, 401);
}

TEST_F(HttpAccessTest, ADroppedUsersSessionEnds) {
  const std::string ann = LogIn("ann", "ann-pw", nullptr);
  const std::string bob = LogIn("bob", "bob-pw", nullptr);
  auth_.DropUser("ann");
  auto res = GetWithCookie("/api/session", ann);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("no longer exists"), std::string::npos);
  // Making the user again does not bring the session back.
  auth_.SetUser("ann", "ann-pw");
  EXPECT_EQ(GetWithCookie("/api/session", ann)->status, 401);
  EXPECT_EQ(GetWithCookie("/api/session", bob)->status, 200);
}

TEST_F(HttpAccessTest, AThrottledAddressIsToldWhenToComeBack) {
  auth_.Throttle(std::chrono::seconds(8));
  auto res =
      Client().Post("/api/login", R"({"user":"ann","password":"ann-pw"})", "application/json");
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "8");
  httplib::Client client = Client();
  client.set_basic_auth("ann", "ann-pw");
  res = client.Get("/metrics");
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "8");
}

}  // namespace
}  // namespace millrace::http
