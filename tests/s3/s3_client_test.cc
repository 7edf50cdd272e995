// S3Client against the real s3rver: listings, whole and ranged downloads, odd keys, errors,
// retries against a dead endpoint, memory while streaming, presigned URLs fetched by curl.
#include "s3/s3_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "s3/sigv4.h"
#include "testing/s3rver.h"
#include "testing/temp_dir.h"

namespace millrace::s3 {
namespace {

using millrace::testing::S3rver;
using millrace::testing::TempDir;

constexpr char kBucket[] = "data";

// Deterministic bytes that differ at every offset of a large object, so a shifted, repeated or
// dropped piece is caught.
char PatternByte(uint64_t offset) {
  uint64_t x = offset * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 29;
  return static_cast<char>(x & 0xFF);
}

std::string Pattern(uint64_t offset, uint64_t size) {
  std::string out(size, '\0');
  for (uint64_t i = 0; i < size; ++i)
    out[i] = PatternByte(offset + i);
  return out;
}

void FillPattern(uint64_t offset, char* buf, size_t len) {
  for (size_t i = 0; i < len; ++i)
    buf[i] = PatternByte(offset + i);
}

class S3ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = S3rver::Start({kBucket});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    client_ = NewClient(server_->Config());
  }

  static std::unique_ptr<S3Client> NewClient(const S3Config& config) {
    auto client = S3Client::Create(config, Clock::Real());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(*client) : nullptr;
  }

  void Put(const std::string& key, std::string_view data) {
    const Status status = server_->PutObject(kBucket, key, data);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  Result<std::string> Get(const GetRequest& request, ObjectInfo* info = nullptr) {
    std::string body;
    auto got = client_->GetObject(request, [&](std::string_view bytes) {
      body.append(bytes);
      return Status::Ok();
    });
    if (!got.ok()) return got.status();
    if (info != nullptr) *info = *got;
    return body;
  }

  std::vector<ObjectInfo> ListAll(const std::string& prefix, int max_keys,
                                  const std::string& start_after = "", int* pages = nullptr) {
    std::vector<ObjectInfo> all;
    ListRequest request{
        .bucket = kBucket, .prefix = prefix, .start_after = start_after, .max_keys = max_keys};
    for (int page_count = 1;; ++page_count) {
      auto page = client_->ListObjectsV2(request);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      all.insert(all.end(), page->objects.begin(), page->objects.end());
      if (pages != nullptr) *pages = page_count;
      if (!page->truncated) break;
      EXPECT_LE(page->objects.size(), static_cast<size_t>(max_keys));
      request.continuation_token = page->next_continuation_token;
    }
    return all;
  }

  std::unique_ptr<S3rver> server_;
  std::unique_ptr<S3Client> client_;
};

TEST_F(S3ClientTest, ListingPaginatesOverMoreThanAThousandKeys) {
  constexpr int kKeys = 1500;
  auto key = [](int i) {
    char name[32];
    std::snprintf(name, sizeof(name), "logs/k%05d.csv", i);
    return std::string(name);
  };
  std::vector<std::pair<std::string, std::string>> objects;
  for (int i = 0; i < kKeys; ++i)
    objects.emplace_back(key(i), "row " + std::to_string(i) + "\n");
  ASSERT_TRUE(server_->PutObjects(kBucket, objects).ok());
  Put("other/x.csv", "x");

  int pages = 0;
  const std::vector<ObjectInfo> all = ListAll("logs/", 1000, "", &pages);
  EXPECT_EQ(pages, 2);
  ASSERT_EQ(all.size(), static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(all[i].key, key(i));
    EXPECT_EQ(all[i].size, ("row " + std::to_string(i) + "\n").size());
    EXPECT_EQ(all[i].etag.size(), 32u) << all[i].etag;  // MD5 hex, quotes stripped
    EXPECT_LT(std::chrono::abs(Clock::Real()->WallNow() - all[i].last_modified),
              std::chrono::minutes(5));
  }
  EXPECT_EQ(client_->stats().list_requests, 2u);

  // start-after skips to the key after it; a smaller page size walks more pages.
  const std::vector<ObjectInfo> tail = ListAll("logs/", 250, key(1099), &pages);
  EXPECT_EQ(pages, 2);
  ASSERT_EQ(tail.size(), 400u);
  EXPECT_EQ(tail.front().key, key(1100));
  EXPECT_EQ(tail.back().key, key(kKeys - 1));

  const std::vector<ObjectInfo> narrow = ListAll("logs/k010", 7, "", &pages);  // k01000..k01099
  EXPECT_EQ(narrow.size(), 100u);
  EXPECT_EQ(pages, 15);
  EXPECT_EQ(ListAll("nothing/", 1000).size(), 0u);
  EXPECT_EQ(ListAll("", 1000).size(), static_cast<size_t>(kKeys + 1));
}

TEST_F(S3ClientTest, WholeAndRangedGetsReturnExactlyTheBytes) {
  for (const uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{3 << 20} + 7}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const std::string key = "objects/size-" + std::to_string(size);
    const std::string content = Pattern(0, size);
    Put(key, content);

    ObjectInfo info;
    auto whole = Get({.bucket = kBucket, .key = key}, &info);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_TRUE(*whole == content);
    EXPECT_EQ(info.size, size);
    EXPECT_EQ(info.key, key);
    EXPECT_FALSE(info.etag.empty());

    auto head = client_->HeadObject(kBucket, key);
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    EXPECT_EQ(head->size, size);
    EXPECT_EQ(head->etag, info.etag);
    EXPECT_LT(std::chrono::abs(Clock::Real()->WallNow() - head->last_modified),
              std::chrono::minutes(5));
    if (size == 0) continue;

    struct Range {
      uint64_t offset;
      std::optional<uint64_t> length;
    };
    for (const Range& range : {Range{0, 1}, Range{size - 1, 1}, Range{size / 3, size / 2 + 1},
                               Range{size / 2, std::nullopt}, Range{size - 1, std::nullopt},
                               Range{size / 2, size + 100}, Range{0, size}, Range{size / 2, 0}}) {
      SCOPED_TRACE("offset " + std::to_string(range.offset) + " length " +
                   (range.length ? std::to_string(*range.length) : "rest"));
      auto part = Get(
          {.bucket = kBucket, .key = key, .offset = range.offset, .length = range.length}, &info);
      ASSERT_TRUE(part.ok()) << part.status().ToString();
      const uint64_t expected_length =
          std::min(size - range.offset, range.length.value_or(size - range.offset));
      EXPECT_TRUE(*part == content.substr(range.offset, expected_length));
      EXPECT_EQ(info.size, size);  // the whole object's size, not the range's
    }
    auto past_end = Get({.bucket = kBucket, .key = key, .offset = size + 10});
    EXPECT_EQ(past_end.status().code(), StatusCode::kOutOfRange) << past_end.status().ToString();
  }
  EXPECT_EQ(client_->stats().retries, 0u);
}

