// The statements on external catalogs through the router as a client runs them, over the real
// embedded catalog store: the grammar, who may run them, what SHOW answers, that a catalog
// survives a restart sealed, and that a password never reaches an answer, a log line or the
// database file in clear. Where a catalog connects is injected (ConnectProbe); the real probe
// against PostgreSQL is catalog_connect_test.cc's.
#include "external/catalog_statements.h"

#include <gtest/gtest.h>

#include "catalog/duckdb_catalog.h"
#include "common/secret_box.h"
#include "engine/database.h"
#include "sql/mysql_errors.h"
#include "sql/router_test.h"

namespace millrace::external {
namespace {

using Rows = std::vector<std::vector<std::string>>;

access::PrivilegeSet Only(access::Privilege privilege) {
  access::PrivilegeSet set;
  set.Add(privilege);
  return set;
}

constexpr char kCreate[] =
    "CREATE CATALOG pg COMMENT 'the \"warehouse\"' PROPERTIES ('type' = 'jdbc', \"user\" = "
    "'loader', 'password' = 'pw-9f2', 'jdbc_url' = 'jdbc:postgresql://db.example:5432/shop', "
    "'driver_url' = 'postgresql-42.5.6.jar', 'driver_class' = 'org.postgresql.Driver')";

class CatalogStatementsTest : public sql::RouterTest {
 protected:
  void SetUp() override {
    auto db = engine::Database::Open({});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    Start();
  }

  // A server's start over the same database: the stores, access control, the router.
  void Start() {
    root_.reset();
    router_.reset();
    catalogs_.reset();
    access_.reset();
    stores_ = std::make_unique<catalog::DuckDbCatalog>(db_.get(), "memory", secrets_.get());
    ASSERT_TRUE(stores_->Open().ok());
    access_ = std::make_unique<access::AccessControl>(stores_->users(), "");
    ASSERT_TRUE(access_->Load().ok());
    catalogs_ = std::make_unique<ExternalCatalogs>(stores_->external_catalogs(), &clock_,
                                                   [this](const pg::ConnectParams& params) {
                                                     probed_.push_back(params);
                                                     return reach_;
                                                   });
    ASSERT_TRUE(catalogs_->Load().ok());
    router_ = std::make_unique<sql::Router>(db_.get(), sql::RouterOptions{});
    RegisterCatalogStatements(router_.get(), catalogs_.get(), access_.get());
    Connected();
  }

  // An error never shows the catalog's password.
  Status Error(std::string_view sql, sql::Session* session = nullptr) {
    Status error = RouterTest::Error(sql, session);
    EXPECT_EQ(error.message().find("pw-9f2"), std::string::npos) << error.message();
    return error;
  }
  // Column `column` of `rows`.
  static Rows Column(const Rows& rows, size_t column) {
    Rows out;
    for (const auto& row : rows)
      out.push_back({row.at(column)});
    return out;
  }
  Rows Names() { return Column(Ok("SHOW CATALOGS"), 1); }

