// The parameters of change-stream jobs: each source's, each form's, with a clear error for
// what is not accepted.
#include "cdc/cdc_params.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "job/job_statement.h"
#include "testing/test_paths.h"

namespace millrace::cdc {
namespace {

sql::DorisArgs MysqlArgs(sql::DorisArgs extra = {}) {
  sql::DorisArgs args = {{"type", "mysql"},
                         {"jdbc_url", "jdbc:mysql://db.internal:3307/shop?useSSL=false"},
                         {"user", "u"},
                         {"password", "p"},
                         {"table", "orders"}};
  for (auto& [k, v] : extra)
    args[k] = v;
  return args;
}

TEST(CdcParamsTest, TheTypeChoosesTheSource) {
  EXPECT_EQ(*ParseSourceType({{"type", "MySQL"}}), SourceType::kMysql);
  EXPECT_EQ(*ParseSourceType({{"type", "postgresql"}}), SourceType::kPostgres);
  auto bad = ParseSourceType({{"type", "oracle"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("postgres or mysql"), std::string::npos);
  EXPECT_FALSE(ParseSourceType({}).ok());
}

TEST(CdcParamsTest, AMysqlSourceReadsItsConnectionAndDefaults) {
  auto spec = ParseMysqlArgs(MysqlArgs(), /*whole_database=*/false);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->connect.host, "db.internal");
  EXPECT_EQ(spec->connect.port, 3307);
  EXPECT_EQ(spec->connect.database, "shop");
  EXPECT_EQ(spec->tables, std::vector<std::string>{"orders"});
  EXPECT_EQ(spec->start, MysqlSourceSpec::Start::kInitial);
  EXPECT_EQ(spec->server_id, 0u);
  EXPECT_EQ(spec->split_size, 8096);
  // The port defaults to MySQL's; "database" overrides the URL's.
  spec = ParseMysqlArgs(MysqlArgs({{"jdbc_url", "jdbc:mysql://h"}, {"database", "d"}}), false);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->connect.port, 3306);
  EXPECT_EQ(spec->connect.database, "d");
}

TEST(CdcParamsTest, AMysqlOffsetIsAPositionOrAGtidPosition) {
  auto offset = [](const std::string& value) {
    return ParseMysqlArgs(MysqlArgs({{"offset", value}}), false);
  };
  EXPECT_EQ(offset("latest")->start, MysqlSourceSpec::Start::kLatest);
  auto json = offset(R"({"file": "binlog.000003", "pos": "154"})");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->start, MysqlSourceSpec::Start::kPosition);
  EXPECT_EQ(json->position.position, (mysql::BinlogPosition{"binlog.000003", 154}));
  auto colon = offset("mysql-bin.000012:4");
  ASSERT_TRUE(colon.ok()) << colon.status().ToString();
  EXPECT_EQ(colon->position.position, (mysql::BinlogPosition{"mysql-bin.000012", 4}));
  auto gtid = offset("0-1-100,2-5-7");
  ASSERT_TRUE(gtid.ok()) << gtid.status().ToString();
  EXPECT_EQ(gtid->position.gtid, "0-1-100,2-5-7");
  // MySQL's GTID sets are recognised and refused, saying what to give instead.
  auto mysql_gtid = offset("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7");
  ASSERT_FALSE(mysql_gtid.ok());
  EXPECT_EQ(mysql_gtid.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(mysql_gtid.status().message().find("MySQL GTID set"), std::string::npos);
  for (const std::string bad :
       {"earliest", "binlog.000001:x", "binlog.000001:2", "0-1", "1-2-3-4", R"({"file": "b.1"})"}) {
    auto refused = offset(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("\"offset\""), std::string::npos) << bad;
  }
}

TEST(CdcParamsTest, BadMysqlParametersAreNamed) {
  auto refused = [](const sql::DorisArgs& args, bool whole_database = false) {
    auto spec = ParseMysqlArgs(args, whole_database);
    EXPECT_FALSE(spec.ok());
    return spec.ok() ? "" : spec.status().message();
  };
  EXPECT_NE(refused(MysqlArgs({{"server_id", "0"}})).find("server_id"), std::string::npos);
  EXPECT_NE(refused(MysqlArgs({{"server_id", "4294967296"}})).find("server_id"), std::string::npos);
  EXPECT_NE(refused(MysqlArgs({{"slot_name", "s"}})).find("unknown parameter \"slot_name\""),
            std::string::npos);
  EXPECT_NE(refused(MysqlArgs({{"jdbc_url", "jdbc:mysql://h:3306"}})).find("no database"),
            std::string::npos);
  EXPECT_NE(refused(MysqlArgs({{"jdbc_url", "jdbc:postgresql://h/d"}})).find("jdbc:mysql://"),
            std::string::npos);
  // FROM MYSQL takes include_tables, not table.
  EXPECT_NE(refused(MysqlArgs(), true).find("\"table\""), std::string::npos);
  sql::DorisArgs from = MysqlArgs({{"include_tables", "a, b"}, {"exclude_tables", "b"}});
  from.erase("table");
  auto spec = ParseMysqlArgs(from, true);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->tables, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(spec->exclude_tables, std::vector<std::string>{"b"});
}

TEST(CdcParamsTest, ValuesAreReadAsDeclared) {
  auto parallel = ParseMysqlArgs(MysqlArgs({{"snapshot_parallelism", "65"}}), false);
  ASSERT_FALSE(parallel.ok());
  EXPECT_EQ(parallel.status().message(),
            "cdc_stream: \"snapshot_parallelism\" must be an integer from 1 to 64, got '65'");
  auto ratio = ParseToDatabaseArgs({{"load.max_filter_ratio", "1.5"}});
  ASSERT_FALSE(ratio.ok());
  EXPECT_EQ(ratio.status().message(),
            "TO DATABASE: \"load.max_filter_ratio\" must be a number from 0 to 1, got '1.5'");
  auto strict = ParseToDatabaseArgs(
      {{"load.strict_mode", "TRUE"}, {"table.create.properties.replication_num", "1"}});
  ASSERT_TRUE(strict.ok()) << strict.status().ToString();
  EXPECT_TRUE(strict->strict_mode);
  EXPECT_EQ(strict->create_properties.at("replication_num"), "1");
  auto missing = ParseMysqlArgs({{"type", "mysql"}, {"user", "u"}, {"table", "t"}}, false);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cdc_stream: \"jdbc_url\" is required"),
            std::string::npos)
      << missing.status().message();
}