TEST_F(S3ClientTest, StreamingA70MiBObjectUsesLittleMemory) {
  constexpr uint64_t kSize = 70ull << 20;
  ASSERT_TRUE(server_->PutGenerated(kBucket, "big/object.bin", kSize, FillPattern).ok());

  const size_t rss_before = millrace::testing::CurrentRssBytes();
  size_t rss_peak = rss_before;
  uint64_t received = 0;
  uint64_t mismatches = 0;
  auto info =
      client_->GetObject({.bucket = kBucket, .key = "big/object.bin"}, [&](std::string_view bytes) {
        for (size_t i = 0; i < bytes.size(); i += 4093) {
          if (bytes[i] != PatternByte(received + i)) ++mismatches;
        }
        received += bytes.size();
        if (received % (4 << 20) < bytes.size()) {
          rss_peak = std::max(rss_peak, millrace::testing::CurrentRssBytes());
        }
        return Status::Ok();
      });
  rss_peak = std::max(rss_peak, millrace::testing::CurrentRssBytes());
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(received, kSize);
  EXPECT_EQ(info->size, kSize);
  EXPECT_EQ(mismatches, 0u);
  // Buffering the object would add 70 MiB; streaming adds libcurl's buffers.
  EXPECT_LT(rss_peak - rss_before, size_t{8} << 20)
      << "RSS grew from " << rss_before << " to " << rss_peak;
}

