// External catalogs against a real PostgreSQL 15 and the real server binary: the connection
// test CREATE CATALOG makes (reached, credentials refused, nothing listening, TLS required of a
// server without it), and a catalog made over the MySQL port that outlives a restart, sealed
// in the database file and masked in the server's log.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "access/access_e2e_util.h"
#include "external/external_catalogs.h"
#include "testing/postgres_suite.h"
#include "testing/server_process.h"

namespace millrace::external {
namespace {

constexpr char kPassword[] = "catalog-pw-51c";

class CatalogConnectTest : public testing::PostgresSuite {
 protected:
  static void SetUpTestSuite() {
    PostgresSuite::SetUpTestSuite();
    ASSERT_TRUE(
        pg_->Sql("CREATE ROLE loader LOGIN PASSWORD '" + std::string(kPassword) + "'").ok());
  }
  static pg::ConnectParams Loader() {
    return {.host = pg_->host(),
            .port = pg_->port(),
            .database = "postgres",
            .user = "loader",
            .password = kPassword};
  }

  static std::string CreateSql(const std::string& name, const std::string& password,
                               const std::string& url_suffix = "") {
    return "CREATE CATALOG " + name + " PROPERTIES ('type' = 'jdbc', 'user' = 'loader', " +
           "'password' = '" + password + "', 'jdbc_url' = '" + pg_->JdbcUrl("postgres") +
           url_suffix + "')";
  }
};

TEST_F(CatalogConnectTest, TheProbeSaysWhyItCannotConnect) {
  const ConnectProbe probe = PgConnectProbe();
  EXPECT_TRUE(probe(Loader()).ok());
  pg::ConnectParams wrong = Loader();
  wrong.password = "not-it";
  EXPECT_EQ(probe(wrong).code(), StatusCode::kUnauthenticated);
  pg::ConnectParams nobody = Loader();
  auto free_port = testing::PickFreePort();
  ASSERT_TRUE(free_port.ok());
  nobody.port = *free_port;
  EXPECT_EQ(probe(nobody).code(), StatusCode::kUnavailable);
  // The test server has no TLS: a catalog that requires it is refused, not downgraded.
  pg::ConnectParams tls = Loader();
  tls.sslmode = "require";
  EXPECT_EQ(probe(tls).code(), StatusCode::kUnavailable);
  // The endpoint policy applies, as to every outbound connection.
  pg::ConnectParams metadata = Loader();
  metadata.host = "169.254.169.254";
  EXPECT_FALSE(probe(metadata).ok());
}

TEST_F(CatalogConnectTest, ThroughTheServerAndARestart) {
  auto mr = access::E2EServer::Start("");
  ASSERT_TRUE(mr.ok()) << mr.status().ToString();
  MYSQL* root = (*mr)->root.get();
  auto refused = access::Query(root, CreateSql("pg", "not-it"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("catalog pg cannot connect"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("password authentication failed"), std::string::npos);
  auto no_tls = access::Query(root, CreateSql("pg", kPassword, "?sslmode=require"));
  ASSERT_FALSE(no_tls.ok());
  EXPECT_NE(no_tls.status().message().find("SSL"), std::string::npos) << no_tls.status().message();
  auto created = access::Query(root, CreateSql("pg", kPassword));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // Audited, the password masked, refusals included.
  auto audited = access::Query(root,
                               "SELECT Kind, Action, Outcome, Statement FROM audit_log() WHERE "
                               "Kind = 'CATALOG' ORDER BY Time");
  ASSERT_TRUE(audited.ok()) << audited.status().ToString();
  ASSERT_EQ(audited->size(), 3u);
  for (const auto& row : *audited) {
    EXPECT_EQ(row[1], "CREATE CATALOG");
    EXPECT_EQ(row[3].find(kPassword), std::string::npos) << row[3];
    EXPECT_NE(row[3].find("'password' = '***'"), std::string::npos) << row[3];
  }
  auto listed = access::Query(root, "SHOW CATALOGS LIKE 'pg'");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0][2], "jdbc");

  // A restart on the same data directory loads it.
  std::unique_ptr<testing::TempDir> dir = std::move((*mr)->dir);
  const std::string log = (*mr)->server->Log();
  mr->reset();
  std::ifstream file(dir->Join("data/millrace.duckdb"), std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  EXPECT_EQ(bytes.str().find(kPassword), std::string::npos) << "the database file holds it";
  EXPECT_EQ(log.find(kPassword), std::string::npos) << log;
  auto again = access::E2EServer::Start("", {}, std::move(dir));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto shown = access::Query((*again)->root.get(), "SHOW CREATE CATALOG pg");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  ASSERT_EQ(shown->size(), 1u);
  EXPECT_NE((*shown)[0][1].find(pg_->JdbcUrl("postgres")), std::string::npos);
  EXPECT_NE((*shown)[0][1].find("*XXX"), std::string::npos);
  EXPECT_EQ((*shown)[0][1].find(kPassword), std::string::npos);
  ASSERT_TRUE(access::Query((*again)->root.get(), "DROP CATALOG pg").ok());
}

}  // namespace
}  // namespace millrace::external