// A job's statement is shown with the values the tables declare secret masked, whatever else
// holds the same text.
TEST(CdcParamsTest, SecretsAreMaskedAsDeclared) {
  const std::string insert =
      "INSERT INTO t SELECT * FROM cdc_stream(\"type\" = \"mysql\", \"jdbc_url\" = "
      "\"jdbc:mysql://h/db\", \"user\" = \"hunter2\", \"password\" = \"hunter2\", "
      "\"table\" = \"orders\")";
  auto analysis = job::AnalyzeInsert(insert);
  ASSERT_TRUE(analysis.ok()) << analysis.status().ToString();
  EXPECT_EQ(job::MaskSecrets(insert, *analysis, ChangeStreamParamTables()),
            "INSERT INTO t SELECT * FROM cdc_stream(\"type\" = \"mysql\", \"jdbc_url\" = "
            "\"jdbc:mysql://h/db\", \"user\" = \"hunter2\", \"password\" = \"***\", "
            "\"table\" = \"orders\")");
  EXPECT_NE(job::PlaceholderSecrets(insert, *analysis, ChangeStreamParamTables())
                .find("\"password\" = \"${password}\""),
            std::string::npos);
}

// The docs hold the tables the parameters are declared in.
TEST(CdcParamsTest, DocsAreInSyncWithTheTables) {
  struct Doc {
    const char* path;
    std::vector<const std::vector<ParamSpec>*> tables;
  };
  for (const Doc& doc :
       {Doc{"docs/cdc.md",
            {&CdcStreamParams(SourceType::kPostgres), &FromSourceOnlyParams(SourceType::kPostgres),
             &ToDatabaseParams()}},
        Doc{"docs/cdc_mysql.md",
            {&CdcStreamParams(SourceType::kMysql), &FromSourceOnlyParams(SourceType::kMysql)}}}) {
    std::ifstream in(testing::SourcePath(doc.path));
    std::stringstream text;
    text << in.rdbuf();
    for (const std::vector<ParamSpec>* table : doc.tables) {
      EXPECT_NE(text.str().find(CdcParamsMarkdown(*table)), std::string::npos)
          << "regenerate the table in " << doc.path << ":\n"
          << CdcParamsMarkdown(*table);
    }
  }
}

}  // namespace
}  // namespace millrace::cdc
