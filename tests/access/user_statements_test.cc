// The statements on users and grants, through the router as a client runs them: syntax, who
// may run them, what SHOW GRANTS answers, and that passwords never reach a log line or error.
#include "access/user_statements.h"

#include <gtest/gtest.h>

#include "access/memory_user_store.h"
#include "access/password.h"
#include "engine/database.h"
#include "sql/mysql_errors.h"
#include "sql/router_test.h"

namespace millrace::access {
namespace {

using Rows = std::vector<std::vector<std::string>>;

class UserStatementsTest : public sql::RouterTest {
 protected:
  void SetUp() override {
    auto db = engine::Database::Open({});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    router_ = std::make_unique<sql::Router>(db_.get(), sql::RouterOptions{});
    RegisterUserStatements(router_.get(), &access_);
    Connected();
  }

  uint16_t Errno(std::string_view sql, sql::Session* session = nullptr) {
    return sql::ClassifyError(Error(sql, session)).code;
  }
  bool LogsIn(const std::string& user, const std::string& password,
              const std::string& host = "10.0.0.1") {
    const std::string scramble = "abcdefghij0123456789";
    return access_
        .Authenticate(user, host, scramble, NativePasswordResponse(password, scramble), false)
        .ok();
  }

  MemoryUserStore store_;
  AccessControl access_{&store_, ""};
  std::unique_ptr<engine::Database> db_;
};

TEST_F(UserStatementsTest, CreateUserInEveryQuotingStyle) {
  Ok("CREATE USER 'ann'@'%' IDENTIFIED BY 'pw-ann'");
  Ok("CREATE USER \"bea\"@\"localhost\" IDENTIFIED BY \"pw-bea\"");
  Ok("create user `cat`@`10.0.0.1` identified by 'pw-cat'");
  Ok("CREATE USER dan@localhost");
  Ok("CREATE USER eve");
  Ok("CREATE USER IF NOT EXISTS eve IDENTIFIED BY 'ignored'");
  EXPECT_EQ(Ok("SHOW USERS"), (Rows{{"root", "%"},
                                    {"ann", "%"},
                                    {"bea", "localhost"},
                                    {"cat", "10.0.0.1"},
                                    {"dan", "localhost"},
                                    {"eve", "%"}}));
  EXPECT_TRUE(LogsIn("ann", "pw-ann"));
  EXPECT_TRUE(LogsIn("bea", "pw-bea", "127.0.0.1"));
  EXPECT_TRUE(LogsIn("cat", "pw-cat"));
  EXPECT_TRUE(LogsIn("eve", ""));
  EXPECT_EQ(Errno("CREATE USER ann"), sql::kErCannotUser);
  EXPECT_EQ(Error("CREATE USER 'ann'@'%'").message(), "Operation CREATE USER failed for 'ann'@'%'");
  EXPECT_EQ(Errno("CREATE USER root IDENTIFIED BY 'x'"), sql::kErCannotUser);
}

TEST_F(UserStatementsTest, CreateUserOptions) {
  Ok("CREATE USER fay IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19' "
     "REQUIRE SSL WITH MAX_USER_CONNECTIONS 5");
  const std::optional<UserRecord> fay = access_.FindUser("fay");
  ASSERT_TRUE(fay.has_value());
  EXPECT_EQ(fay->password_hash, NativePasswordHash("password"));
  EXPECT_TRUE(fay->require_ssl);
  EXPECT_EQ(fay->max_user_connections, 5);
  Ok("CREATE USER gus WITH MAX_USER_CONNECTIONS 1 REQUIRE NONE "
     "IDENTIFIED WITH mysql_native_password BY 'pw'");
  EXPECT_TRUE(LogsIn("gus", "pw"));
  Ok("CREATE USER hal IDENTIFIED WITH mysql_native_password AS "
     "'*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'");
  EXPECT_TRUE(LogsIn("hal", "password"));

  EXPECT_EQ(Errno("CREATE USER ivy IDENTIFIED BY PASSWORD 'plain-text'"), sql::kErPasswordFormat);
  EXPECT_EQ(Errno("CREATE USER ivy IDENTIFIED WITH caching_sha2_password BY 'pw'"),
            sql::kErNotSupportedYet);
  EXPECT_EQ(Errno("CREATE USER ivy REQUIRE X509"), sql::kErParse);
  EXPECT_EQ(Errno("CREATE USER ivy WITH MAX_USER_CONNECTIONS -1"), sql::kErParse);
  EXPECT_EQ(Errno("CREATE USER ivy IDENTIFIED BY 'a' IDENTIFIED BY 'b'"), sql::kErParse);
  EXPECT_EQ(Errno("CREATE USER 'ivy'@'10.%'"), sql::kErCannotUser);
  EXPECT_FALSE(access_.UserExists("ivy"));
}

TEST_F(UserStatementsTest, AlterDropAndSetPassword) {
  Ok("CREATE USER jon IDENTIFIED BY 'one'");
  Ok("ALTER USER jon IDENTIFIED BY 'two'");
  EXPECT_TRUE(LogsIn("jon", "two"));
  Ok("ALTER USER 'jon'@'%' REQUIRE SSL WITH MAX_USER_CONNECTIONS 3");
  EXPECT_TRUE(access_.FindUser("jon")->require_ssl);
  EXPECT_FALSE(LogsIn("jon", "two"));  // not over TLS
  Ok("ALTER USER jon REQUIRE NONE");
  EXPECT_EQ(Errno("ALTER USER jon"), sql::kErParse);  // nothing to change
  EXPECT_EQ(Errno("ALTER USER nobody IDENTIFIED BY 'x'"), sql::kErCannotUser);
  Ok("ALTER USER IF EXISTS nobody IDENTIFIED BY 'x'");
  EXPECT_EQ(Errno("ALTER USER root IDENTIFIED BY 'x'"), sql::kErCannotUser);

  Ok("SET PASSWORD FOR jon = 'three'");
  EXPECT_TRUE(LogsIn("jon", "three"));
  Ok("SET PASSWORD FOR 'jon'@'%' = PASSWORD('four')");
  EXPECT_TRUE(LogsIn("jon", "four"));
  EXPECT_EQ(Errno("SET PASSWORD FOR nobody = 'x'"), sql::kErPasswordNoMatch);
  EXPECT_EQ(Errno("SET PASSWORD = 'x'"), sql::kErCannotUser);  // root's is --password-env's

  EXPECT_EQ(Errno("DROP USER 'jon'@'localhost'"), sql::kErCannotUser);
  Ok("DROP USER 'jon'@'%'");
  EXPECT_FALSE(access_.UserExists("jon"));
  EXPECT_EQ(Error("DROP USER jon").message(), "Operation DROP USER failed for 'jon'@'%'");
  Ok("DROP USER IF EXISTS jon");
  EXPECT_EQ(Errno("DROP USER root"), sql::kErCannotUser);
}

TEST_F(UserStatementsTest, GrantRevokeAndShowGrants) {
  Ok("CREATE USER kay IDENTIFIED BY 'pw'");
  Ok("CREATE USER lou");
  Ok("GRANT SELECT_PRIV, LOAD_PRIV ON shop.orders TO kay");
  Ok("GRANT SELECT ON shop.* TO 'kay'@'%'");
  Ok("GRANT CREATE_PRIV ON *.* TO kay");
  Ok("GRANT ALL PRIVILEGES ON archive.* TO kay");
  Ok("GRANT ALTER ON `shop`.`items` TO kay");
  EXPECT_EQ(Ok("SHOW GRANTS FOR kay"),
            (Rows{{"'kay'@'%'", "Yes", "CREATE_PRIV", "NULL",
                   "archive: SELECT_PRIV,LOAD_PRIV,ALTER_PRIV,CREATE_PRIV,DROP_PRIV; shop: "
                   "SELECT_PRIV",
                   "shop.items: ALTER_PRIV; shop.orders: SELECT_PRIV,LOAD_PRIV"}}));
  EXPECT_EQ(Ok("SHOW GRANTS FOR lou"), (Rows{{"'lou'@'%'", "No", "NULL", "NULL", "NULL", "NULL"}}));
  EXPECT_EQ(Ok("SHOW GRANTS"), (Rows{{"'root'@'%'", "No",
                                      "SELECT_PRIV,LOAD_PRIV,ALTER_PRIV,CREATE_PRIV,DROP_PRIV,"
                                      "ADMIN_PRIV",
                                      "NULL", "NULL", "NULL"}}));
  EXPECT_EQ(Ok("SHOW ALL GRANTS").size(), 3u);
  EXPECT_EQ(Ok("SHOW ALL GRANTS")[1][0], "'kay'@'%'");

  Ok("REVOKE LOAD ON shop.orders FROM kay");
  Ok("REVOKE ALL ON archive.* FROM kay");
  EXPECT_EQ(Ok("SHOW GRANTS FOR 'kay'@'%'"),
            (Rows{{"'kay'@'%'", "Yes", "CREATE_PRIV", "NULL", "shop: SELECT_PRIV",
                   "shop.items: ALTER_PRIV; shop.orders: SELECT_PRIV"}}));
  EXPECT_EQ(Errno("REVOKE SELECT ON nowhere.* FROM kay"), sql::kErNonexistingGrant);
  EXPECT_EQ(Errno("GRANT SELECT ON shop.* TO nobody"), sql::kErCantCreateUserWithGrant);
  EXPECT_EQ(Errno("SHOW GRANTS FOR nobody"), sql::kErNonexistingGrant);
  EXPECT_EQ(Errno("SHOW GRANTS FOR 'kay'@'localhost'"), sql::kErNonexistingGrant);
  EXPECT_EQ(Errno("GRANT ADMIN_PRIV ON shop.* TO kay"), sql::kErWrongUsage);

  // Objects of an external catalog, as Doris names them; internal.db.tbl is db.tbl.
  Ok("GRANT LOAD_PRIV ON pg.public.events TO lou");
  Ok("GRANT SELECT_PRIV ON pg.public.* TO lou");
  Ok("GRANT CREATE_PRIV, DROP_PRIV ON pg.*.* TO lou");
  Ok("GRANT SELECT_PRIV ON internal.shop.orders TO lou");
  Ok("GRANT SELECT_PRIV ON *.*.* TO lou");
  EXPECT_EQ(
      Ok("SHOW GRANTS FOR lou"),
      (Rows{{"'lou'@'%'", "No", "SELECT_PRIV", "pg: CREATE_PRIV,DROP_PRIV",
             "pg.public: SELECT_PRIV", "shop.orders: SELECT_PRIV; pg.public.events: LOAD_PRIV"}}));
  EXPECT_TRUE(access_.HasIn("lou", Privilege::kLoad, "pg", "public", "events"));
  EXPECT_FALSE(access_.HasIn("lou", Privilege::kLoad, "pg", "public", "other"));
  EXPECT_FALSE(access_.Has("lou", Privilege::kLoad, "public", "events"));
  EXPECT_TRUE(access_.HasIn("lou", Privilege::kCreate, "pg", "", ""));
  EXPECT_FALSE(access_.Has("lou", Privilege::kCreate, "", ""));
  Ok("REVOKE LOAD_PRIV ON pg.public.events FROM lou");
  EXPECT_FALSE(access_.HasIn("lou", Privilege::kLoad, "pg", "public", "events"));
  EXPECT_EQ(Errno("GRANT SELECT ON internal.*.* TO lou"), sql::kErParse);
  EXPECT_EQ(Errno("GRANT ADMIN_PRIV ON pg.*.* TO lou"), sql::kErWrongUsage);
  EXPECT_EQ(Errno("GRANT SELECT ON shop.* TO root"), sql::kErCannotUser);
  const Status unknown = Error("GRANT EXECUTE ON shop.* TO kay");
  EXPECT_EQ(sql::ClassifyError(unknown).code, sql::kErParse);
  EXPECT_NE(unknown.message().find("EXECUTE"), std::string::npos) << unknown.message();
  EXPECT_EQ(Errno("GRANT SELECT shop.* TO kay"), sql::kErParse);
  EXPECT_EQ(Errno("GRANT SELECT ON shop.* kay"), sql::kErParse);
}

TEST_F(UserStatementsTest, StarAndBareTablesAreInTheCurrentDatabase) {
  Ok("CREATE USER max");
  EXPECT_EQ(Errno("GRANT SELECT ON * TO max"), sql::kErNoDb);
  Ok("CREATE SCHEMA shop");
  Ok("USE shop");
  Ok("GRANT SELECT ON * TO max");
  Ok("GRANT LOAD ON orders TO max");
  EXPECT_TRUE(access_.Has("max", Privilege::kSelect, "shop", "anything"));
  EXPECT_TRUE(access_.Has("max", Privilege::kLoad, "shop", "orders"));
  EXPECT_FALSE(access_.Has("max", Privilege::kLoad, "shop", "items"));
}

TEST_F(UserStatementsTest, UsersAndGrantsNeedAdmin) {
  Ok("CREATE USER ned IDENTIFIED BY 'ned-pw'");
  Ok("CREATE USER oli IDENTIFIED BY 'oli-pw'");
  Ok("GRANT SELECT ON shop.* TO ned");
  auto ned = Connect("ned");
  for (std::string_view sql :
       {"CREATE USER pam", "ALTER USER oli IDENTIFIED BY 'x'", "DROP USER oli",
        "SET PASSWORD FOR oli = 'x'", "GRANT SELECT ON shop.* TO oli",
        "REVOKE SELECT ON shop.* FROM ned", "SHOW GRANTS FOR oli", "SHOW ALL GRANTS", "SHOW USERS",
        "ALTER USER ned REQUIRE SSL", "GRANT ADMIN ON *.* TO ned"}) {
    const Status denied = Error(sql, ned.get());
    EXPECT_EQ(sql::ClassifyError(denied).code, sql::kErSpecificAccessDenied) << sql;
    EXPECT_EQ(sql::ClassifyError(denied).sqlstate, "42000");
    EXPECT_EQ(denied.message(),
              "Access denied; you need (at least one of) the ADMIN_PRIV privilege(s) for this "
              "operation");
  }
  EXPECT_FALSE(access_.UserExists("pam"));
  EXPECT_TRUE(LogsIn("oli", "oli-pw"));

  // Their own grants and password are theirs.
  EXPECT_EQ(Ok("SHOW GRANTS", ned.get()),
            (Rows{{"'ned'@'%'", "Yes", "NULL", "NULL", "shop: SELECT_PRIV", "NULL"}}));
  Ok("SHOW GRANTS FOR CURRENT_USER()", ned.get());
  Ok("SHOW GRANTS FOR ned", ned.get());
  Ok("SET PASSWORD = 'ned-new'", ned.get());
  EXPECT_TRUE(LogsIn("ned", "ned-new"));
  Ok("ALTER USER CURRENT_USER IDENTIFIED BY 'ned-newer'", ned.get());
  EXPECT_TRUE(LogsIn("ned", "ned-newer"));

  // A grant takes effect on the session already open.
  Ok("GRANT ADMIN_PRIV ON *.* TO ned");
  EXPECT_EQ(Ok("SHOW GRANTS", ned.get())[0][2], "ADMIN_PRIV");
  Ok("CREATE USER pam", ned.get());
  Ok("REVOKE ADMIN_PRIV ON *.* FROM ned");
  EXPECT_EQ(Errno("DROP USER pam", ned.get()), sql::kErSpecificAccessDenied);
}

TEST_F(UserStatementsTest, PasswordsStayOutOfLogsAndErrors) {
  const std::string secret = "Tr0ub4dor&3";
  for (const std::string& sql :
       {"CREATE USER 'quin'@'%' IDENTIFIED BY '" + secret + "' REQUIRE SSL",
        "CREATE USER quin IDENTIFIED WITH mysql_native_password BY \"" + secret + "\"",
        "ALTER USER quin IDENTIFIED BY '" + secret + "' WITH MAX_USER_CONNECTIONS 4",
        "SET PASSWORD FOR quin = '" + secret + "'",
        "SET PASSWORD FOR quin = PASSWORD('" + secret + "')", "SET PASSWORD = '" + secret + "'",
        // Malformed: the secret must not be echoed by the log or the syntax error either.
        "CREATE USER quin IDENTIFIED '" + secret + "'",
        "CREATE USER quin IDENTIFIED BY '" + secret + "' REQUIRE TLS",
        "CREATE USER quin IDENTIFIED BY " + secret, "SET PASSWORD FOR quin '" + secret + "'",
        "ALTER USER quin IDENTIFIED BY '" + secret + "' '" + secret + "'"}) {
    const std::string logged = router_->LoggableStatement(sql);
    EXPECT_EQ(logged.find(secret), std::string::npos) << logged;
    EXPECT_EQ(logged.find("Tr0ub"), std::string::npos) << logged;
    auto result = Run(*root_, sql);
    if (!result.ok()) {
      EXPECT_EQ(result.status().message().find("Tr0ub"), std::string::npos)
          << result.status().message();
    }
  }
  EXPECT_EQ(router_->LoggableStatement(
                "CREATE USER 'r'@'%' IDENTIFIED BY 'x' REQUIRE SSL WITH MAX_USER_CONNECTIONS 4"),
            "CREATE USER 'r' @ '%' IDENTIFIED BY **** REQUIRE SSL WITH MAX_USER_CONNECTIONS 4");
  // Statements without a password are logged as they are.
  EXPECT_EQ(router_->LoggableStatement("GRANT SELECT ON shop.* TO 'r'"),
            "GRANT SELECT ON shop.* TO 'r'");
  EXPECT_EQ(router_->LoggableStatement("SELECT 'x' AS password"), "SELECT 'x' AS password");
}

}  // namespace
}  // namespace millrace::access
