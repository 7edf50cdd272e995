// S3(...) and local(...) as the SQL layer expands them, against s3rver and a temp directory.
#include "load/file_table_function.h"

#include <gtest/gtest.h>

#include <fstream>

#include "engine/engine_test_util.h"
#include "testing/s3rver.h"
#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

using Rows = std::vector<std::vector<std::string>>;

class FileTableFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = testing::S3rver::Start({"data"});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    s3_ = std::move(server).value();
    db_ = engine::OpenOrDie({});
    conn_ = engine::ConnectOrDie(*db_);
    FileTableFunctionConfig config;
    config.db = db_.get();
    config.work_root = work_.path();
    config.make_source = DefaultSourceFactory(Clock::Real(), std::chrono::milliseconds(0));
    RegisterFileTableFunctions(&registry_, config);
  }

  std::string S3(const std::string& uri, const std::string& extra = "") {
    return "S3(\"uri\" = \"" + uri + "\", \"s3.endpoint\" = \"" + s3_->endpoint() +
           "\", \"s3.access_key\" = \"S3RVER\", \"s3.secret_key\" = \"S3RVER\", "
           "\"use_path_style\" = \"true\"" +
           extra + ")";
  }

  Result<Rows> Run(const std::string& sql) {
    MR_ASSIGN_OR_RETURN(auto expanded, registry_.Expand(sql));
    auto rows = engine::QueryRows(*conn_, expanded.sql);
    return rows;
  }

  std::unique_ptr<testing::S3rver> s3_;
  testing::TempDir work_;
  testing::TempDir local_;
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<engine::Connection> conn_;
  sql::TableFunctionRegistry registry_;
};

TEST_F(FileTableFunctionTest, S3SelectOverAGlob) {
  ASSERT_TRUE(s3_->PutObject("data", "d/2026-01.csv", "1\ta\n2\tb\n").ok());
  ASSERT_TRUE(s3_->PutObject("data", "d/2026-02.csv", "3\tc\n").ok());
  ASSERT_TRUE(s3_->PutObject("data", "d/2026-03.tsv", "9\tz\n").ok());
  auto rows = Run("SELECT c1, c2 FROM " + S3("s3://data/d/2026-0{1,2}.csv") + " ORDER BY c1");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (Rows{{"1", "a"}, {"2", "b"}, {"3", "c"}}));
}

TEST_F(FileTableFunctionTest, S3InsertSelectWithCompressionAndJson) {
  ASSERT_TRUE(conn_->Execute("CREATE TABLE t (id INTEGER, name VARCHAR)").ok());
  ASSERT_TRUE(s3_->PutObject("data", "j/a.json",
                             "{\"id\": 1, \"name\": \"x\"}\n{\"id\": 2, \"name\": \"y\"}\n")
                  .ok());
  auto expanded = registry_.Expand("INSERT INTO t SELECT id, name FROM " +
                                   S3("s3://data/j/*.json", ", \"format\" = \"json\""));
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  ASSERT_TRUE(conn_->Execute(expanded->sql).ok());
  EXPECT_EQ(engine::QueryRows(*conn_, "SELECT * FROM t ORDER BY id"),
            (Rows{{"1", "x"}, {"2", "y"}}));
}

TEST_F(FileTableFunctionTest, LocalSelect) {
  {
    std::ofstream out(local_.Join("a.csv"));
    out << "k,v\n1,one\n";
  }
  auto rows = Run("SELECT v FROM local(\"file_path\" = \"" + local_.Join("*.csv") +
                  "\", \"format\" = \"csv_with_names\", \"column_separator\" = \",\")");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (Rows{{"one"}}));
}

// Doris's S3() keys, each honoured against a real store.
TEST_F(FileTableFunctionTest, CsvWithNamesBindsColumnsByTheHeader) {
  ASSERT_TRUE(s3_->PutObject("data", "n/a.csv", "name,id\nx,1\ny,2\n").ok());
  auto rows = Run(
      "SELECT id, name FROM " +
      S3("s3://data/n/*.csv", ", \"format\" = \"csv_with_names\", \"column_separator\" = \",\"") +
      " ORDER BY id");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (Rows{{"1", "x"}, {"2", "y"}}));
}

