// The HTTP port end to end: the real `millrace serve`, its users (made over the MySQL port) and
// cpp-httplib's client. Basic and the login form, a dropped user's session, the audit log, and
// failed logins slowed across both ports; --metrics-public.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "access/access_e2e_util.h"

namespace millrace::access {
namespace {

using server::ServerProcess;

constexpr const char* kRootPassword = "Http-Root-5";

class HttpE2ETest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> args = {}) {
    auto server = ServerProcess::Start(
        dir_.path(), {std::move(args), {std::string("MILLRACE_ROOT_PASSWORD=") + kRootPassword}});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    auto root = ConnectAs(server_->mysql_port(), "root", kRootPassword);
    ASSERT_TRUE(root.ok()) << root.status().ToString();
    root_ = std::move(root).value();
  }

  void Root(const std::string& sql) {
    auto result = Query(root_.get(), sql);
    ASSERT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
  }

  httplib::Client Client() {
    httplib::Client client("127.0.0.1", server_->http_port());
    client.set_read_timeout(std::chrono::seconds(10));
    return client;
  }

  testing::TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  MysqlPtr root_;
};

TEST_F(HttpE2ETest, MillraceUsersLogInOverHttpAndADroppedUsersSessionEnds) {
  Start();
  Root("CREATE USER ann IDENTIFIED BY 'Ann-Http-1'");
  httplib::Client client = Client();
  EXPECT_EQ(client.Get("/api/health")->status, 200);
  EXPECT_EQ(client.Get("/metrics")->status, 401);

  client.set_basic_auth("ann", "Ann-Http-1");
  auto res = client.Get("/api/session");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "{\"user\":\"ann\"}\n");
  EXPECT_EQ(client.Get("/metrics")->status, 200);
  client.set_basic_auth("ann", "wrong");
  res = client.Get("/metrics");
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->body,
            "{\"error\":\"Access denied for user 'ann'@'127.0.0.1' (using password: YES)\"}\n");

  // The web console's form: a cookie session, ended when root drops the user.
  res = Client().Post("/api/login", "user=ann&password=Ann-Http-1",
                      "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 303);
  const std::string set_cookie = res->get_header_value("Set-Cookie");
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  EXPECT_EQ(Client().Get("/api/session", {{"Cookie", cookie}})->status, 200);
  Root("DROP USER ann");
  res = Client().Get("/api/session", {{"Cookie", cookie}});
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("no longer exists"), std::string::npos) << res->body;

  // Logins over HTTP are in the audit log, told apart from the MySQL port's.
  auto events = Query(root_.get(),
                      "SELECT Action, CASE WHEN Outcome = 'OK' THEN 'ok' ELSE 'failed' END "
                      "FROM audit_log() WHERE Kind = 'LOGIN' AND User = 'ann'");
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  auto count = [&](const std::vector<std::string>& row) {
    return std::count(events->begin(), events->end(), row);
  };
  EXPECT_EQ(count({"HTTP LOGIN", "ok"}), 2) << "Basic once (then remembered), the form once";
  EXPECT_EQ(count({"HTTP LOGIN", "failed"}), 1);
  EXPECT_EQ(server_->Log().find("Ann-Http-1"), std::string::npos);
}

TEST_F(HttpE2ETest, FailedLoginsFromOneAddressAreSlowedOnBothPorts) {
  Start({"--metrics-public"});
  Root("CREATE USER ann IDENTIFIED BY 'Ann-Http-2'");
  // Five failures of root's password are free; the sixth makes root at 127.0.0.1 wait.
  for (int i = 0; i < 3; ++i) {
    auto failed = ConnectAs(server_->mysql_port(), "root", "guess-" + std::to_string(i));
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.status().message().find("1045"), std::string::npos);
  }
  for (int i = 3; i < 6; ++i) {
    httplib::Client client = Client();
    client.set_basic_auth("root", ("guess-" + std::to_string(i)).c_str());
    EXPECT_EQ(client.Get("/api/session")->status, 401);
  }
  // Now the right password is refused too, on both ports, saying for how long; each try
  // while waiting doubles the wait (1 s after the sixth failure, 2 s after the seventh, ...).
  auto refused = ConnectAs(server_->mysql_port(), "root", kRootPassword);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.status().message().find(
          "1045 (28000): Access denied for user 'root'@'127.0.0.1': too many failed logins from "
          "127.0.0.1; try again in "),
      std::string::npos)
      << refused.status().message();
  auto res = Client().Post(
      "/api/login", std::string("{\"user\":\"root\",\"password\":\"") + kRootPassword + "\"}",
      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "4");
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(ConnectAs(server_->mysql_port(), "root", kRootPassword).ok());
  res = Client().Post("/api/login", "user=root&password=x", "application/x-www-form-urlencoded");
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "60") << "at most a minute";
  // Another user from the same address still logs in, and that does not free root.
  EXPECT_TRUE(ConnectAs(server_->mysql_port(), "ann", "Ann-Http-2").ok());
  EXPECT_FALSE(ConnectAs(server_->mysql_port(), "root", kRootPassword).ok());
  // The open session is not affected, and public metrics need no login.
  EXPECT_TRUE(Query(root_.get(), "SELECT 1").ok());
  res = Client().Get("/metrics");
  EXPECT_EQ(res->status, 200);
  EXPECT_GE(server::PrometheusValue(res->body, "millrace_mysql_auth_failures_total"), 4);
}

// /metrics shows a logged-in user the series of the jobs it may see, and the console's job
// actions answer a job the user may not see as a missing one: 404 alike, naming no table.
TEST_F(HttpE2ETest, JobsAUserMayNotSeeAreNowhereInItsAnswers) {
  std::filesystem::create_directories(dir_.Join("inbox"));
  {
    std::ofstream out(dir_.Join("inbox/a.csv"));
    out << "1\n";
  }
  Start();
  Root("CREATE DATABASE shop");
  Root("CREATE TABLE shop.open_t (id INT)");
  Root("CREATE TABLE shop.secret_t (id INT)");
  const std::string source = "local(\"file_path\" = \"" + dir_.Join("inbox") + "/*.csv\")";
  Root("CREATE JOB open_job ON STREAMING DO INSERT INTO shop.open_t SELECT c1 FROM " + source);
  Root("CREATE JOB secret_job ON STREAMING DO INSERT INTO shop.secret_t SELECT c1 FROM " + source);
  Root("CREATE USER ann IDENTIFIED BY 'Ann-Http-1'");
  Root("GRANT SELECT_PRIV, LOAD_PRIV ON shop.open_t TO ann");

  httplib::Client client = Client();
  client.set_basic_auth("ann", "Ann-Http-1");
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("job=\"open_job\""), std::string::npos) << metrics->body;
  EXPECT_EQ(metrics->body.find("secret_job"), std::string::npos);
  httplib::Client admin = Client();
  admin.set_basic_auth("root", kRootPassword);
  auto all = admin.Get("/metrics");
  ASSERT_TRUE(all);
  EXPECT_NE(all->body.find("job=\"secret_job\""), std::string::npos);

  auto hidden = client.Post("/api/jobs/secret_job/pause", "", "application/json");
  auto missing = client.Post("/api/jobs/no_job/pause", "", "application/json");
  ASSERT_TRUE(hidden && missing);
  EXPECT_EQ(hidden->status, 404);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(hidden->body, "{\"error\":\"job secret_job does not exist\"}\n");
  EXPECT_EQ(hidden->body.find("secret_t"), std::string::npos);
  auto own = client.Post("/api/jobs/open_job/pause", "", "application/json");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
}

}  // namespace
}  // namespace millrace::access
