// Users end to end: the real `millrace serve`, the real `mariadb` client and MariaDB
// Connector/C. root creates a user; the user logs in with its password and not without it;
// grants show in SHOW GRANTS, and a GRANT or REVOKE reaches a session already open; the
// catalog holds the hash, never the password; no log line holds a password.
#include <gtest/gtest.h>

#include "access/access_e2e_util.h"
#include "access/password.h"
#include "engine/database.h"

namespace millrace::access {
namespace {

using server::ServerProcess;

constexpr const char* kRootPassword = "Root-Secret-77";
constexpr const char* kBobPassword = "Bob-Secret-42";

class UsersE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Debug logging: every statement reaches the log, so the masking is put to the test.
    auto server = ServerProcess::Start(
        dir_.path(),
        {{"--log-level", "debug"}, {std::string("MILLRACE_ROOT_PASSWORD=") + kRootPassword}});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    std::string error;
    root_ = Connect(server_->mysql_port(), "root", kRootPassword, &error);
    ASSERT_NE(root_, nullptr) << error;
  }

  Rows Root(const std::string& sql) {
    auto rows = Query(root_.get(), sql);
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    return rows.ok() ? std::move(rows).value() : Rows{};
  }

  // `mariadb -u<user> -p<password> -e <sql>`.
  Result<testing::ProcessResult> Mariadb(const std::string& user, const std::string& password,
                                         const std::string& sql) {
    return server::MariaDb(server_->mysql_port(), sql,
                           {"-u" + user, "-p" + password, "--skip-column-names"});
  }

  testing::TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  MysqlPtr root_;
};

TEST_F(UsersE2ETest, AUserLogsInSeesItsGrantsAndTheCatalogHoldsOnlyTheHash) {
  Root("CREATE DATABASE shop");
  Root("CREATE TABLE shop.orders (id INT)");
  Root(std::string("CREATE USER 'bob'@'%' IDENTIFIED BY '") + kBobPassword + "'");
  Root("GRANT SELECT_PRIV ON shop.* TO 'bob'@'%'");

  // The mariadb client logs in with the password, and not with another.
  auto ok = Mariadb("bob", kBobPassword, "SHOW GRANTS");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->exit_code, 0) << ok->err;
  EXPECT_EQ(ok->out, "'bob'@'%'\tYes\tNULL\tNULL\tshop: SELECT_PRIV\tNULL\n");
  auto wrong = Mariadb("bob", "not-bobs", "SELECT 1");
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  EXPECT_NE(wrong->exit_code, 0);
  EXPECT_NE(wrong->err.find("ERROR 1045 (28000)"), std::string::npos) << wrong->err;
  EXPECT_NE(wrong->err.find("Access denied for user 'bob'@'127.0.0.1' (using password: YES)"),
            std::string::npos)
      << wrong->err;

  // Connector/C: the same, and errno 1045 for a wrong password or an unknown user.
  std::string error;
  EXPECT_EQ(Connect(server_->mysql_port(), "bob", "Bob-Secret-43", &error), nullptr);
  EXPECT_EQ(error, "1045 (28000): Access denied for user 'bob'@'127.0.0.1' (using password: YES)");
  EXPECT_EQ(Connect(server_->mysql_port(), "nobody", kBobPassword, &error), nullptr);
  EXPECT_EQ(error.substr(0, 4), "1045");
  MysqlPtr bob = Connect(server_->mysql_port(), "bob", kBobPassword, &error);
  ASSERT_NE(bob, nullptr) << error;

  // bob is no admin.
  auto denied = Query(bob.get(), "CREATE USER eve");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().message(),
            "1227: Access denied; you need (at least one of) the ADMIN_PRIV privilege(s) for this "
            "operation");
  EXPECT_EQ(std::string(mysql_sqlstate(bob.get())), "42000");

  // A GRANT and a REVOKE reach bob's open session.
  Root("GRANT LOAD_PRIV ON shop.orders TO bob");
  EXPECT_EQ(
      Query(bob.get(), "SHOW GRANTS").value(),
      (Rows{{"'bob'@'%'", "Yes", "NULL", "NULL", "shop: SELECT_PRIV", "shop.orders: LOAD_PRIV"}}));
  Root("REVOKE SELECT_PRIV ON shop.* FROM bob");
  Root("GRANT ADMIN_PRIV ON *.* TO bob");
  EXPECT_EQ(Query(bob.get(), "SHOW GRANTS").value(),
            (Rows{{"'bob'@'%'", "Yes", "ADMIN_PRIV", "NULL", "NULL", "shop.orders: LOAD_PRIV"}}));
  EXPECT_TRUE(Query(bob.get(), "CREATE USER eve").ok());
  EXPECT_EQ(Root("SHOW USERS"), (Rows{{"root", "%"}, {"bob", "%"}, {"eve", "%"}}));

  // bob changes its own password; the old one no longer works.
  Root("REVOKE ADMIN_PRIV ON *.* FROM bob");
  ASSERT_TRUE(Query(bob.get(), "SET PASSWORD = PASSWORD('Bob-Secret-2nd')").ok());
  EXPECT_EQ(Connect(server_->mysql_port(), "bob", kBobPassword, &error), nullptr);
  EXPECT_NE(Connect(server_->mysql_port(), "bob", "Bob-Secret-2nd", &error), nullptr) << error;
  EXPECT_GE(server::PrometheusValue(
                server::HttpGet(server_->http_port(), "/metrics", "", "root", kRootPassword)->body,
                "millrace_mysql_auth_failures_total"),
            4);

  bob.reset();
  root_.reset();
  auto exited = server_->Terminate();
  ASSERT_TRUE(exited.ok() && *exited == 0);

  // The catalog holds MySQL's hash of the password, not the password.
  {
    auto db = engine::Database::Open({.path = dir_.Join("millrace.duckdb")});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto conn = (*db)->Connect();
    ASSERT_TRUE(conn.ok());
    auto users = engine::QueryTextRows(**conn,
                                       "SELECT name, host, password_hash FROM __millrace.users "
                                       "ORDER BY name");
    ASSERT_TRUE(users.ok()) << users.status().ToString();
    EXPECT_EQ(*users, (Rows{{"bob", "%", NativeHashText(NativePasswordHash("Bob-Secret-2nd"))},
                            {"eve", "%", ""}}));
    auto everything = engine::QueryTextRows(
        **conn, "SELECT count(*) FROM __millrace.users u WHERE contains(u::VARCHAR, 'Secret')");
    ASSERT_TRUE(everything.ok()) << everything.status().ToString();
    EXPECT_EQ(*everything, (Rows{{"0"}}));
  }

  // No log line holds a password, though every statement was logged.
  const std::string log = server_->Log();
  EXPECT_NE(log.find("CREATE USER 'bob'"), std::string::npos) << log;
  EXPECT_NE(log.find("Access denied for user 'bob'@'127.0.0.1'"), std::string::npos) << log;
  EXPECT_EQ(log.find("Secret"), std::string::npos) << log;
}

