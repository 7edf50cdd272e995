#include "job/job_properties.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json.h"
#include "load/file_params.h"
#include "testing/test_paths.h"

namespace millrace::job {
namespace {

TEST(JobPropertiesTest, Defaults) {
  auto p = JobProperties::Parse({});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->max_interval_seconds, 10);
  EXPECT_EQ(p->max_batch_files, 256);
  EXPECT_EQ(p->max_batch_bytes, 10LL << 30);
  EXPECT_EQ(p->ingestion_mode, IngestionMode::kStreaming);
  EXPECT_EQ(p->late_files, LateFiles::kLoad);
  EXPECT_EQ(p->reconcile_interval_seconds, 300);
  EXPECT_EQ(p->on_error, OnError::kPause);
  EXPECT_EQ(p->max_filter_ratio, 0);
  EXPECT_TRUE(p->strict);
  EXPECT_FALSE(p->has_offset);
  EXPECT_EQ(p->ToJson(), "{}");
}

TEST(JobPropertiesTest, EveryPropertyParses) {
  auto p = JobProperties::Parse({{"max_interval", "5m"},
                                 {"s3.max_batch_files", "1"},
                                 {"s3.max_batch_bytes", "512MB"},
                                 {"offset", "{\"fileName\": \"ev/2026/01.csv\"}"},
                                 {"s3.ingestion_mode", "once"},
                                 {"late_files", "ignore"},
                                 {"reconcile_interval", "60s"},
                                 {"on_error", "skip_file"},
                                 {"session.insert_max_filter_ratio", "0.25"},
                                 {"session.enable_insert_strict", "false"}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->max_interval_seconds, 300);
  EXPECT_EQ(p->max_batch_files, 1);
  EXPECT_EQ(p->max_batch_bytes, 512LL << 20);
  EXPECT_EQ(p->offset, "ev/2026/01.csv");
  EXPECT_TRUE(p->has_offset);
  EXPECT_EQ(p->ingestion_mode, IngestionMode::kOnce);
  EXPECT_EQ(p->late_files, LateFiles::kIgnore);
  EXPECT_EQ(p->reconcile_interval_seconds, 60);
  EXPECT_EQ(p->on_error, OnError::kSkipFile);
  EXPECT_DOUBLE_EQ(p->max_filter_ratio, 0.25);
  EXPECT_FALSE(p->strict);
}

TEST(JobPropertiesTest, BadInputNamesTheKey) {
  auto unknown = JobProperties::Parse({{"max_intervall", "1"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message().rfind(
                "Invalid properties: [max_intervall]. Supported keys are max_interval, "
                "s3.max_batch_files",
                0),
            0u)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("\"max_intervall\""), std::string::npos);
  // Keys starting with "__" pass through, as in Doris.
  EXPECT_TRUE(JobProperties::Parse({{"__internal", "x"}}).ok());
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"max_interval", "0"},
                                                        {"max_interval", "ten"},
                                                        {"s3.max_batch_files", "0"},
                                                        {"s3.max_batch_bytes", "lots"},
                                                        {"s3.max_batch_bytes", "99M"},
                                                        {"s3.max_batch_bytes", "11G"},
                                                        {"s3.ingestion_mode", "TWICE"},
                                                        {"late_files", "maybe"},
                                                        {"on_error", "ignore"},
                                                        {"session.insert_max_filter_ratio", "1.5"},
                                                        {"session.enable_insert_strict", "yes"},
                                                        {"session.insert_timeout", "0"},
                                                        {"session.query_timeout", "soon"},
                                                        {"offset", "{\"file\": \"x\"}"}}) {
    auto p = JobProperties::Parse({{key, value}});
    ASSERT_FALSE(p.ok()) << key << "=" << value;
    EXPECT_NE(p.status().message().find("\"" + key + "\""), std::string::npos)
        << p.status().message();
  }
}