  std::unique_ptr<SecretBox> secrets_ = SecretBox::WithKey(std::string(32, 'k'));
  ManualClock clock_;
  std::vector<pg::ConnectParams> probed_;
  Status reach_ = Status::Ok();
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<catalog::DuckDbCatalog> stores_;
  std::unique_ptr<access::AccessControl> access_;
  std::unique_ptr<ExternalCatalogs> catalogs_;
};

TEST_F(CatalogStatementsTest, CreateShowAndShowCreate) {
  Ok(kCreate);
  ASSERT_EQ(probed_.size(), 1u);
  EXPECT_EQ(probed_[0].host, "db.example");
  EXPECT_EQ(probed_[0].database, "shop");
  EXPECT_EQ(probed_[0].password, "pw-9f2");
  const Rows catalogs = Ok("SHOW CATALOGS");
  ASSERT_EQ(catalogs.size(), 2u);
  EXPECT_EQ(catalogs[0],
            (std::vector<std::string>{"0", "internal", "internal", "yes", "NULL", "NULL", ""}));
  EXPECT_EQ(catalogs[1][0], "1");
  EXPECT_EQ(catalogs[1][1], "pg");
  EXPECT_EQ(catalogs[1][2], "jdbc");
  EXPECT_EQ(catalogs[1][4], "2026-01-01 00:00:00");  // ManualClock's start, UTC
  EXPECT_EQ(catalogs[1][6], "the \"warehouse\"");
  const Rows create = Ok("SHOW CREATE CATALOG pg");
  ASSERT_EQ(create.size(), 1u);
  EXPECT_EQ(create[0][0], "pg");
  EXPECT_EQ(create[0][1].find("pw-9f2"), std::string::npos);
  EXPECT_NE(create[0][1].find("\"password\" = \"*XXX\""), std::string::npos) << create[0][1];
  // What SHOW CREATE printed makes the same catalog again (under another name).
  std::string again = create[0][1];
  again.replace(again.find("`pg`"), 4, "pg2");
  Ok(again);
  EXPECT_EQ(Names(), (Rows{{"internal"}, {"pg"}, {"pg2"}}));
  EXPECT_EQ(catalogs_->Find("pg2")->comment, "the \"warehouse\"");
  EXPECT_EQ(Ok("SHOW CATALOGS LIKE 'pg_'"), Ok("SHOW CATALOGS WHERE \"CatalogName\" = 'pg2'"));
}

TEST_F(CatalogStatementsTest, ExistsAndNotExists) {
  Ok(kCreate);
  EXPECT_EQ(Error(kCreate).code(), StatusCode::kAlreadyExists);
  // Names compare case-insensitively, as DuckDB resolves the names a statement writes.
  std::string upper = kCreate;
  upper.replace(upper.find(" pg "), 4, " PG ");
  EXPECT_EQ(Error(upper).code(), StatusCode::kAlreadyExists);
  std::string if_not_exists = kCreate;
  if_not_exists.replace(0, 14, "CREATE CATALOG IF NOT EXISTS");
  Ok(if_not_exists);
  EXPECT_EQ(Error("DROP CATALOG nope").code(), StatusCode::kNotFound);
  Ok("DROP CATALOG IF EXISTS nope");
  EXPECT_EQ(Error("SHOW CREATE CATALOG nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(Error("ALTER CATALOG nope SET PROPERTIES ('user' = 'x')").code(),
            StatusCode::kNotFound);
  Ok("DROP CATALOG Pg");
  EXPECT_EQ(Names(), (Rows{{"internal"}}));
}

TEST_F(CatalogStatementsTest, AlterMergesPropertiesAndKeepsTheType) {
  Ok(kCreate);
  clock_.Advance(std::chrono::hours(1));
  Ok("ALTER CATALOG pg SET PROPERTIES ('jdbc_url' = 'jdbc:postgresql://db2.example/shop2')");
  ASSERT_EQ(probed_.size(), 2u);
  EXPECT_EQ(probed_[1].host, "db2.example");
  EXPECT_EQ(probed_[1].user, "loader");  // kept
  EXPECT_EQ(probed_[1].password, "pw-9f2");
  const Rows row = Ok("SHOW CATALOGS WHERE \"CatalogName\" = 'pg'");
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0][4], "2026-01-01 00:00:00");
  EXPECT_EQ(row[0][5], "2026-01-01 01:00:00");
  EXPECT_NE(Error("ALTER CATALOG pg SET PROPERTIES ('type' = 'postgresql')")
                .message()
                .find("the type of a catalog cannot change"),
            std::string::npos);
  EXPECT_NE(Error("ALTER CATALOG pg SET PROPERTIES ('jdbc_url' = 'jdbc:mysql://h/db')")
                .message()
                .find("catalog pg: jdbc_url must be"),
            std::string::npos);
  Ok("ALTER CATALOG pg MODIFY COMMENT 'moved'");
  EXPECT_EQ(Column(Ok("SHOW CATALOGS WHERE \"CatalogName\" = 'pg'"), 6), (Rows{{"moved"}}));
  // A refused ALTER changed nothing.
  EXPECT_NE(Ok("SHOW CREATE CATALOG pg")[0][1].find("db2.example/shop2"), std::string::npos);
}

TEST_F(CatalogStatementsTest, UnreachableCatalogIsRefusedUnlessNotTested) {
  reach_ = Status::Unauthenticated(
      "PostgreSQL db.example:5432/shop: password authentication "
      "failed for user \"loader\"");
  const Status refused = Error(kCreate);
  EXPECT_EQ(refused.code(), StatusCode::kUnauthenticated);
  EXPECT_NE(refused.message().find("catalog pg cannot connect"), std::string::npos);
  EXPECT_NE(refused.message().find("password authentication failed"), std::string::npos);
  EXPECT_EQ(Names(), (Rows{{"internal"}}));
  std::string untested = kCreate;
  untested.insert(untested.size() - 1, ", 'test_connection' = 'false'");
  Ok(untested);
  EXPECT_EQ(Names(), (Rows{{"internal"}, {"pg"}}));
  EXPECT_EQ(probed_.size(), 1u);
  // Turning the test back on tests the catalog as altered.
  EXPECT_EQ(Error("ALTER CATALOG pg SET PROPERTIES ('test_connection' = 'true')").code(),
            StatusCode::kUnauthenticated);
}

TEST_F(CatalogStatementsTest, MalformedStatements) {
  for (const char* sql : {"CREATE CATALOG", "CREATE CATALOG pg", "CREATE CATALOG pg PROPERTIES",
                          "CREATE CATALOG pg PROPERTIES ('type' = 'jdbc'",
                          "CREATE CATALOG pg PROPERTIES ('type' = 'jdbc') extra",
                          "ALTER CATALOG pg", "DROP CATALOG", "SHOW CREATE CATALOG"}) {
    EXPECT_EQ(sql::ClassifyError(Error(sql)).code, sql::kErParse) << sql;
  }
  EXPECT_EQ(sql::ClassifyError(Error("CREATE CATALOG pg WITH RESOURCE r")).code,
            sql::kErNotSupportedYet);
  EXPECT_EQ(sql::ClassifyError(Error("ALTER CATALOG pg RENAME pg2")).code, sql::kErNotSupportedYet);
  EXPECT_EQ(Error("CREATE CATALOG internal PROPERTIES ('type' = 'jdbc')").code(),
            StatusCode::kInvalidArgument);
  // A parse error does not quote the statement, which may hold a password.
  const Status concealed = Error("CREATE CATALOG pg PROPERTIES ('password' = 'pw-9f2' oops)");
  EXPECT_EQ(concealed.message().find("oops"), std::string::npos) << concealed.message();
  // StarRocks' spelling.
  std::string external = kCreate;
  external.replace(0, 14, "CREATE EXTERNAL CATALOG");
  Ok(external);
}

TEST_F(CatalogStatementsTest, PrivilegesAsDorisChecksThem) {
  Ok(kCreate);
  ASSERT_TRUE(access_->CreateUser({"ann", std::nullopt}, {}, false).ok());
  auto ann = Connect("ann");
  for (const char* sql : {kCreate, "ALTER CATALOG pg MODIFY COMMENT 'x'", "DROP CATALOG pg",
                          "SHOW CREATE CATALOG pg"}) {
    EXPECT_EQ(sql::ClassifyError(Error(sql, ann.get())).code, sql::kErSpecificAccessDenied) << sql;
  }
  // Without a privilege at *.*, SHOW CATALOGS shows internal only.
  EXPECT_EQ(Ok("SHOW CATALOGS", ann.get()).size(), 1u);
  ASSERT_TRUE(
      access_->GrantPrivileges({"ann", std::nullopt}, {"", ""}, Only(access::Privilege::kCreate))
          .ok());
  std::string second = kCreate;
  second.replace(second.find(" pg "), 4, " pg2 ");
  Ok(second, ann.get());
  EXPECT_EQ(Ok("SHOW CATALOGS", ann.get()).size(), 3u);
  EXPECT_EQ(sql::ClassifyError(Error("DROP CATALOG pg2", ann.get())).code,
            sql::kErSpecificAccessDenied);
  // A privilege on a database is not one on catalogs.
  ASSERT_TRUE(
      access_->GrantPrivileges({"ann", std::nullopt}, {"db", ""}, Only(access::Privilege::kDrop))
          .ok());
  EXPECT_EQ(sql::ClassifyError(Error("DROP CATALOG pg2", ann.get())).code,
            sql::kErSpecificAccessDenied);
  // One on the catalog (pg2.*.*) is, for that catalog only.
  ASSERT_TRUE(
      access_
          ->GrantPrivileges({"ann", std::nullopt}, {"", "", "pg2"}, Only(access::Privilege::kDrop))
          .ok());
  EXPECT_EQ(sql::ClassifyError(Error("DROP CATALOG pg", ann.get())).code,
            sql::kErSpecificAccessDenied);
  Ok("DROP CATALOG pg2", ann.get());
  // Without a privilege at *.*, SHOW CATALOGS lists the catalogs the user holds one in.
  ASSERT_TRUE(
      access_->RevokePrivileges({"ann", std::nullopt}, {"", ""}, Only(access::Privilege::kCreate))
          .ok());
  ASSERT_TRUE(access_
                  ->GrantPrivileges({"ann", std::nullopt}, {"public", "t", "pg"},
                                    Only(access::Privilege::kLoad))
                  .ok());
  const auto shown = Ok("SHOW CATALOGS", ann.get());
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[1][1], "pg");
  Ok("SHOW CREATE CATALOG pg", ann.get());
}

