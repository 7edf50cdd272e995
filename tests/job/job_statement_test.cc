#include "job/job_statement.h"

#include <gtest/gtest.h>

namespace millrace::job {
namespace {

const char* kInsert =
    "INSERT INTO shop.events SELECT * FROM S3(\"uri\" = \"s3://landing/ev/*.csv\", "
    "\"format\" = \"csv\", \"s3.access_key\" = \"AK\", \"s3.secret_key\" = \"SeCrEt123\")";

TEST(JobStatementTest, CreateInBothPropertyPositions) {
  for (const std::string& sql :
       {std::string("CREATE JOB ev ON STREAMING PROPERTIES (\"max_interval\" = \"10\", "
                    "\"session.insert_max_filter_ratio\" = 0.5) COMMENT 'clicks' DO ") +
            kInsert,
        std::string(
            "create job ev properties (\"max_interval\"=\"10\", "
            "\"session.insert_max_filter_ratio\"=0.5) on streaming comment \"clicks\" do ") +
            kInsert + ";"}) {
    auto parsed = ParseJobStatement(sql);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto& create = std::get<CreateJobStatement>(*parsed);
    EXPECT_EQ(create.name, "ev");
    EXPECT_EQ(create.comment, "clicks");
    EXPECT_EQ(create.properties,
              (PropertyMap{{"max_interval", "10"}, {"session.insert_max_filter_ratio", "0.5"}}));
    EXPECT_EQ(create.insert_sql, kInsert);
    EXPECT_TRUE(IsJobStatement(sql));
  }
}

TEST(JobStatementTest, ControlStatements) {
  auto pause = ParseJobStatement("PAUSE JOB WHERE jobname = 'ev'");
  ASSERT_TRUE(pause.ok());
  EXPECT_EQ(std::get<ControlJobStatement>(*pause).action, JobControl::kPause);
  EXPECT_EQ(std::get<ControlJobStatement>(*pause).name, "ev");
  auto resume = ParseJobStatement("resume job where JobName = \"ev\";");
  ASSERT_TRUE(resume.ok()) << resume.status().ToString();
  EXPECT_EQ(std::get<ControlJobStatement>(*resume).action, JobControl::kResume);
  auto drop = ParseJobStatement("DROP JOB IF EXISTS WHERE jobname = 'ev'");
  ASSERT_TRUE(drop.ok());
  EXPECT_TRUE(std::get<ControlJobStatement>(*drop).if_exists);
  EXPECT_FALSE(IsJobStatement("DROP TABLE jobs"));
  EXPECT_FALSE(IsJobStatement("SELECT * FROM jobs(\"type\" = \"insert\")"));
}

TEST(JobStatementTest, Alter) {
  auto props = ParseJobStatement("ALTER JOB ev PROPERTIES (\"max_interval\" = \"5\")");
  ASSERT_TRUE(props.ok());
  EXPECT_EQ(std::get<AlterJobStatement>(*props).properties, (PropertyMap{{"max_interval", "5"}}));
  EXPECT_TRUE(std::get<AlterJobStatement>(*props).insert_sql.empty());
  auto with_sql = ParseJobStatement(std::string("ALTER JOB ev DO ") + kInsert);
  ASSERT_TRUE(with_sql.ok());
  EXPECT_EQ(std::get<AlterJobStatement>(*with_sql).insert_sql, kInsert);
  auto nothing = ParseJobStatement("ALTER JOB ev");
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("nothing to change"), std::string::npos);
}

TEST(JobStatementTest, ErrorsSayWhatWasExpected) {
  auto on = ParseJobStatement("CREATE JOB ev STREAMING DO INSERT INTO t SELECT 1");
  ASSERT_FALSE(on.ok());
  EXPECT_EQ(on.status().message(),
            "CREATE JOB: expected ON STREAMING at offset 14, found 'STREAMING'");
  auto where = ParseJobStatement("PAUSE JOB ev");
  ASSERT_FALSE(where.ok());
  EXPECT_NE(where.status().message().find("expected WHERE"), std::string::npos);
  auto dup = ParseJobStatement(
      "CREATE JOB ev ON STREAMING PROPERTIES (\"a\" = \"1\", \"a\" = "
      "\"2\") DO INSERT INTO t SELECT 1");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("given twice"), std::string::npos);
  auto insert = ParseJobStatement("CREATE JOB ev ON STREAMING DO SELECT 1");
  ASSERT_FALSE(insert.ok());
  EXPECT_NE(insert.status().message().find("expected INSERT INTO"), std::string::npos);
}

