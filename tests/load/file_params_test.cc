#include "load/file_params.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json.h"
#include "common/logging.h"
#include "testing/test_paths.h"

namespace millrace::load {
namespace {

TEST(FileParamsTest, DefaultsComeFromTheTable) {
  auto options = ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*.csv"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->format, Format::kCsv);
  EXPECT_EQ(options->csv.column_separator, "\t");
  EXPECT_EQ(options->csv.line_delimiter, "\n");
  EXPECT_FALSE(options->compression.has_value());
  EXPECT_EQ(options->s3.region, "us-east-1");
  EXPECT_TRUE(options->json.read_json_by_line);
}

TEST(FileParamsTest, EveryValueIsParsed) {
  auto options = ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k"},
                                                         {"format", "JSON"},
                                                         {"column_separator", "\\x01"},
                                                         {"compress_type", "bz2"},
                                                         {"s3.endpoint", "http://127.0.0.1:9000"},
                                                         {"s3.access_key", "AK"},
                                                         {"s3.secret_key", "verysecretvalue"},
                                                         {"use_path_style", "true"},
                                                         {"strip_outer_array", "true"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->format, Format::kJson);
  EXPECT_EQ(options->csv.column_separator, std::string(1, '\x01'));
  EXPECT_EQ(options->compression, Compression::kBzip2);
  EXPECT_TRUE(options->s3.use_path_style);
  EXPECT_EQ(options->s3.credentials.access_key, "AK");
  EXPECT_EQ(options->s3.credentials.secret_key, "verysecretvalue");
  EXPECT_TRUE(options->json.strip_outer_array);
  // The secret is masked in logs from the moment it was parsed.
  EXPECT_EQ(Logger::Default().Redact("key=verysecretvalue"), "key=****");
}

TEST(FileParamsTest, UnknownKeysAndBadValuesAreNamed) {
  auto unknown = ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k"}, {"colour", "red"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown parameter \"colour\""), std::string::npos);
  EXPECT_NE(unknown.status().message().find("column_separator"), std::string::npos);

  auto local_only =
      ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k"}, {"file_path", "/x"}});
  EXPECT_FALSE(local_only.ok());

  auto format = ParseFileFunctionArgs(SourceKind::kLocal, {{"file_path", "/x"}, {"format", "xml"}});
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("\"format\" must be one of csv"), std::string::npos);

  auto skip =
      ParseFileFunctionArgs(SourceKind::kLocal, {{"file_path", "/x"}, {"skip_lines", "-1"}});
  ASSERT_FALSE(skip.ok());
  EXPECT_NE(skip.status().message().find("skip_lines"), std::string::npos);

  auto flag = ParseFileFunctionArgs(SourceKind::kLocal,
                                    {{"file_path", "/x"}, {"trim_double_quotes", "maybe"}});
  ASSERT_FALSE(flag.ok());
  EXPECT_NE(flag.status().message().find("trim_double_quotes"), std::string::npos);

  auto relative = ParseFileFunctionArgs(SourceKind::kLocal, {{"file_path", "data/*.csv"}});
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.status().message().find("absolute"), std::string::npos);

  auto missing = ParseFileFunctionArgs(SourceKind::kS3, {{"format", "csv"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("\"uri\" is required"), std::string::npos);

  auto bad_uri = ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "http://b/k"}});
  EXPECT_FALSE(bad_uri.ok());

  auto newline =
      ParseFileFunctionArgs(SourceKind::kLocal, {{"file_path", "/x"}, {"line_delimiter", "|"}});
  EXPECT_FALSE(newline.ok());
}

TEST(FileParamsTest, SuffixInference) {
  EXPECT_EQ(CompressionFromSuffix("a/b.csv.gz"), Compression::kGzip);
  EXPECT_EQ(CompressionFromSuffix("b.json.zst"), Compression::kZstd);
  EXPECT_EQ(CompressionFromSuffix("b.csv.bz2"), Compression::kBzip2);
  EXPECT_EQ(CompressionFromSuffix("b.lz4"), Compression::kLz4Frame);
  EXPECT_EQ(CompressionFromSuffix("b.deflate"), Compression::kDeflate);
  EXPECT_EQ(CompressionFromSuffix("b.csv"), Compression::kPlain);
}