TEST(JobPropertiesTest, SessionVariablesAreDorisOwn) {
  // Those Millrace reads, in any case; real Doris variables it ignores; anything else refused.
  auto read = JobProperties::Parse({{"session.ENABLE_INSERT_STRICT", "false"},
                                    {"session.Insert_Max_Filter_Ratio", "0.5"},
                                    {"session.insert_timeout", "3600"},
                                    {"session.query_timeout", "60"},
                                    {"session.exec_mem_limit", "2147483648"},
                                    {"session.TIME_ZONE", "Asia/Shanghai"}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_FALSE(read->strict);
  EXPECT_DOUBLE_EQ(read->max_filter_ratio, 0.5);
  EXPECT_EQ(read->given.at("session.TIME_ZONE"), "Asia/Shanghai");  // kept as given
  for (const IgnoredSessionVariable& variable : IgnoredSessionVariables()) {
    EXPECT_TRUE(JobProperties::Parse({{"session." + std::string(variable.name), "anything"}}).ok())
        << variable.name;
  }
  auto invented = JobProperties::Parse({{"session.make_it_fast", "true"}});
  ASSERT_FALSE(invented.ok());
  EXPECT_EQ(invented.status().message().rfind("Invalid session variable, [make_it_fast]", 0), 0u)
      << invented.status().message();
  // A bad value of a variable Millrace reads names the key as given.
  auto bad = JobProperties::Parse({{"session.Enable_Insert_Strict", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"session.Enable_Insert_Strict\""), std::string::npos)
      << bad.status().message();
}

TEST(JobPropertiesTest, MergeAndJson) {
  auto p = JobProperties::Parse({{"max_interval", "10"}, {"on_error", "pause"}});
  ASSERT_TRUE(p.ok());
  auto merged = p->Merge({{"max_interval", "20"}, {"late_files", "ignore"}});
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->max_interval_seconds, 20);
  EXPECT_EQ(merged->ToJson(),
            "{\"late_files\":\"ignore\",\"max_interval\":\"20\",\"on_error\":\"pause\"}");
}

TEST(JobPropertiesTest, Offsets) {
  EXPECT_EQ(*ParseOffset("{\"fileName\":\"a/b \\\"c\\\".csv\"}"), "a/b \"c\".csv");
  EXPECT_EQ(*ParseOffset("s3://bucket/dir/x.csv"), "dir/x.csv");
  EXPECT_EQ(*ParseOffset("plain/key"), "plain/key");
  EXPECT_FALSE(ParseOffset("{\"fileName\": 3}").ok());
  EXPECT_EQ(OffsetJson("a\"b"), "{\"fileName\":\"a\\\"b\"}");
}

TEST(JobPropertiesTest, OffsetEscapesAreDecoded) {
  auto key = ParseOffset(R"({"fileName": "a\"b\\c\nd\u00e9"})");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(*key, "a\"b\\c\nd\xc3\xa9");
  // Every JSON escape, a surrogate pair, raw UTF-8, and the s3:// form inside the JSON.
  EXPECT_EQ(*ParseOffset(R"({"fileName":"\/\b\f\r\t\u0001\u001F\ud83d\ude00"})"),
            "/\b\f\r\t\x01\x1f\xf0\x9f\x98\x80");
  EXPECT_EQ(*ParseOffset("{\"fileName\":\"日本/é.csv\"}"), "日本/é.csv");
  EXPECT_EQ(*ParseOffset(R"({"fileName":"s3://bucket/d\u00e9/x.csv"})"), "d\xc3\xa9/x.csv");
  // Spaces around the value, and members other than fileName (as Doris), are ignored.
  EXPECT_EQ(*ParseOffset(" \n{ \"other\": [1], \"fileName\" : \"k\" }\t"), "k");
  // A bare key is taken as it is: backslashes are not escapes there.
  EXPECT_EQ(*ParseOffset("  dir/a\\nb.csv "), "dir/a\\nb.csv");
  EXPECT_EQ(*ParseOffset(R"({"fileName":""})"), "");
}

TEST(JobPropertiesTest, OffsetsRoundTrip) {
  EXPECT_EQ(OffsetJson("a\"b\\c\nd\t\x01\x1f\x7f"
                       "\xc3\xa9"),
            "{\"fileName\":\"a\\\"b\\\\c\\nd\\t\\u0001\\u001f\x7f\xc3\xa9\"}");
  EXPECT_EQ(OffsetJson("日本"), "{\"fileName\":\"日本\"}");
  const std::vector<std::string> keys = {"",
                                         "ev/2026/01.csv",
                                         "a\"b",
                                         "back\\slash\\",
                                         "new\nline\r\n",
                                         "tab\there",
                                         std::string("nul\0byte", 8),
                                         "\x01\x08\x0c\x1f\x7f",
                                         "é",
                                         "日本/データ.csv",
                                         "literal \\u00e9 and \\\" stay",
                                         "{\"fileName\":\"nested\"}"};
  for (const std::string& key : keys) {
    const std::string json = OffsetJson(key);
    auto parsed = ParseOffset(json);
    ASSERT_TRUE(parsed.ok()) << json << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, key) << json;
    // And through the property, as ALTER JOB gives it back.
    auto p = JobProperties::Parse({{"offset", json}});
    ASSERT_TRUE(p.ok()) << json << ": " << p.status().ToString();
    EXPECT_EQ(p->offset, key) << json;
  }
  // A key that is not UTF-8 still renders (as U+FFFD) instead of throwing; the JSON is valid.
  const std::string bad_utf8 = OffsetJson(
      "a\xff"
      "b");
  EXPECT_EQ(bad_utf8,
            "{\"fileName\":\"a\xef\xbf\xbd"
            "b\"}");
  EXPECT_EQ(*ParseOffset(bad_utf8),
            "a\xef\xbf\xbd"
            "b");
}

TEST(JobPropertiesTest, PropertiesJsonRoundTrips) {
  auto p = JobProperties::Parse({{"offset", R"({"fileName":"a\"b\\c\u00e9"})"}});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->ToJson(), R"({"offset":"{\"fileName\":\"a\\\"b\\\\c\\u00e9\"}"})");
  auto doc = ParseJson(p->ToJson());
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  PropertyMap back;
  for (const auto& [key, value] : doc->items())
    back[key] = value.get<std::string>();
  EXPECT_EQ(back, p->given);
  auto again = JobProperties::Parse(back);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->offset, "a\"b\\c\xc3\xa9");
}

TEST(JobPropertiesTest, MalformedOffsetIsNamedWithTheReason) {
  // Doris's words first: JSON that does not parse fails to initialize, JSON without a string
  // fileName (or nothing at all) has an invalid format.
  const std::string failed =
      "Failed to initialize offset: property \"offset\" must be {\"fileName\":\"key\"}, got '";
  const std::string invalid =
      "Invalid format for offset: property \"offset\" must be {\"fileName\":\"key\"}, got '";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"fileName": "a)",
       "': not valid JSON: parse error at line 1, column 16: syntax error while parsing value - "
       "invalid string: missing closing quote; last read: '\"a'"},
      {R"({"fileName":"a"} x)",
       "': not valid JSON: parse error at line 1, column 18: syntax error while parsing value - "
       "invalid literal; last read: '\"a\"} x'; expected end of input"},
      {R"({"fileName":"a\qb"})",
       "': not valid JSON: parse error at line 1, column 16: syntax error while parsing value - "
       "invalid string: forbidden character after backslash; last read: '\"a\\q'"},
      {"{\"fileName\":\"a\tb\"}",
       "': not valid JSON: parse error at line 1, column 15: syntax error while parsing value - "
       "invalid string: control character U+0009 (HT) must be escaped to \\u0009 or \\t; last "
       "read: '\"a<U+0009>'"},
      {R"({"file": "x"})", "': no \"fileName\" member"},
      {R"({"fileName": 3})", "': \"fileName\" is of type number, not string"},
      {R"({"fileName": null})", "': \"fileName\" is of type null, not string"},
      {"", "': it is empty"},
      {"  ", "': it is empty"},
  };
  for (const auto& [value, reason] : cases) {
    auto key = ParseOffset(value);
    ASSERT_FALSE(key.ok()) << value;
    EXPECT_EQ(key.status().code(), StatusCode::kInvalidArgument) << value;
    const bool parses = reason.find("not valid JSON") == std::string::npos;
    EXPECT_EQ(key.status().message(), (parses ? invalid : failed) + value + reason);
    // JobProperties::Parse (CREATE and ALTER JOB) reports the same.
    auto p = JobProperties::Parse({{"offset", value}});
    ASSERT_FALSE(p.ok()) << value;
    EXPECT_EQ(p.status(), key.status());
  }
}

