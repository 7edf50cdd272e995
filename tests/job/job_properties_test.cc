#include "job/job_properties.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

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
  EXPECT_NE(unknown.status().message().find("\"max_intervall\""), std::string::npos);
  EXPECT_NE(unknown.status().message().find("supported: max_interval, s3.max_batch_files"),
            std::string::npos);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"max_interval", "0"},
                                                        {"max_interval", "ten"},
                                                        {"s3.max_batch_files", "0"},
                                                        {"s3.max_batch_bytes", "lots"},
                                                        {"s3.ingestion_mode", "TWICE"},
                                                        {"late_files", "maybe"},
                                                        {"on_error", "ignore"},
                                                        {"session.insert_max_filter_ratio", "1.5"},
                                                        {"session.enable_insert_strict", "yes"},
                                                        {"offset", "{\"file\": \"x\"}"}}) {
    auto p = JobProperties::Parse({{key, value}});
    ASSERT_FALSE(p.ok()) << key << "=" << value;
    EXPECT_NE(p.status().message().find("\"" + key + "\""), std::string::npos)
        << p.status().message();
  }
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

TEST(JobPropertiesTest, DocsAreInSyncWithTheTable) {
  std::ifstream in(MILLRACE_SOURCE_DIR "/docs/jobs.md");
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find(JobPropertiesMarkdown()), std::string::npos)
      << "regenerate the table in docs/jobs.md:\n"
      << JobPropertiesMarkdown();
}

}  // namespace
}  // namespace millrace::job