TEST(FileParamsTest, JsonPathsAreParsedWithTheirEscapes) {
  auto options = ParseFileFunctionArgs(
      SourceKind::kLocal,
      {{"file_path", "/x"},
       {"format", "json"},
       {"jsonpaths", R"([ "$.id", "$.\"full name\"", "$.caf\u00e9", "$.日本", "$.a\\b\n" ])"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(
      options->json.jsonpaths,
      (std::vector<std::string>{"$.id", "$.\"full name\"", "$.caf\xc3\xa9", "$.日本", "$.a\\b\n"}));

  auto absent = ParseFileFunctionArgs(SourceKind::kLocal, {{"file_path", "/x"}});
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_TRUE(absent->json.jsonpaths.empty());
}

TEST(FileParamsTest, JsonPathsRoundTrip) {
  const std::vector<std::string> paths = {"$.id",        "$.\"a \\\"b\\\"\"", "$.tab\there",
                                          "$.new\nline", "$.ctl\x01\x1f",     "$.é",
                                          "$.日本[0]",   "$.\\u00e9"};
  const std::string rendered = RenderJson(nlohmann::json(paths));
  EXPECT_EQ(rendered,
            "[\"$.id\",\"$.\\\"a \\\\\\\"b\\\\\\\"\\\"\",\"$.tab\\there\",\"$.new\\nline\","
            "\"$.ctl\\u0001\\u001f\",\"$.é\",\"$.日本[0]\",\"$.\\\\u00e9\"]");
  auto parsed = ParseJsonPaths(rendered);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, paths);
  auto options = ParseFileFunctionArgs(
      SourceKind::kS3, {{"uri", "s3://b/k"}, {"format", "json"}, {"jsonpaths", rendered}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->json.jsonpaths, paths);
}

TEST(FileParamsTest, MalformedJsonPathsAreNamedWithTheReason) {
  const std::string shape =
      "S3(): \"jsonpaths\" must be a JSON array of strings such as [\"$.id\", \"$.user.name\"], "
      "got '";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"$.id",
       "': not valid JSON: parse error at line 1, column 1: syntax error while parsing value - "
       "invalid literal; last read: '$'"},
      {R"(["$.id", "$.name)",
       "': not valid JSON: parse error at line 1, column 17: syntax error while parsing value - "
       "invalid string: missing closing quote; last read: '\"$.name'"},
      {R"(["$.id" "$.name"])",
       "': not valid JSON: parse error at line 1, column 16: syntax error while parsing array - "
       "unexpected string literal; expected ']'"},
      {R"(["$.id",])",
       "': not valid JSON: parse error at line 1, column 9: syntax error while parsing value - "
       "unexpected ']'; expected '[', '{', or a literal"},
      {R"("$.id")", "': it is of type string"},
      {R"({"id": "$.id"})", "': it is of type object"},
      {"[]", "': the array is empty"},
      {R"(["$.id", 3])", "': element 2 is of type number, not string"},
      {R"(["$.id", ""])", "': element 2 is empty"},
      {R"(["$.id", ["$.x"]])", "': element 2 is of type array, not string"},
  };
  for (const auto& [value, reason] : cases) {
    auto options = ParseFileFunctionArgs(
        SourceKind::kS3, {{"uri", "s3://b/k"}, {"format", "json"}, {"jsonpaths", value}});
    ASSERT_FALSE(options.ok()) << value;
    EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument) << value;
    EXPECT_EQ(options.status().message(), shape + value + reason);
  }
}