// --max-connections-per-user bounds the sessions of every user whose own MAX_USER_CONNECTIONS
// is 0 (root too), as MySQL's global max_user_connections does; the user's own wins.
TEST(UserConnectionLimitE2ETest, ALoginPastTheLimitGets1203) {
  testing::TempDir dir;
  auto server = ServerProcess::Start(
      dir.path(), {{"--max-connections-per-user", "2"}, {"MILLRACE_ROOT_PASSWORD=pw"}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->mysql_port();
  std::string error;
  MysqlPtr first = Connect(port, "root", "pw", &error);
  ASSERT_NE(first, nullptr) << error;
  auto limit = Query(first.get(), "SELECT @@max_user_connections");
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(*limit, (Rows{{"2"}}));
  ASSERT_TRUE(
      Query(first.get(), "CREATE USER ann IDENTIFIED BY 'a' WITH MAX_USER_CONNECTIONS 3").ok());
  MysqlPtr second = Connect(port, "root", "pw", &error);
  ASSERT_NE(second, nullptr) << error;
  EXPECT_EQ(Connect(port, "root", "pw", &error), nullptr);
  EXPECT_EQ(error.substr(0, 11), "1203 (42000") << error;
  EXPECT_NE(error.find("User root already has more than 'max_user_connections'"), std::string::npos)
      << error;
  // One closes, another may come.
  second.reset();
  EXPECT_TRUE(testing::WaitFor([&] { return Connect(port, "root", "pw", &error) != nullptr; }))
      << error;
  // ann's own limit (3) wins over the server's.
  std::vector<MysqlPtr> anns;
  for (int i = 0; i < 3; ++i) {
    anns.push_back(Connect(port, "ann", "a", &error));
    ASSERT_NE(anns.back(), nullptr) << error;
  }
  EXPECT_EQ(Connect(port, "ann", "a", &error), nullptr);
  EXPECT_EQ(error.substr(0, 4), "1203") << error;
}

// DROP USER ends the user's open sessions: the connection is closed, and a new user of the
// same name does not find a session waiting with its grants. Names that would show as another
// user's ('root ', 'bob ') or hold control characters are refused.
TEST_F(UsersE2ETest, DropUserEndsItsSessionsAndNamesAreWhatTheySay) {
  Root("CREATE DATABASE shop");
  Root("CREATE TABLE shop.orders (id INT)");
  Root(std::string("CREATE USER 'bob'@'%' IDENTIFIED BY '") + kBobPassword + "'");
  std::string error;
  MysqlPtr bob = Connect(server_->mysql_port(), "bob", kBobPassword, &error);
  ASSERT_NE(bob, nullptr) << error;
  ASSERT_TRUE(Query(bob.get(), "SELECT 1").ok());
  Root("DROP USER bob");
  // The open session is closed; recreated with the same name and more grants, bob's old
  // connection does not come back with them.
  Root(std::string("CREATE USER 'bob'@'%' IDENTIFIED BY '") + kBobPassword + "'");
  Root("GRANT SELECT_PRIV ON shop.* TO bob");
  EXPECT_TRUE(testing::WaitFor([&] { return !Query(bob.get(), "SELECT 1").ok(); }));
  auto orders = Query(bob.get(), "SELECT count(*) FROM shop.orders");
  EXPECT_FALSE(orders.ok());
  // A new login of the new bob works.
  MysqlPtr again = Connect(server_->mysql_port(), "bob", kBobPassword, &error);
  ASSERT_NE(again, nullptr) << error;
  EXPECT_TRUE(Query(again.get(), "SELECT count(*) FROM shop.orders").ok());

  for (const char* name : {"'root '", "' bob'", "'carl\t'", "'dan\nroot'"}) {
    auto refused = Query(root_.get(), std::string("CREATE USER ") + name + " IDENTIFIED BY 'x'");
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_NE(refused.status().message().find("1396"), std::string::npos)
        << name << ": " << refused.status().ToString();
  }
}

}  // namespace
}  // namespace millrace::access
