// External catalogs' properties (catalog_def.h): the two forms Doris writes, what libpq is
// given, and the errors of every malformed catalog, none of which shows a password or a URL
// past its scheme.
#include "external/catalog_def.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "testing/test_paths.h"

namespace millrace::external {
namespace {

CatalogProperties Jdbc(std::string url) {
  return {{"type", "jdbc"},
          {"user", "loader"},
          {"password", "s3cret"},
          {"jdbc_url", std::move(url)},
          {"driver_url", "postgresql-42.5.6.jar"},
          {"driver_class", "org.postgresql.Driver"}};
}

pg::ConnectParams Params(const CatalogProperties& properties) {
  auto endpoint = ParseCatalog(properties);
  EXPECT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  return endpoint.ok() ? endpoint->params : pg::ConnectParams{};
}

std::string Error(const CatalogProperties& properties) {
  auto endpoint = ParseCatalog(properties);
  EXPECT_FALSE(endpoint.ok());
  EXPECT_EQ(endpoint.status().code(), StatusCode::kInvalidArgument);
  const std::string message = endpoint.status().message();
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
  return message;
}

TEST(CatalogDefTest, JdbcUrlAsDorisWritesIt) {
  const pg::ConnectParams p = Params(Jdbc("jdbc:postgresql://db.example:6432/shop"));
  EXPECT_EQ(p.host, "db.example");
  EXPECT_EQ(p.port, 6432);
  EXPECT_EQ(p.database, "shop");
  EXPECT_EQ(p.user, "loader");
  EXPECT_EQ(p.password, "s3cret");
  EXPECT_EQ(p.sslmode, "");
}

TEST(CatalogDefTest, JdbcUrlDefaultsAndParameters) {
  // No port: 5432; no database: the user's, as the JDBC driver and libpq both default.
  pg::ConnectParams p = Params(Jdbc("jdbc:postgresql://10.0.0.7"));
  EXPECT_EQ(p.host, "10.0.0.7");
  EXPECT_EQ(p.port, 5432);
  EXPECT_EQ(p.database, "loader");
  p = Params(Jdbc("jdbc:postgresql://[::1]:5433/db?sslmode=verify-full&connectTimeout=3"));
  EXPECT_EQ(p.host, "::1");
  EXPECT_EQ(p.port, 5433);
  EXPECT_EQ(p.sslmode, "verify-full");
  EXPECT_EQ(p.connect_timeout, std::chrono::seconds(3));
  EXPECT_EQ(Params(Jdbc("jdbc:postgresql://h/db?ssl=true")).sslmode, "require");
  EXPECT_EQ(Params(Jdbc("jdbc:postgresql://h/db?ssl=false")).sslmode, "disable");
  // An explicit sslmode wins over ssl=true, in either order.
  EXPECT_EQ(Params(Jdbc("jdbc:postgresql://h/db?sslmode=verify-ca&ssl=true")).sslmode, "verify-ca");
}

TEST(CatalogDefTest, PostgresqlType) {
  const pg::ConnectParams p = Params({{"type", "postgresql"},
                                      {"host", "pg.internal"},
                                      {"port", "5544"},
                                      {"database", "warehouse"},
                                      {"user", "u"},
                                      {"test_connection", "false"}});
  EXPECT_EQ(p.host, "pg.internal");
  EXPECT_EQ(p.port, 5544);
  EXPECT_EQ(p.database, "warehouse");
  EXPECT_EQ(p.password, "");
  auto endpoint =
      ParseCatalog({{"type", "PostgreSQL"}, {"host", "h"}, {"database", "d"}, {"user", "u"}});
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  EXPECT_EQ(endpoint->params.port, 5432);
  EXPECT_TRUE(endpoint->test_connection);
}

TEST(CatalogDefTest, MalformedCatalogsNameWhatIsWrong) {
  EXPECT_NE(Error(Jdbc("jdbc:mysql://h:3306/db?password=s3cret")).find("got a jdbc:mysql: URL"),
            std::string::npos);
  EXPECT_NE(Error(Jdbc("postgresql://h/db")).find("jdbc:postgresql://host:port/database"),
            std::string::npos);
  EXPECT_NE(Error(Jdbc("jdbc:postgresql://h1:5432,h2:5432/db")).find("several hosts"),
            std::string::npos);
  EXPECT_NE(Error(Jdbc("jdbc:postgresql://u:s3cret@h/db")).find("credentials"), std::string::npos);
  EXPECT_NE(Error(Jdbc("jdbc:postgresql://h:99999/db")).find("port must be 1 to 65535"),
            std::string::npos);
  EXPECT_NE(Error(Jdbc("jdbc:postgresql://h/db?password=s3cret")).find("parameter password"),
            std::string::npos);
  EXPECT_NE(Error(Jdbc("jdbc:postgresql://h/db?sslmode=sometimes")).find("sslmode must be"),
            std::string::npos);
  CatalogProperties unknown = Jdbc("jdbc:postgresql://h/db");
  unknown["jdbc.user"] = "x";
  EXPECT_NE(Error(unknown).find("unknown property \"jdbc.user\""), std::string::npos);
  CatalogProperties other_type = Jdbc("jdbc:postgresql://h/db");
  other_type["host"] = "h";
  EXPECT_NE(Error(other_type).find("\"host\" is not taken by a catalog of type jdbc"),
            std::string::npos);
  EXPECT_NE(Error({{"type", "hms"}}).find("\"type\" must be"), std::string::npos);
  EXPECT_NE(Error({{"user", "u"}}).find("\"type\" is required"), std::string::npos);
  EXPECT_NE(Error({{"type", "jdbc"}, {"user", "u"}}).find("\"jdbc_url\" is required"),
            std::string::npos);
  EXPECT_NE(Error({{"type", "postgresql"}, {"host", "h"}, {"user", "u"}})
                .find("\"database\" is required"),
            std::string::npos);
  EXPECT_NE(
      Error(
          {{"type", "postgresql"}, {"host", "h"}, {"database", "d"}, {"user", "u"}, {"port", "0"}})
          .find("\"port\""),
      std::string::npos);
}

TEST(CatalogDefTest, PropertyKeysAreCaseInsensitiveOnce) {
  auto normalized = NormalizeProperties({{"TYPE", "jdbc"}, {"User", "u"}});
  ASSERT_TRUE(normalized.ok());
  EXPECT_EQ(normalized->at("type"), "jdbc");
  EXPECT_EQ(normalized->at("user"), "u");
  auto twice = NormalizeProperties({{"user", "a"}, {"USER", "b"}});
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidArgument);
}

TEST(CatalogDefTest, CatalogNames) {
  EXPECT_TRUE(CheckCatalogName("pg").ok());
  EXPECT_TRUE(CheckCatalogName("Warehouse_2").ok());
  EXPECT_FALSE(CheckCatalogName("").ok());
  EXPECT_FALSE(CheckCatalogName("2pg").ok());
  EXPECT_FALSE(CheckCatalogName("pg-prod").ok());
  EXPECT_FALSE(CheckCatalogName(std::string(65, 'a')).ok());
  EXPECT_FALSE(CheckCatalogName("Internal").ok());
  EXPECT_FALSE(CheckCatalogName("memory").ok());
}

TEST(CatalogDefTest, ShowCreateMasksThePassword) {
  ExternalCatalog catalog{.name = "pg",
                          .comment = "the \"warehouse\"",
                          .properties = Jdbc("jdbc:postgresql://h:5432/db")};
  const std::string text = ShowCreateCatalog(catalog);
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  EXPECT_NE(text.find("\"password\" = \"*XXX\""), std::string::npos) << text;
  EXPECT_NE(text.find("CREATE CATALOG `pg` COMMENT \"the \"\"warehouse\"\"\" PROPERTIES ("),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"jdbc_url\" = \"jdbc:postgresql://h:5432/db\""), std::string::npos);
}

TEST(CatalogDefTest, DocsHoldThePropertyTable) {
  std::ifstream in(testing::SourcePath("docs/postgresql.md"));
  ASSERT_TRUE(in) << "docs/postgresql.md";
  std::stringstream docs;
  docs << in.rdbuf();
  const std::string table = ParamsMarkdown(
      CatalogPropertySpecs(), "property", {{kJdbcScope, "jdbc"}, {kPostgresqlScope, "postgresql"}});
  EXPECT_NE(docs.str().find(table), std::string::npos) << "docs/postgresql.md should hold:\n"
                                                       << table;
}

}  // namespace
}  // namespace millrace::external