// docs/table_functions.md holds the generated parameter table; it must match the code.
// Doris's regression suites pass "provider" = "S3" to every S3(): any S3-compatible store is
// accepted, in any case; Azure, which does not speak S3, is refused saying so.
TEST(FileParamsTest, ProviderIsAcceptedForS3CompatibleStoresOnly) {
  for (const char* provider : {"S3", "s3", "OSS", "cos", "OBS", "MINIO", "gcp"}) {
    auto options =
        ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*.csv"}, {"provider", provider}});
    EXPECT_TRUE(options.ok()) << provider << ": " << options.status().ToString();
  }
  auto azure =
      ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*.csv"}, {"provider", "Azure"}});
  ASSERT_FALSE(azure.ok());
  EXPECT_EQ(azure.status().message(),
            "S3(): \"provider\" = \"AZURE\" is not supported: Azure Blob Storage does not speak "
            "the S3 protocol, and Millrace reads S3-compatible stores only");
  auto other =
      ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*.csv"}, {"provider", "HDFS"}});
  EXPECT_FALSE(other.ok());
  // local() has no store.
  EXPECT_FALSE(
      ParseFileFunctionArgs(SourceKind::kLocal, {{"file_path", "/in/*.csv"}, {"provider", "S3"}})
          .ok());
}

// Credentials come whole or not at all (anonymous requests), in Doris's words.
TEST(FileParamsTest, TheAccessKeyAndTheSecretKeyComeTogether) {
  for (const sql::DorisArgs& half :
       {sql::DorisArgs{{"s3.access_key", "AK"}}, sql::DorisArgs{{"s3.secret_key", "SK"}}}) {
    sql::DorisArgs args = half;
    args.emplace("uri", "s3://b/k/*.csv");
    auto options = ParseFileFunctionArgs(SourceKind::kS3, args);
    ASSERT_FALSE(options.ok());
    EXPECT_EQ(options.status().message(),
              "S3(): Both the access key and the secret key must be set.");
  }
  EXPECT_TRUE(ParseFileFunctionArgs(
                  SourceKind::kS3,
                  {{"uri", "s3://b/k/*.csv"}, {"s3.access_key", "AK"}, {"s3.secret_key", "SK"}})
                  .ok());
  EXPECT_TRUE(ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*.csv"}}).ok());
}

// Doris's names for a parameter, in any case, are the parameter; two of them at once are an
// error; keys only Doris understands are refused saying why, not as unknown.
TEST(FileParamsTest, DorisAliasesInAnyCaseNameTheirParameter) {
  auto options = ParseFileFunctionArgs(SourceKind::kS3, {{"URI", "s3://b/k/*.csv"},
                                                         {"AWS_ENDPOINT", "http://10.0.0.1:9000"},
                                                         {"aws.region", "eu-west-1"},
                                                         {"access_key", "AK"},
                                                         {"AWS_SECRET_KEY", "SK"},
                                                         {"S3.Path-Style-Access", "true"},
                                                         {"Format", "JSON"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->s3.endpoint, "http://10.0.0.1:9000");
  EXPECT_EQ(options->s3.region, "eu-west-1");
  EXPECT_EQ(options->s3.credentials.access_key, "AK");
  EXPECT_EQ(options->s3.credentials.secret_key, "SK");
  EXPECT_TRUE(options->s3.use_path_style);
  EXPECT_EQ(options->format, Format::kJson);

  auto twice = ParseFileFunctionArgs(
      SourceKind::kS3,
      {{"uri", "s3://b/k/*.csv"}, {"AWS_ENDPOINT", "http://a"}, {"s3.endpoint", "http://b"}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "S3(): \"AWS_ENDPOINT\" and \"s3.endpoint\" name the same parameter (s3.endpoint); "
            "give it once");

  for (const RefusedParam& refused : RefusedFileFunctionParams()) {
    auto got = ParseFileFunctionArgs(SourceKind::kS3,
                                     {{"uri", "s3://b/k/*.csv"}, {std::string(refused.name), "x"}});
    ASSERT_FALSE(got.ok()) << refused.name;
    EXPECT_EQ(got.status().message(), "S3(): \"" + std::string(refused.name) +
                                          "\" is not supported: " + std::string(refused.reason));
  }
  EXPECT_TRUE(IsSecretParam("AWS_SECRET_KEY"));
  EXPECT_TRUE(IsSecretParam("s3.session_token"));
  EXPECT_TRUE(IsSecretParam("AWS_ACCESS_KEY"));  // a credential too, never shown
  EXPECT_FALSE(IsSecretParam("s3.endpoint"));
}

TEST(FileParamsTest, FormatsDorisReadsAndMillraceDoesNotAreRefusedInDorisWords) {
  for (const char* format : {"orc", "avro", "arrow", "hive_text", "wal", "ORC"}) {
    auto got = ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*"}, {"format", format}});
    ASSERT_FALSE(got.ok()) << format;
    EXPECT_EQ(got.status().message(), "S3(): format:" + std::string(format) + " is not supported.");
  }
}

// Doris's connection settings are honoured, not swallowed: they reach the S3 client's policy
// and the job's download parallelism.
TEST(FileParamsTest, ConnectionSettingsReachTheClient) {
  auto options =
      ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*"},
                                              {"s3.connection.maximum", "3"},
                                              {"s3.connection.timeout", "1000"},
                                              {"s3.connection.request.timeout", "3000"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->max_connections, 3);
  EXPECT_EQ(options->s3.retry.connect_timeout, std::chrono::milliseconds(1000));
  EXPECT_EQ(options->s3.retry.request_timeout, std::chrono::milliseconds(3000));
  auto zero = ParseFileFunctionArgs(SourceKind::kS3,
                                    {{"uri", "s3://b/k/*"}, {"s3.connection.maximum", "0"}});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "S3(): \"s3.connection.maximum\" must be at least 1, got '0'");
  auto defaults = ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*"}});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->max_connections, std::nullopt);
  EXPECT_EQ(defaults->s3.retry.connect_timeout, s3::RetryPolicy().connect_timeout);
}

// Doris's hints that change nothing of the rows are accepted, as booleans.
TEST(FileParamsTest, DorisHintsAreAcceptedAsBooleans) {
  EXPECT_TRUE(ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*"},
                                                      {"fuzzy_parse", "true"},
                                                      {"force_parsing_by_standard_uri", "true"}})
                  .ok());
  EXPECT_FALSE(
      ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*"}, {"fuzzy_parse", "maybe"}})
          .ok());
}

TEST(FileParamsTest, CsvSchemaMapsDorisTypesToDuckDbs) {
  auto schema = ParseCsvSchema(
      "k1:int; k2 : decimal(38,10);k3:varchar(20);k4:LARGEINT;"
      "k5:datetime;k6:string;k7:boolean;");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  std::vector<std::string> got;
  for (const CsvColumn& column : *schema)
    got.push_back(column.name + " " + column.type);
  EXPECT_EQ(got,
            (std::vector<std::string>{"k1 INTEGER", "k2 DECIMAL(38,10)", "k3 VARCHAR", "k4 HUGEINT",
                                      "k5 TIMESTAMP", "k6 VARCHAR", "k7 BOOLEAN"}));
  for (const auto& [bad, why] : std::vector<std::pair<std::string, std::string>>{
           {"k1", "has no ':'"},
           {"k1:int;K1:int", "named twice"},
           {"k1:json", "type 'json' of column 'k1' is not one of"},
           {"k1:int(3)", "type 'int(3)'"},
           {"k1:decimal(40,2)", "not decimal(p,s)"},
           {":int", "has no name"},
           {";", "no column"}}) {
    auto parsed = ParseCsvSchema(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find(why), std::string::npos)
        << bad << ": " << parsed.status().ToString();
  }
  // Through S3(): the error names the function and the key.
  auto refused =
      ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*"}, {"CSV_SCHEMA", "k1"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("S3(): \"csv_schema\""), std::string::npos);
}

TEST(FileParamsTest, NumAsStringAndUtf8ValidationAreParsed) {
  auto options = ParseFileFunctionArgs(
      SourceKind::kS3,
      {{"uri", "s3://b/k/*"}, {"num_as_string", "true"}, {"enable_text_validate_utf8", "false"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_TRUE(options->json.num_as_string);
  EXPECT_FALSE(ParseFileFunctionArgs(SourceKind::kS3, {{"uri", "s3://b/k/*"},
                                                       {"enable_text_validate_utf8", "sometimes"}})
                   .ok());
}

TEST(FileParamsTest, DocsAreInSyncWithTheTable) {
  std::ifstream in(testing::SourcePath("docs/table_functions.md"));
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find(FileFunctionParamsMarkdown()), std::string::npos)
      << "regenerate the table in docs/table_functions.md:\n"
      << FileFunctionParamsMarkdown();
}

}  // namespace
}  // namespace millrace::load