TEST(JobStatementTest, AnalyzeInsertFindsTargetColumnsAndSource) {
  const std::string sql =
      "INSERT INTO shop.events (id, name) SELECT c1, c2 FROM local(\"file_path\" = "
      "\"/data/*.csv\", \"format\" = \"csv\") WHERE c1 <> '0'";
  auto analysis = AnalyzeInsert(sql);
  ASSERT_TRUE(analysis.ok()) << analysis.status().ToString();
  EXPECT_EQ(analysis->target_table, "shop.events");
  EXPECT_EQ(analysis->columns, (std::vector<std::string>{"id", "name"}));
  EXPECT_EQ(analysis->source, load::SourceKind::kLocal);
  EXPECT_EQ(analysis->args.at("file_path"), "/data/*.csv");
  EXPECT_EQ(sql.substr(analysis->call_begin, 5), "local");
  EXPECT_EQ(sql.substr(analysis->call_end), " WHERE c1 <> '0'");

  auto two = AnalyzeInsert(
      "INSERT INTO t SELECT * FROM local(\"file_path\" = \"/a\") UNION ALL "
      "SELECT * FROM local(\"file_path\" = \"/b\")");
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("found 2"), std::string::npos);
}

TEST(JobStatementTest, MaskSecrets) {
  auto analysis = AnalyzeInsert(kInsert);
  ASSERT_TRUE(analysis.ok());
  const std::string masked = MaskSecrets(kInsert, *analysis, {});
  EXPECT_EQ(masked.find("SeCrEt123"), std::string::npos);
  EXPECT_NE(masked.find("\"s3.secret_key\" = \"***\""), std::string::npos);
  EXPECT_NE(masked.find("\"s3.access_key\" = \"***\""), std::string::npos);
}

// Doris's names for the secrets (AWS_SECRET_KEY, session_token), in any case, are masked too.
TEST(JobStatementTest, MaskSecretsByEveryName) {
  const std::string insert =
      "INSERT INTO t SELECT * FROM S3(\"uri\" = \"s3://b/*.csv\", \"AWS_ACCESS_KEY\" = \"AK\", "
      "\"aws_secret_key\" = \"SeCrEt123\", \"Session_Token\" = \"ToKeN456\")";
  auto analysis = AnalyzeInsert(insert);
  ASSERT_TRUE(analysis.ok()) << analysis.status().ToString();
  const std::string masked = MaskSecrets(insert, *analysis, {});
  EXPECT_EQ(masked.find("SeCrEt123"), std::string::npos) << masked;
  EXPECT_EQ(masked.find("ToKeN456"), std::string::npos) << masked;
  EXPECT_NE(masked.find("\"AWS_ACCESS_KEY\" = \"***\""), std::string::npos) << masked;
}

// A credential's value is replaced where it stands, not wherever its text occurs: an access key
// equal to its secret, a secret that is also part of the uri, a single-quoted value.
TEST(JobStatementTest, MaskSecretsReplacesTheValuesNotTheirText) {
  const std::string insert =
      "INSERT INTO t SELECT * FROM S3(\"uri\" = \"s3://b/KEY/*.csv\", \"s3.access_key\" = "
      "\"KEY\", \"s3.secret_key\" = 'KEY', \"format\" = \"csv\")";
  auto analysis = AnalyzeInsert(insert);
  ASSERT_TRUE(analysis.ok()) << analysis.status().ToString();
  EXPECT_EQ(MaskSecrets(insert, *analysis, {}),
            "INSERT INTO t SELECT * FROM S3(\"uri\" = \"s3://b/KEY/*.csv\", \"s3.access_key\" = "
            "\"***\", \"s3.secret_key\" = '***', \"format\" = \"csv\")");
  EXPECT_EQ(PlaceholderSecrets(insert, *analysis, {}),
            "INSERT INTO t SELECT * FROM S3(\"uri\" = \"s3://b/KEY/*.csv\", \"s3.access_key\" = "
            "\"${s3.access_key}\", \"s3.secret_key\" = '${s3.secret_key}', \"format\" = "
            "\"csv\")");
}

}  // namespace
}  // namespace millrace::job