TEST(JobPropertiesTest, DocsAreInSyncWithTheTable) {
  std::ifstream in(testing::SourcePath("docs/jobs.md"));
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find(JobPropertiesMarkdown()), std::string::npos)
      << "regenerate the table in docs/jobs.md:\n"
      << JobPropertiesMarkdown();
  EXPECT_NE(doc.str().find(IgnoredSessionVariablesMarkdown()), std::string::npos)
      << "regenerate the ignored session variables in docs/jobs.md:\n"
      << IgnoredSessionVariablesMarkdown();
}

// docs/doris.md's table says what Millrace does with every Doris key: each key and alias the
// code knows is in it.
TEST(JobPropertiesTest, DorisTableNamesEveryKey) {
  std::ifstream in(testing::SourcePath("docs/doris.md"));
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  std::vector<std::string> keys;
  for (const load::ParamSpec& spec : load::FileFunctionParams()) {
    keys.emplace_back(spec.name);
    keys.insert(keys.end(), spec.aliases.begin(), spec.aliases.end());
  }
  for (const load::RefusedParam& refused : load::RefusedFileFunctionParams())
    keys.emplace_back(refused.name);
  for (const ParamSpec& spec : JobPropertySpecs())
    keys.emplace_back(spec.name);
  for (const std::string& key : keys)
    EXPECT_NE(text.find("`" + key + "`"), std::string::npos) << key << " is not in docs/doris.md";
}

}  // namespace
}  // namespace millrace::job