TEST_F(S3ClientTest, GetObjectToFileWritesTheObjectAndRemovesAPartialFile) {
  const std::string content = Pattern(7, (1 << 20) + 5);
  Put("files/a.bin", content);
  TempDir dir;
  const std::string path = dir.Join("a.bin");
  auto info = client_->GetObjectToFile({.bucket = kBucket, .key = "files/a.bin"}, path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  std::ifstream in(path, std::ios::binary);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_TRUE(written.str() == content);

  auto missing = client_->GetObjectToFile({.bucket = kBucket, .key = "files/none"}, path);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "a failed download left " << path;

  auto bad_dir = client_->GetObjectToFile({.bucket = kBucket, .key = "files/a.bin"},
                                          dir.Join("no/such/dir/a.bin"));
  EXPECT_EQ(bad_dir.status().code(), StatusCode::kIoError);
}

TEST_F(S3ClientTest, KeysWithSpacesUnicodePlusAndPercentRoundTrip) {
  const std::vector<std::string> keys = {
      "odd/a b.csv",         "odd/plus+sign.csv",     "odd/100%.csv",   "odd/x%20y.csv",
      "odd/ünï/日本 語.txt", "odd/semi;colon=eq&amp", "odd/tilde~.-_",  "odd/quote'\"(1)",
      "odd/hash#frag?q=1",   "odd/star*[x]{y}",       "odd/back\\slash"};
  for (size_t i = 0; i < keys.size(); ++i)
    Put(keys[i], "content of " + keys[i]);

  const std::vector<ObjectInfo> listed = ListAll("odd/", 1000);
  std::vector<std::string> listed_keys;
  for (const ObjectInfo& object : listed)
    listed_keys.push_back(object.key);
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(listed_keys, sorted);

  for (const std::string& key : keys) {
    SCOPED_TRACE(key);
    auto body = Get({.bucket = kBucket, .key = key});
    ASSERT_TRUE(body.ok()) << body.status().ToString();
    EXPECT_EQ(*body, "content of " + key);
    auto head = client_->HeadObject(kBucket, key);
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    EXPECT_EQ(head->size, ("content of " + key).size());
  }
  // A literal "%20" in a key is not a space: the two keys stay distinct.
  auto absent = Get({.bucket = kBucket, .key = "odd/x y.csv"});
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
}

TEST_F(S3ClientTest, VirtualHostedAddressingReachesTheBucket) {
  Put("vhost/one.txt", "one");
  auto client = NewClient(server_->VirtualHostConfig());
  ASSERT_NE(client, nullptr);
  auto page = client->ListObjectsV2({.bucket = kBucket, .prefix = "vhost/"});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "vhost/one.txt");
  std::string body;
  auto info =
      client->GetObject({.bucket = kBucket, .key = "vhost/one.txt"}, [&](std::string_view bytes) {
        body.append(bytes);
        return Status::Ok();
      });
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(body, "one");
}

TEST_F(S3ClientTest, MissingBucketAndKeyAreNotFoundNamingThem) {
  auto list = client_->ListObjectsV2({.bucket = "no-such-bucket"});
  EXPECT_EQ(list.status().code(), StatusCode::kNotFound);
  EXPECT_NE(list.status().message().find("NoSuchBucket"), std::string::npos)
      << list.status().message();
  EXPECT_NE(list.status().message().find("no-such-bucket"), std::string::npos);
  EXPECT_NE(list.status().message().find(server_->endpoint()), std::string::npos);

  auto get = Get({.bucket = "no-such-bucket", .key = "k.csv"});
  EXPECT_EQ(get.status().code(), StatusCode::kNotFound);
  EXPECT_NE(get.status().message().find("NoSuchBucket"), std::string::npos);

  auto key = Get({.bucket = kBucket, .key = "dir/missing key.csv"});
  EXPECT_EQ(key.status().code(), StatusCode::kNotFound);
  EXPECT_NE(key.status().message().find("NoSuchKey"), std::string::npos) << key.status().message();
  EXPECT_NE(key.status().message().find("dir/missing key.csv"), std::string::npos);
  EXPECT_NE(key.status().message().find(kBucket), std::string::npos);

  auto head = client_->HeadObject(kBucket, "dir/missing key.csv");
  EXPECT_EQ(head.status().code(), StatusCode::kNotFound);
  EXPECT_NE(head.status().message().find("dir/missing key.csv"), std::string::npos);
  EXPECT_EQ(client_->stats().retries, 0u);  // not-found is final
}

