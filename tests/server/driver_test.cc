// Real client drivers against the real `millrace serve`, each running the same script (connect,
// metadata, create, insert with bound parameters of every type and NULL, select back typed, a
// prepared statement executed many times, a transaction rolled back, an error with its code).
#include <gtest/gtest.h>

#include "server/mysql_test_util.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"
#include "testing/test_paths.h"

namespace millrace::server {
namespace {

class DriverTest : public SharedServerTest {
 protected:
  static void SetUpTestSuite() { StartServer({{"--threads", "2"}, {}}); }
  static void TearDownTestSuite() { StopServer(); }
};

// Node's mysql2 from npm: query() and execute() (server-side prepared statements).
TEST_F(DriverTest, NodeMysql2QueryAndExecute) {
  auto run =
      testing::RunProcess({"node", testing::SourcePath("tests/server/clients/mysql2_client.js"),
                           testing::NpmPath(""), std::to_string(server().mysql_port())},
                          {}, std::chrono::seconds(120));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 0) << testing::ProcessFailure("node mysql2_client.js", *run);
  EXPECT_EQ(testing::WithoutTrailingNewline(run->out), "ok");
}

// Go's database/sql with go-sql-driver/mysql (Debian golang-go and
// golang-github-go-sql-driver-mysql-dev, built offline in GOPATH mode): server-side prepared
// statements without interpolateParams, the text protocol with it; parseTime=true.
TEST_F(DriverTest, GoDatabaseSqlWithAndWithoutInterpolateParams) {
  testing::TempDir dir;
  const std::string binary = dir.Join("go_client");
  auto built = testing::RunProcess(
      {"go", "build", "-o", binary, testing::SourcePath("tests/server/clients/go_client/main.go")},
      {"GO111MODULE=off", "GOPATH=/usr/share/gocode", "GOCACHE=" + dir.Join("cache"),
       "HOME=" + dir.path()},
      std::chrono::seconds(300));
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_EQ(built->exit_code, 0) << testing::ProcessFailure("go build", *built);
  for (const std::string interpolate : {"false", "true"}) {
    auto run = testing::RunProcess({binary, std::to_string(server().mysql_port()), interpolate}, {},
                                   std::chrono::seconds(120));
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ(run->exit_code, 0) << testing::ProcessFailure("interpolateParams=" + interpolate,
                                                            *run);
    EXPECT_EQ(testing::WithoutTrailingNewline(run->out), "ok") << interpolate;
  }
}

// Java: MariaDB Connector/J 2.7 (Debian libmariadb-java) with useServerPrepStmts=true, and the
// DatabaseMetaData calls BI tools make (getTables, getColumns, getPrimaryKeys).
TEST_F(DriverTest, JavaConnectorJServerPreparedAndMetadata) {
  testing::TempDir dir;
  auto built = testing::RunProcess(
      {"javac", "-d", dir.path(), testing::SourcePath("tests/server/clients/JavaClient.java")},
      {"HOME=" + dir.path()}, std::chrono::seconds(300));
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_EQ(built->exit_code, 0) << testing::ProcessFailure("javac", *built);
  auto run = testing::RunProcess({"java", "-Duser.timezone=UTC", "-cp",
                                  dir.path() + ":/usr/share/java/mariadb-java-client.jar",
                                  "JavaClient", std::to_string(server().mysql_port())},
                                 {"HOME=" + dir.path()}, std::chrono::seconds(120));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 0) << testing::ProcessFailure("java JavaClient", *run);
  EXPECT_EQ(testing::WithoutTrailingNewline(run->out), "ok");
}

// Runs a Python script of tests/server/clients with Debian's python3 and `driver`; a test
// failure unless it prints "ok".
void RunPython(const std::string& script, const std::string& driver, uint16_t port) {
  auto run = testing::RunProcess(
      {"/usr/bin/python3", testing::SourcePath("tests/server/clients/") + script, driver,
       std::to_string(port)},
      {}, std::chrono::seconds(120));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 0) << testing::ProcessFailure(script + " " + driver, *run);
  EXPECT_EQ(testing::WithoutTrailingNewline(run->out), "ok") << script << " " << driver;
}

// Python's mysqlclient (MySQLdb) and PyMySQL from Debian: the text protocol, with the
// parameters put into the statement by the driver.
TEST_F(DriverTest, PythonMysqlclientAndPymysql) {
  for (const std::string driver : {"mysqldb", "pymysql"})
    RunPython("python_client.py", driver, server().mysql_port());
}

// SQLAlchemy's reflection (Debian python3-sqlalchemy), over either driver.
TEST_F(DriverTest, SqlalchemyReflection) {
  for (const std::string driver : {"mysqldb", "pymysql"})
    RunPython("sqlalchemy_reflect.py", driver, server().mysql_port());
}

}  // namespace
}  // namespace millrace::server