TEST_F(CatalogStatementsTest, LoggedMaskedKeptSealedAndLoadedAgain) {
  EXPECT_EQ(router_->LoggableStatement(kCreate).find("pw-9f2"), std::string::npos);
  EXPECT_NE(router_->LoggableStatement(kCreate).find("'password' = '***'"), std::string::npos)
      << router_->LoggableStatement(kCreate);
  Ok(kCreate);
  // The database holds the properties sealed: no password, nor any other property, in clear.
  auto conn = db_->Connect();
  ASSERT_TRUE(conn.ok());
  auto stored =
      engine::QueryTextRows(**conn, "SELECT name, properties FROM __millrace.external_catalogs");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0][0], "pg");
  EXPECT_EQ((*stored)[0][1].find("pw-9f2"), std::string::npos);
  EXPECT_EQ((*stored)[0][1].find("db.example"), std::string::npos);
  EXPECT_TRUE(SecretBox::IsSealed((*stored)[0][1]));
  // A restart loads it as it was.
  const Rows before = Ok("SHOW CREATE CATALOG pg");
  Start();
  EXPECT_EQ(Ok("SHOW CREATE CATALOG pg"), before);
  EXPECT_EQ(catalogs_->Find("PG")->properties.at("password"), "pw-9f2");
  // Under another key the catalog cannot be opened: the error says which catalog.
  secrets_ = SecretBox::WithKey(std::string(32, 'x'));
  stores_ = std::make_unique<catalog::DuckDbCatalog>(db_.get(), "memory", secrets_.get());
  ASSERT_TRUE(stores_->Open().ok());
  auto loaded = stores_->external_catalogs()->LoadCatalogs();
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(loaded.status().message().find("catalog pg in memory"), std::string::npos);
}

}  // namespace
}  // namespace millrace::external
