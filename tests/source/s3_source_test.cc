// S3Source against the real s3rver: glob filtering over keys, limits, paging, the cost of a
// poll in LIST requests, downloads pinned to the listed version; and MakeSource's choice.
#include "source/s3_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "source/local_source.h"
#include "source/source_test_util.h"
#include "testing/s3rver.h"
#include "testing/temp_dir.h"

namespace millrace::source {
namespace {

using millrace::testing::S3rver;
using millrace::testing::TempDir;

constexpr char kBucket[] = "landing";

class S3SourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = S3rver::Start({kBucket});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }

  void Put(const std::string& key, std::string_view data) {
    const Status status = server_->PutObject(kBucket, key, data);
    ASSERT_TRUE(status.ok()) << key << ": " << status.ToString();
  }

  // Puts name(0..n-1) with small bodies, from a few threads to keep set-up short.
  void PutMany(int n, const std::function<std::string(int)>& name) {
    std::atomic<int> failures{0};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&, w] {
        for (int i = w; i < n; i += 4) {
          if (!server_->PutObject(kBucket, name(i), "r" + std::to_string(i)).ok()) ++failures;
        }
      });
    }
    for (std::thread& t : writers)
      t.join();
    ASSERT_EQ(failures.load(), 0);
  }

  std::unique_ptr<S3Source> MakeS3(const std::string& pattern) {
    auto client = s3::S3Client::Create(server_->Config(), Clock::Real());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    auto source =
        S3Source::Create("s3://" + std::string(kBucket) + "/" + pattern, std::move(client).value());
    EXPECT_TRUE(source.ok()) << source.status().ToString();
    return std::move(source).value();
  }

  Listing ListOrDie(S3Source& source, const ListOptions& options = {}) {
    auto listing = source.List(options);
    EXPECT_TRUE(listing.ok()) << listing.status().ToString();
    return listing.ok() ? std::move(listing).value() : Listing{};
  }

  uint64_t Lists(S3Source& source) { return source.client().stats().list_requests; }

  std::unique_ptr<S3rver> server_;
  TempDir dir_;
};

TEST_F(S3SourceTest, GlobSelectsKeysWithBracesAndClasses) {
  for (const char* key :
       {"ev/2026-01/a.csv", "ev/2026-02/b.csv", "ev/2026-03/c.json", "ev/2026-04/d.csv",
        "ev/2026-04/sub/e.csv", "ev/x.csv", "other/f.csv", "ev/2026-05/é.csv"}) {
    Put(key, key);
  }
  auto braces = MakeS3("ev/2026-0{1,2,4}/*.csv");
  EXPECT_EQ(Keys(ListOrDie(*braces)),
            (std::vector<std::string>{"ev/2026-01/a.csv", "ev/2026-02/b.csv", "ev/2026-04/d.csv"}));
  auto classes = MakeS3("ev/2026-0[2-3]/*");
  EXPECT_EQ(Keys(ListOrDie(*classes)),
            (std::vector<std::string>{"ev/2026-02/b.csv", "ev/2026-03/c.json"}));
  auto negated = MakeS3("ev/2026-0[!1-4]/?.csv");  // '?' is one UTF-8 character
  EXPECT_EQ(Keys(ListOrDie(*negated)), std::vector<std::string>{"ev/2026-05/é.csv"});
  auto deep = MakeS3("ev/**.csv");
  EXPECT_EQ(ListOrDie(*deep).files.size(), 6u);

  const Listing listing = ListOrDie(*braces);
  EXPECT_EQ(listing.files[0].size, std::string("ev/2026-01/a.csv").size());
  EXPECT_FALSE(listing.files[0].etag.empty());
  EXPECT_EQ(listing.last_matching_key, "ev/2026-04/d.csv");
  EXPECT_FALSE(listing.more);
}

TEST_F(S3SourceTest, StartAfterAndLimitsCutBatchesLikeTheLocalSource) {
  for (int i = 0; i < 6; ++i)
    Put("in/f" + std::to_string(i) + ".csv", std::string(100, 'x'));
  Put("in/zz.json", "not matched");
  auto source = MakeS3("in/*.csv");
  const Listing first = ListOrDie(*source, {.max_files = 2});
  EXPECT_EQ(Keys(first), (std::vector<std::string>{"in/f0.csv", "in/f1.csv"}));
  EXPECT_TRUE(first.more);
  // The page is sized to the batch: one key past it tells that more follow.
  EXPECT_EQ(first.last_matching_key, "in/f2.csv");

  // 250 bytes: the third file crosses the limit and is included.
  const Listing bytes = ListOrDie(*source, {.start_after = "in/f1.csv", .max_bytes = 250});
  EXPECT_EQ(Keys(bytes), (std::vector<std::string>{"in/f2.csv", "in/f3.csv", "in/f4.csv"}));
  EXPECT_TRUE(bytes.more);

  const Listing rest = ListOrDie(*source, {.start_after = "in/f4.csv"});
  EXPECT_EQ(Keys(rest), std::vector<std::string>{"in/f5.csv"});
  EXPECT_FALSE(rest.more);
}