TEST_F(S3ClientTest, UnknownAccessKeyIsUnauthenticatedAndTheSecretNeverShows) {
  S3Config config = server_->Config();
  config.credentials = {"NOT-A-KEY", "secret-never-shown-6f1d", "token-never-shown-93ab"};
  auto client = NewClient(config);
  ASSERT_NE(client, nullptr);
  auto list = client->ListObjectsV2({.bucket = kBucket});
  EXPECT_EQ(list.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(list.status().message().find("InvalidAccessKeyId"), std::string::npos)
      << list.status().message();
  auto get = client->GetObject({.bucket = kBucket, .key = "k"},
                               [](std::string_view) { return Status::Ok(); });
  EXPECT_EQ(get.status().code(), StatusCode::kUnauthenticated);
  for (const Status& status : {list.status(), get.status()}) {
    EXPECT_EQ(status.message().find("secret-never-shown"), std::string::npos);
    EXPECT_EQ(status.message().find("token-never-shown"), std::string::npos);
  }
}

uint16_t ClosedLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);  // nothing listens there now: connections are refused
  return ntohs(addr.sin_port);
}

TEST_F(S3ClientTest, UnreachableEndpointIsUnavailableWithinTheRetryBudget) {
  S3Config config = server_->Config();
  config.endpoint = "http://127.0.0.1:" + std::to_string(ClosedLoopbackPort());
  config.credentials.secret_key = "secret-never-shown-77aa";
  config.retry.max_attempts = 50;
  config.retry.base_backoff = std::chrono::milliseconds(50);
  config.retry.max_backoff = std::chrono::milliseconds(200);
  config.retry.total_budget = std::chrono::milliseconds(1500);
  auto client = NewClient(config);
  ASSERT_NE(client, nullptr);

  const auto start = std::chrono::steady_clock::now();
  auto list = client->ListObjectsV2({.bucket = kBucket});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(list.status().code(), StatusCode::kUnavailable) << list.status().ToString();
  EXPECT_NE(list.status().message().find(config.endpoint), std::string::npos)
      << list.status().message();
  EXPECT_EQ(list.status().message().find("secret-never-shown"), std::string::npos);
  EXPECT_LT(elapsed, std::chrono::milliseconds(3000));
  // Retried, but stopped by the budget long before 50 attempts.
  EXPECT_GE(client->stats().retries, 2u);
  EXPECT_LT(client->stats().retries, 49u);

  config.retry.max_attempts = 3;
  config.retry.total_budget = std::chrono::seconds(30);
  auto few = NewClient(config);
  auto get = few->GetObject({.bucket = kBucket, .key = "k"},
                            [](std::string_view) { return Status::Ok(); });
  EXPECT_EQ(get.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(few->stats().get_requests, 3u);
  EXPECT_EQ(few->stats().retries, 2u);
}

TEST_F(S3ClientTest, SinkErrorAbortsTheDownloadWithoutRetrying) {
  Put("sink/a.bin", Pattern(0, 2 << 20));
  uint64_t received = 0;
  auto info =
      client_->GetObject({.bucket = kBucket, .key = "sink/a.bin"}, [&](std::string_view bytes) {
        received += bytes.size();
        return Status::IoError("disk full");
      });
  EXPECT_EQ(info.status(), Status::IoError("disk full"));
  EXPECT_LT(received, uint64_t{2} << 20);
  EXPECT_EQ(client_->stats().get_requests, 1u);
  EXPECT_EQ(client_->stats().retries, 0u);
}

TEST_F(S3ClientTest, ADifferentETagAbortsTheDownload) {
  Put("etag/a.csv", "version 1");
  ObjectInfo info;
  ASSERT_TRUE(Get({.bucket = kBucket, .key = "etag/a.csv"}, &info).ok());
  // s3rver ignores If-Match, so this also proves the client checks the ETag it receives.
  Put("etag/a.csv", "version 2");
  auto changed = Get({.bucket = kBucket, .key = "etag/a.csv", .if_match = info.etag});
  EXPECT_EQ(changed.status().code(), StatusCode::kAborted) << changed.status().ToString();
  EXPECT_NE(changed.status().message().find("changed"), std::string::npos);
  EXPECT_NE(changed.status().message().find("etag/a.csv"), std::string::npos);
}

TEST_F(S3ClientTest, ConcurrentDownloadsShareOneClient) {
  for (int i = 0; i < 8; ++i)
    Put("par/" + std::to_string(i), Pattern(i, 100'000 + i));
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        const int i = (t + round) % 8;
        auto body = Get({.bucket = kBucket, .key = "par/" + std::to_string(i)});
        if (body.ok() && *body == Pattern(i, 100'000 + i)) ++good;
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(good.load(), 40);
  EXPECT_EQ(client_->stats().get_requests, 40u);
}

TEST_F(S3ClientTest, PresignedUrlWorksWithPlainCurl) {
  Put("shared/report.csv", "a,b\n1,2\n");
  auto url = client_->PresignGetObject(kBucket, "shared/report.csv", std::chrono::seconds(300),
                                       Clock::Real()->WallNow());
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->find(S3rver::kSecretKey + std::string("&")), std::string::npos);
  auto fetched = millrace::testing::RunProcess({"curl", "-sS", "-f", *url});
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->exit_code, 0) << fetched->err;
  EXPECT_EQ(fetched->out, "a,b\n1,2\n");

  // Signed long ago and expired: s3rver refuses it.
  auto old = client_->PresignGetObject(kBucket, "shared/report.csv", std::chrono::seconds(60),
                                       ParseAmzDate("20130524T000000Z").value());
  ASSERT_TRUE(old.ok());
  auto refused = millrace::testing::RunProcess({"curl", "-sS", "-f", *old});
  ASSERT_TRUE(refused.ok());
  EXPECT_NE(refused->exit_code, 0);

  EXPECT_EQ(client_->PresignGetObject(kBucket, "k", std::chrono::seconds(0), {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      client_->PresignGetObject(kBucket, "k", std::chrono::seconds(604801), {}).status().code(),
      StatusCode::kInvalidArgument);
}

TEST(S3ClientConfigTest, RejectsBadEndpointsAndHalfCredentials) {
  for (const char* endpoint : {"ftp://host", "http://", "http://h/base/path", "h/base"}) {
    auto client = S3Client::Create({.endpoint = endpoint}, Clock::Real());
    EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument) << endpoint;
  }
  auto half = S3Client::Create({.endpoint = "http://127.0.0.1:1", .credentials = {"AKID", "", ""}},
                               Clock::Real());
  EXPECT_EQ(half.status().code(), StatusCode::kInvalidArgument);
  auto ok = S3Client::Create({.endpoint = "https://s3.example.com/"}, Clock::Real());
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

// Doris scripts write "s3.endpoint" = "127.0.0.1:9000": a bare host is plain HTTP for a local
// store (an IP address or localhost), TLS for any other host.
TEST(S3ClientConfigTest, ABareEndpointIsHttpForALocalStoreAndHttpsElsewhere) {
  for (const auto& [endpoint, url] : std::vector<std::pair<std::string, std::string>>{
           {"127.0.0.1:9000", "http://127.0.0.1:9000/bucket/k?"},
           {"localhost:9000", "http://localhost:9000/bucket/k?"},
           {"[::1]:9000", "http://[::1]:9000/bucket/k?"},
           {"s3.example.com", "https://bucket.s3.example.com/k?"},
           {"http://s3.example.com", "http://bucket.s3.example.com/k?"}}) {
    auto client = S3Client::Create({.endpoint = endpoint, .credentials = {"AKID", "SECRET", ""}},
                                   Clock::Real());
    ASSERT_TRUE(client.ok()) << endpoint << ": " << client.status().ToString();
    auto presigned = (*client)->PresignGetObject("bucket", "k", std::chrono::seconds(60),
                                                 Clock::Real()->WallNow());
    ASSERT_TRUE(presigned.ok()) << presigned.status().ToString();
    EXPECT_EQ(presigned->rfind(url, 0), 0u) << endpoint << " -> " << *presigned;
  }
}

TEST(S3UriTest, SplitsBucketAndKey) {
  auto uri = S3Uri::Parse("s3://bucket/dir/a b.csv");
  ASSERT_TRUE(uri.ok());
  EXPECT_EQ(uri->bucket, "bucket");
  EXPECT_EQ(uri->key, "dir/a b.csv");
  auto bare = S3Uri::Parse("s3://bucket");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->key, "");
  for (const char* bad : {"", "s3://", "s3:///key", "http://b/k", "bucket/key"}) {
    auto parsed = S3Uri::Parse(bad);
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find(bad), std::string::npos);
  }
}

}  // namespace
}  // namespace millrace::s3