TEST_F(FileTableFunctionTest, NumAsStringKeepsEveryDigit) {
  ASSERT_TRUE(conn_->Execute("CREATE TABLE d (id INTEGER, amount DECIMAL(38,9), v VARCHAR)").ok());
  ASSERT_TRUE(s3_->PutObject("data", "num/a.json",
                             "{\"id\": 1, \"amount\": 12345678901234567890.123456789, \"v\": "
                             "1.10}\n{\"id\": -2, \"amount\": -0.000000001, \"v\": \"1.5\"}\n")
                  .ok());
  const std::string json = ", \"format\" = \"json\"";
  auto kept =
      Run("SELECT id, amount, v, typeof(amount) FROM " +
          S3("s3://data/num/*.json", json + ", \"num_as_string\" = \"true\"") + " ORDER BY id");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(*kept, (Rows{{"-2", "-0.000000001", "1.5", "VARCHAR"},
                         {"1", "12345678901234567890.123456789", "1.10", "VARCHAR"}}));
  auto expanded =
      registry_.Expand("INSERT INTO d SELECT id, amount, v FROM " +
                       S3("s3://data/num/*.json", json + ", \"num_as_string\" = \"true\""));
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  ASSERT_TRUE(conn_->Execute(expanded->sql).ok());
  EXPECT_EQ(engine::QueryRows(*conn_, "SELECT amount FROM d WHERE id = 1"),
            (Rows{{"12345678901234567890.123456789"}}));
  // Without it, the number went through a double.
  auto rounded = Run("SELECT CAST(amount AS VARCHAR) FROM " + S3("s3://data/num/*.json", json) +
                     " WHERE id = 1");
  ASSERT_TRUE(rounded.ok()) << rounded.status().ToString();
  EXPECT_NE((*rounded)[0][0], "12345678901234567890.123456789");
}

TEST_F(FileTableFunctionTest, CsvSchemaNamesAndTypesTheColumns) {
  ASSERT_TRUE(s3_->PutObject("data", "cs/a.csv", "1|12.5|x\n2|abc|y\n").ok());
  auto rows = Run("SELECT k1, k2, k3, k4, typeof(k1), typeof(k2) FROM " +
                  S3("s3://data/cs/*.csv",
                     ", \"column_separator\" = \"|\", \"csv_schema\" = "
                     "\"k1:int;k2:decimal(10,2);k3:varchar(5);k4:bigint\"") +
                  " ORDER BY k1");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  // A value that does not fit its type, and a column the file lacks, read as NULL (Doris's rule).
  EXPECT_EQ(*rows, (Rows{{"1", "12.50", "x", "NULL", "INTEGER", "DECIMAL(10,2)"},
                         {"2", "NULL", "y", "NULL", "INTEGER", "DECIMAL(10,2)"}}));
}