TEST_F(S3SourceTest, PagesAcrossThousandsOfKeysAndAnIdlePollIsOneList) {
  constexpr int kKeys = 1205;
  auto name = [](int i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "many/k%05d.csv", i);
    return std::string(buf);
  };
  PutMany(kKeys, name);
  Put("many/z1.csv", "z");

  auto source = MakeS3("many/*.csv");
  const Listing all = ListOrDie(*source, {.max_files = 5000});
  ASSERT_EQ(all.files.size(), static_cast<size_t>(kKeys + 1));
  for (int i = 0; i < kKeys; ++i)
    ASSERT_EQ(all.files[i].key, name(i));
  EXPECT_FALSE(all.more);
  EXPECT_EQ(Lists(*source), 2u);  // 1000 + 206 keys

  // A batch limit stops paging: 10 files need one page, of 11 keys (the 11th says more
  // follow), not of a thousand.
  auto batch = MakeS3("many/*.csv");
  const Listing ten = ListOrDie(*batch, {.max_files = 10});
  EXPECT_EQ(ten.files.size(), 10u);
  EXPECT_TRUE(ten.more);
  EXPECT_EQ(ten.last_matching_key, name(10));
  EXPECT_EQ(Lists(*batch), 1u);
  // Past a first page the glob passed over whole, pages are full: "many/*z*.csv" with a batch
  // of 10 reads 11 keys, then the other 1,196 in two pages.
  auto sparse = MakeS3("many/*z*.csv");
  EXPECT_EQ(ListOrDie(*sparse, {.max_files = 10}).files.size(), 1u);
  EXPECT_EQ(Lists(*sparse), 3u);

  // Polls from the offset cost one LIST, new file or not.
  const uint64_t before = Lists(*source);
  const Listing idle = ListOrDie(*source, {.start_after = "many/z1.csv"});
  EXPECT_TRUE(idle.files.empty());
  EXPECT_EQ(Lists(*source) - before, 1u);
  Put("many/z2.csv", "z");
  const Listing fresh = ListOrDie(*source, {.start_after = "many/z1.csv"});
  EXPECT_EQ(Keys(fresh), std::vector<std::string>{"many/z2.csv"});
  EXPECT_EQ(Lists(*source) - before, 2u);

  // The glob's lower bound: "many/{y,z}*" starts listing after "many/x", past the k-keys,
  // so one page holds everything; "many/*z*" has no bound and reads both pages.
  auto bounded = MakeS3("many/{y,z}*.csv");
  EXPECT_EQ(Keys(ListOrDie(*bounded)), (std::vector<std::string>{"many/z1.csv", "many/z2.csv"}));
  EXPECT_EQ(Lists(*bounded), 1u);
  auto unbounded = MakeS3("many/*z*.csv");
  EXPECT_EQ(ListOrDie(*unbounded).files.size(), 2u);
  EXPECT_EQ(Lists(*unbounded), 2u);

  // An offset past every key the prefix can hold needs no request at all.
  auto narrow = MakeS3("many/z*.csv");
  EXPECT_TRUE(ListOrDie(*narrow, {.start_after = "n/"}).files.empty());
  EXPECT_EQ(Lists(*narrow), 0u);
}

TEST_F(S3SourceTest, DownloadFetchesTheListedVersionOrFailsClearly) {
  const std::string v1(200'000, 'a');
  Put("d/x.csv", v1);
  Put("d/gone.csv", "soon gone");
  auto source = MakeS3("d/*.csv");
  const Listing listing = ListOrDie(*source);
  ASSERT_EQ(listing.files.size(), 2u);
  const FileInfo gone = listing.files[0];
  const FileInfo x = listing.files[1];
  ASSERT_EQ(x.key, "d/x.csv");

  const std::string out = dir_.Join("x.csv");
  ASSERT_TRUE(source->Download(x, out).ok());
  EXPECT_EQ(ReadFileBytes(out), v1);

  auto stat = source->Stat("d/x.csv");
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  EXPECT_EQ(stat->etag, x.etag);
  EXPECT_EQ(stat->size, x.size);
  EXPECT_EQ(source->Stat("e/x.csv").status().code(), StatusCode::kInvalidArgument);

  // Replaced after listing: the listed version no longer exists.
  Put("d/x.csv", std::string(200'000, 'b'));
  const std::string out2 = dir_.Join("x2.csv");
  Status status = source->Download(x, out2);
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.ToString();
  EXPECT_NE(status.message().find("d/x.csv"), std::string::npos) << status.ToString();
  EXPECT_FALSE(std::filesystem::exists(out2));

  ASSERT_TRUE(server_->DeleteObject(kBucket, "d/gone.csv").ok());
  status = source->Download(gone, dir_.Join("gone.csv"));
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_NE(status.message().find("d/gone.csv"), std::string::npos) << status.ToString();
}

TEST_F(S3SourceTest, MakeSourceChoosesByScheme) {
  Put("m/a.csv", "a");
  SourceOptions options;
  options.s3 = server_->Config();
  auto s3 = MakeSource("s3://landing/m/*.csv", options);
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  EXPECT_NE(dynamic_cast<S3Source*>(s3->get()), nullptr);
  EXPECT_EQ((*s3)->Describe(), "s3://landing/m/*.csv");
  auto listing = (*s3)->List({});
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  EXPECT_EQ(Keys(*listing), std::vector<std::string>{"m/a.csv"});

  auto local = MakeSource(dir_.Join("*.csv"), options);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_NE(dynamic_cast<LocalSource*>(local->get()), nullptr);

  for (const char* bad :
       {"m/*.csv", "s3://", "s3://landing", "s3://landing/m/[ab", "file:///x/*.csv"}) {
    auto source = MakeSource(bad, options);
    ASSERT_FALSE(source.ok()) << bad;
    EXPECT_EQ(source.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace millrace::source