TEST_F(FileTableFunctionTest, PathPartitionKeysAddColumnsFromThePath) {
  ASSERT_TRUE(s3_->PutObject("data", "pp/city=paris/year=2026/a.csv", "1,x\n2,y\n").ok());
  ASSERT_TRUE(s3_->PutObject("data", "pp/city=rome/year=2025/b.csv", "3,z\n").ok());
  const std::string csv =
      ", \"column_separator\" = \",\", \"path_partition_keys\" = \"city, year\"";
  auto rows = Run("SELECT c1, c2, city, year, typeof(year) FROM " +
                  S3("s3://data/pp/*/*/*.csv", csv) + " ORDER BY c1");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (Rows{{"1", "x", "paris", "2026", "VARCHAR"},
                         {"2", "y", "paris", "2026", "VARCHAR"},
                         {"3", "z", "rome", "2025", "VARCHAR"}}));
  // Only the keys asked for become columns, whatever else the path holds.
  auto one = Run("SELECT * FROM " +
                 S3("s3://data/pp/*/*/*.csv",
                    ", \"column_separator\" = \",\", \"path_partition_keys\" = \"YEAR\"") +
                 " ORDER BY c1 LIMIT 1");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(*one, (Rows{{"1", "x", "2026"}}));

  // JSON, read whole and through jsonpaths, and Parquet.
  ASSERT_TRUE(s3_->PutObject("data", "pj/city=oslo/a.json", "{\"id\": 7, \"v\": \"q\"}\n").ok());
  const std::string json = ", \"format\" = \"json\", \"path_partition_keys\" = \"city\"";
  auto whole = Run("SELECT id, v, city FROM " + S3("s3://data/pj/*/*.json", json));
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, (Rows{{"7", "q", "oslo"}}));
  auto paths =
      Run("SELECT * FROM " + S3("s3://data/pj/*/*.json", json + ", \"jsonpaths\" = '[\"$.v\"]'"));
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  EXPECT_EQ(*paths, (Rows{{"q", "oslo"}}));
  const std::string parquet = work_.Join("p.parquet");
  ASSERT_TRUE(conn_
                  ->Execute("COPY (SELECT 5 AS id) TO " + engine::QuoteLiteral(parquet) +
                            " (FORMAT parquet)")
                  .ok());
  std::ifstream in(parquet, std::ios::binary);
  ASSERT_TRUE(s3_->PutObject("data", "pq/dt=2026-12-06/a.parquet",
                             std::string(std::istreambuf_iterator<char>(in), {}))
                  .ok());
  auto pq = Run("SELECT id, dt FROM " +
                S3("s3://data/pq/*/*.parquet",
                   ", \"format\" = \"parquet\", \"path_partition_keys\" = \"dt\""));
  ASSERT_TRUE(pq.ok()) << pq.status().ToString();
  EXPECT_EQ(*pq, (Rows{{"5", "2026-12-06"}}));

  // A file whose path lacks a key is refused, naming the key and the file.
  auto missing = Run("SELECT * FROM " + S3("s3://data/pj/*/*.json",
                                           ", \"format\" = \"json\", \"path_partition_keys\" "
                                           "= \"region\""));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no 'region=...' directory"), std::string::npos)
      << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("pj/city=oslo/a.json"), std::string::npos)
      << missing.status().ToString();
}

TEST_F(FileTableFunctionTest, NoKeysMeansAnonymousRequests) {
  ASSERT_TRUE(s3_->PutObject("data", "anon/a.csv", "1\tpublic\n").ok());
  // No access key and no secret key: the requests go unsigned, as Doris sends them.
  auto rows = Run("SELECT c2 FROM S3(\"uri\" = \"s3://data/anon/*.csv\", \"s3.endpoint\" = \"" +
                  s3_->endpoint() + "\")");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (Rows{{"public"}}));
  // The store does check a signed request: an access key it does not know is refused.
  auto wrong =
      Run("SELECT c2 FROM S3(\"uri\" = \"s3://data/anon/*.csv\", \"s3.endpoint\" = \"" +
          s3_->endpoint() + "\", \"s3.access_key\" = \"NOBODY\", \"s3.secret_key\" = \"wrong\")");
  EXPECT_FALSE(wrong.ok());
}

TEST_F(FileTableFunctionTest, ErrorsNameTheProblem) {
  auto none = Run("SELECT * FROM " + S3("s3://data/nothing/*.csv"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("no file matches s3://data/nothing/*.csv"),
            std::string::npos)
      << none.status().message();

  auto unknown = Run("SELECT * FROM " + S3("s3://data/d/*.csv", ", \"colour\" = \"red\""));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("\"colour\""), std::string::npos);

  auto bucket = Run("SELECT * FROM " + S3("s3://nobucket/d/*.csv"));
  ASSERT_FALSE(bucket.ok());
  EXPECT_NE(bucket.status().message().find("nobucket"), std::string::npos)
      << bucket.status().message();

  auto local = Run("SELECT * FROM local(\"file_path\" = \"relative/*.csv\")");
  ASSERT_FALSE(local.ok());
  EXPECT_NE(local.status().message().find("absolute"), std::string::npos);
}

}  // namespace
}  // namespace millrace::load
