// S3Client through a fault-injecting proxy in front of the real s3rver: bursts of 503
// SlowDown, connection resets and truncated bodies mid-download, stalls past the timeout, an
// object replaced while its download is broken off. Every download must end with exactly the
// object's bytes (compared by digest) or a clear error, within the retry budget, never hang.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <string>

#include "s3/s3_client.h"
#include "source/s3_source.h"
#include "source/source_test_util.h"
#include "testing/fault_proxy.h"
#include "testing/s3rver.h"
#include "testing/temp_dir.h"

namespace millrace::s3 {
namespace {

using millrace::source::ReadFileBytes;

using millrace::testing::Fault;
using millrace::testing::FaultProxy;
using millrace::testing::FaultRule;
using millrace::testing::RequestKind;
using millrace::testing::S3rver;
using millrace::testing::TempDir;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr char kBucket[] = "faults";
// The client's stall timeout is whole seconds (libcurl's low-speed check): stalls of 4 s
// are well past it.
constexpr auto kRequestTimeout = 1s;
constexpr auto kLongStall = 4s;
constexpr auto kBudget = 3s;
constexpr int kMaxAttempts = 6;

// FNV-1a, printed: enough to tell any two differing downloads apart in a failure message
// without dumping megabytes.
std::string Digest(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes)
    h = (h ^ c) * 0x100000001b3ULL;
  return std::to_string(bytes.size()) + ":" + std::to_string(h);
}

std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(size, '\0');
  for (size_t i = 0; i < size; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&out[i], &v, std::min<size_t>(8, size - i));
  }
  return out;
}

class S3FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = S3rver::Start({kBucket});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    auto proxy = FaultProxy::Start({.upstream_port = server_->port(), .seed = 20260101});
    ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
    proxy_ = std::move(*proxy);
    client_ = NewClient();
  }

  std::unique_ptr<S3Client> NewClient(std::chrono::milliseconds request_timeout = kRequestTimeout) {
    S3Config config = server_->Config();
    config.endpoint = proxy_->endpoint();
    config.retry = {.max_attempts = kMaxAttempts,
                    .base_backoff = 10ms,
                    .max_backoff = 100ms,
                    .total_budget = kBudget,
                    .connect_timeout = 1s,
                    .request_timeout = request_timeout};
    auto client = S3Client::Create(config, Clock::Real());
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(client).value();
  }

  // Puts random bytes straight to s3rver (not through the proxy) and returns them.
  std::string PutRandom(const std::string& key, size_t size, uint64_t seed) {
    std::string data = RandomBytes(size, seed);
    const Status status = server_->PutObject(kBucket, key, data);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return data;
  }

  // Downloads through the proxy to a file; the file must not exist after a failure.
  Result<std::string> Fetch(S3Client& client, const std::string& key,
                            const std::string& if_match = "") {
    const std::string path = dir_.Join("download-" + std::to_string(++downloads_));
    auto info = client.GetObjectToFile({.bucket = kBucket, .key = key, .if_match = if_match}, path);
    if (!info.ok()) {
      EXPECT_FALSE(std::filesystem::exists(path)) << "partial download left behind";
      return info.status();
    }
    return ReadFileBytes(path);
  }

  std::vector<std::string> RangesOfGets() {
    std::vector<std::string> ranges;
    for (const auto& r : proxy_->requests()) {
      if (r.kind == RequestKind::kGet) ranges.push_back(r.range);
    }
    return ranges;
  }

  std::unique_ptr<S3rver> server_;
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<S3Client> client_;
  TempDir dir_;
  int downloads_ = 0;
};

TEST_F(S3FaultTest, BurstOfSlowDownOnGetIsRetried) {
  const std::string data = PutRandom("a.bin", 300'000, 1);
  proxy_->AddRule({.kind = RequestKind::kGet, .times = 3, .fault = Fault::SlowDown()});
  auto got = Fetch(*client_, "a.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Digest(*got), Digest(data));
  EXPECT_EQ(client_->stats().retries, 3u);
  EXPECT_EQ(proxy_->counts().get, 4u);
  EXPECT_EQ(proxy_->counts().faulted, 3u);
}

TEST_F(S3FaultTest, SlowDownAndServerErrorsOnListAndHeadAreRetried) {
  PutRandom("dir/a.bin", 10, 2);
  proxy_->AddRule({.kind = RequestKind::kList, .times = 2, .fault = Fault::SlowDown()});
  proxy_->AddRule({.kind = RequestKind::kHead, .times = 1, .fault = Fault::SlowDown()});
  proxy_->AddRule(
      {.kind = RequestKind::kHead, .times = 1, .fault = Fault::Error(500, "InternalError")});
  proxy_->AddRule(
      {.kind = RequestKind::kGet, .times = 1, .fault = Fault::Error(502, "BadGateway")});
  proxy_->AddRule(
      {.kind = RequestKind::kGet, .times = 1, .fault = Fault::Error(504, "GatewayTimeout")});
  auto page = client_->ListObjectsV2({.bucket = kBucket, .prefix = "dir/"});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  auto head = client_->HeadObject(kBucket, "dir/a.bin");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 10u);
  auto got = Fetch(*client_, "dir/a.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const auto stats = client_->stats();
  EXPECT_EQ(stats.retries, 6u);
  EXPECT_EQ(stats.list_requests, 3u);
  EXPECT_EQ(stats.head_requests, 3u);
  EXPECT_EQ(stats.get_requests, 3u);
  EXPECT_EQ(proxy_->counts().list, 3u);
  EXPECT_EQ(proxy_->counts().head, 3u);
}

// RequestStats: every attempt by kind and outcome, retries and GET body bytes, in each client's
// own counters and in the stats the clients share (S3Config::request_stats, a job's).
TEST_F(S3FaultTest, RequestStatsCountEachAttemptByOutcomeInOwnAndSharedCounters) {
  const std::string data = PutRandom("s.bin", 5000, 11);
  auto shared = std::make_shared<RequestStats>();
  auto make = [&] {
    S3Config config = server_->Config();
    config.endpoint = proxy_->endpoint();
    config.retry = {.max_attempts = kMaxAttempts, .base_backoff = 10ms, .max_backoff = 100ms};
    config.request_stats = shared;
    return std::move(S3Client::Create(config, Clock::Real())).value();
  };
  std::unique_ptr<S3Client> first = make();
  std::unique_ptr<S3Client> second = make();

  // A 503 then the object.
  proxy_->AddRule({.kind = RequestKind::kGet, .times = 1, .fault = Fault::SlowDown()});
  ASSERT_EQ(Digest(Fetch(*first, "s.bin").value_or("")), Digest(data));
  // A body cut after 1000 bytes, resumed from there.
  proxy_->AddRule({.kind = RequestKind::kGet, .times = 1, .fault = Fault::TruncateAfter(1000)});
  ASSERT_EQ(Digest(Fetch(*second, "s.bin").value_or("")), Digest(data));
  // A missing key (404, not retried), a 403 on a listing, a good listing.
  EXPECT_EQ(second->HeadObject(kBucket, "missing").status().code(), StatusCode::kNotFound);
  proxy_->AddRule(
      {.kind = RequestKind::kList, .times = 1, .fault = Fault::Error(403, "AccessDenied")});
  EXPECT_FALSE(first->ListObjectsV2({.bucket = kBucket}).ok());
  EXPECT_TRUE(first->ListObjectsV2({.bucket = kBucket}).ok());

  using K = s3::RequestKind;
  using O = RequestOutcome;
  EXPECT_EQ(shared->requests(K::kGet, O::kOk), 2u);
  EXPECT_EQ(shared->requests(K::kGet, O::kServerError), 1u);
  EXPECT_EQ(shared->requests(K::kGet, O::kNetwork), 1u);
  EXPECT_EQ(shared->requests(K::kGet, O::kClientError), 0u);
  EXPECT_EQ(shared->requests(K::kHead, O::kClientError), 1u);
  EXPECT_EQ(shared->requests(K::kHead), 1u);
  EXPECT_EQ(shared->requests(K::kList, O::kClientError), 1u);
  EXPECT_EQ(shared->requests(K::kList, O::kOk), 1u);
  EXPECT_EQ(shared->retries(), 2u);
  EXPECT_EQ(shared->bytes_downloaded(), 2 * data.size());  // the cut download resumed at 1000
  // Each client's own counters hold its requests only.
  const ClientStats one = first->stats();
  EXPECT_EQ(one.get_requests, 2u);
  EXPECT_EQ(one.list_requests, 2u);
  EXPECT_EQ(one.retries, 1u);
  EXPECT_EQ(one.bytes_downloaded, data.size());
  const ClientStats two = second->stats();
  EXPECT_EQ(two.get_requests, 2u);
  EXPECT_EQ(two.head_requests, 1u);
  EXPECT_EQ(two.retries, 1u);
  EXPECT_EQ(two.bytes_downloaded, data.size());
  EXPECT_EQ(proxy_->counts().get, 4u);
  EXPECT_EQ(proxy_->counts().list, 2u);
}

TEST_F(S3FaultTest, ClientErrorsAreNotRetried) {
  PutRandom("a.bin", 10, 3);
  proxy_->AddRule(
      {.kind = RequestKind::kGet, .times = 1, .fault = Fault::Error(403, "AccessDenied")});
  auto got = Fetch(*client_, "a.bin");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied) << got.status().ToString();
  EXPECT_NE(got.status().message().find("AccessDenied"), std::string::npos);
  EXPECT_EQ(proxy_->counts().get, 1u);
  EXPECT_EQ(client_->stats().retries, 0u);
}

TEST_F(S3FaultTest, EndlessSlowDownGivesUpWithinTheRetryPolicy) {
  PutRandom("a.bin", 1000, 4);
  proxy_->AddRule({.kind = RequestKind::kGet, .times = -1, .fault = Fault::SlowDown()});
  const auto start = SteadyClock::now();
  auto got = Fetch(*client_, "a.bin");
  const auto elapsed = SteadyClock::now() - start;
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  EXPECT_NE(got.status().message().find("SlowDown"), std::string::npos);
  EXPECT_NE(got.status().message().find("a.bin"), std::string::npos);
  EXPECT_LE(proxy_->counts().get, static_cast<uint64_t>(kMaxAttempts));
  EXPECT_EQ(client_->stats().retries, proxy_->counts().get - 1);
  EXPECT_LT(elapsed, kBudget + 1s);
}

TEST_F(S3FaultTest, ResetsMidBodyResumeWithRangeAndIfMatch) {
  const std::string data = PutRandom("big.bin", 2'000'000, 5);
  proxy_->AddRule({.kind = RequestKind::kGet, .times = 2, .fault = Fault::ResetAfter(300'000)});
  auto got = Fetch(*client_, "big.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Digest(*got), Digest(data));
  EXPECT_EQ(client_->stats().retries, 2u);

  const auto requests = proxy_->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].range, "");
  const std::string etag = requests[1].if_match;
  EXPECT_FALSE(etag.empty()) << "a resumed GET must pin the version with If-Match";
  for (size_t i = 1; i < requests.size(); ++i) {
    EXPECT_TRUE(requests[i].range.starts_with("bytes=")) << requests[i].range;
    EXPECT_NE(requests[i].range, "bytes=0-") << "resume must not start over";
    EXPECT_EQ(requests[i].if_match, etag);
  }
}

TEST_F(S3FaultTest, TruncatedBodiesResumeWhereTheyStopped) {
  const std::string data = PutRandom("big.bin", 1'000'000, 6);
  proxy_->AddRule({.kind = RequestKind::kGet, .times = 3, .fault = Fault::TruncateAfter(100'000)});
  auto got = Fetch(*client_, "big.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Digest(*got), Digest(data));
  // A clean close delivers every byte sent: each resume starts exactly 100 000 further.
  EXPECT_EQ(RangesOfGets(),
            (std::vector<std::string>{"", "bytes=100000-", "bytes=200000-", "bytes=300000-"}));
}

TEST_F(S3FaultTest, StallBeforeTheResponsePastTheTimeoutIsRetried) {
  const std::string data = PutRandom("a.bin", 50'000, 7);
  proxy_->AddRule({.kind = RequestKind::kGet, .times = 1, .fault = Fault::StallBefore(kLongStall)});
  const auto start = SteadyClock::now();
  auto got = Fetch(*client_, "a.bin");
  const auto elapsed = SteadyClock::now() - start;
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Digest(*got), Digest(data));
  EXPECT_EQ(client_->stats().retries, 1u);
  EXPECT_LT(elapsed, kLongStall) << "the client waited out the stall instead of timing out";
}

TEST_F(S3FaultTest, StallMidBodyPastTheTimeoutResumes) {
  const std::string data = PutRandom("big.bin", 1'000'000, 8);
  proxy_->AddRule(
      {.kind = RequestKind::kGet, .times = 1, .fault = Fault::StallAfter(500'000, kLongStall)});
  const auto start = SteadyClock::now();
  auto got = Fetch(*client_, "big.bin");
  const auto elapsed = SteadyClock::now() - start;
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Digest(*got), Digest(data));
  EXPECT_EQ(RangesOfGets(), (std::vector<std::string>{"", "bytes=500000-"}));
  EXPECT_LT(elapsed, kLongStall);
}

TEST_F(S3FaultTest, ShortStallWithinTheTimeoutIsNotAFailure) {
  const std::string data = PutRandom("a.bin", 400'000, 9);
  proxy_->AddRule(
      {.kind = RequestKind::kGet, .times = 1, .fault = Fault::StallAfter(100'000, 300ms)});
  auto got = Fetch(*client_, "a.bin");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Digest(*got), Digest(data));
  EXPECT_EQ(client_->stats().retries, 0u);
  EXPECT_EQ(proxy_->counts().get, 1u);
}

TEST_F(S3FaultTest, EndlessStallsGiveUpWithinTheBudgetWithoutHanging) {
  PutRandom("a.bin", 1000, 10);
  proxy_->AddRule({.kind = RequestKind::kGet, .times = -1, .fault = Fault::StallBefore(30s)});
  proxy_->AddRule({.kind = RequestKind::kList, .times = -1, .fault = Fault::StallBefore(30s)});
  for (bool list : {false, true}) {
    const auto start = SteadyClock::now();
    const Status status = list ? client_->ListObjectsV2({.bucket = kBucket}).status()
                               : Fetch(*client_, "a.bin").status();
    const auto elapsed = SteadyClock::now() - start;
    EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
    // One attempt may start just inside the budget and then needs its own timeout (~2 s at
    // libcurl's one-second granularity).
    EXPECT_LT(elapsed, kBudget + 3s) << (list ? "LIST" : "GET");
  }
}

// Holds the body after `cut` bytes, replaces the object on s3rver meanwhile, then resets the
// connection: the resumed GET reaches a different version and must not be stitched on.
class S3ReplacedObjectTest
    : public S3FaultTest,
      public ::testing::WithParamInterface<bool /*proxy enforces If-Match*/> {};

TEST_P(S3ReplacedObjectTest, ObjectReplacedDuringDownloadIsAbortedNeverMixed) {
  proxy_->set_enforce_if_match(GetParam());
  const std::string v1 = PutRandom("obj.bin", 1'000'000, 11);
  // A long timeout: the client must not give up on the held connection before the reset.
  auto client = NewClient(30s);
  proxy_->AddRule({.kind = RequestKind::kGet, .times = 1, .fault = Fault::HoldThenReset(256'000)});
  auto download = std::async(std::launch::async, [&] { return Fetch(*client, "obj.bin"); });
  ASSERT_TRUE(proxy_->WaitForHold(10s));
  const std::string v2 = PutRandom("obj.bin", v1.size(), 12);  // same size, other bytes
  proxy_->ReleaseHold();
  auto got = download.get();
  ASSERT_FALSE(got.ok()) << "returned "
                         << (Digest(*got) == Digest(v1)   ? "v1"
                             : Digest(*got) == Digest(v2) ? "v2"
                                                          : "mixed bytes");
  EXPECT_EQ(got.status().code(), StatusCode::kAborted) << got.status().ToString();
  EXPECT_NE(got.status().message().find("obj.bin"), std::string::npos);
  const auto requests = proxy_->requests();
  ASSERT_GE(requests.size(), 2u);
  EXPECT_FALSE(requests[1].if_match.empty());
  EXPECT_TRUE(requests[1].range.starts_with("bytes=")) << requests[1].range;

  // The new version downloads whole.
  auto fresh = Fetch(*client, "obj.bin");
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(Digest(*fresh), Digest(v2));
}

INSTANTIATE_TEST_SUITE_P(IfMatch, S3ReplacedObjectTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Enforced" : "Ignored"; });

TEST_F(S3FaultTest, SeededRandomFaultsNeverYieldWrongBytes) {
  constexpr int kObjects = 12;
  std::vector<std::string> data;
  for (int i = 0; i < kObjects; ++i) {
    data.push_back(PutRandom("r/" + std::to_string(100 + i) + ".bin", 200'000 + i * 7919, 100 + i));
  }
  proxy_->AddRule(
      {.kind = RequestKind::kList, .times = -1, .probability = 0.3, .fault = Fault::SlowDown()});
  proxy_->AddRule({.kind = RequestKind::kGet,
                   .times = -1,
                   .probability = 0.3,
                   .fault = Fault::ResetAfter(50'000)});
  proxy_->AddRule({.kind = RequestKind::kGet,
                   .times = -1,
                   .probability = 0.2,
                   .fault = Fault::TruncateAfter(70'000)});
  proxy_->AddRule(
      {.kind = RequestKind::kGet, .times = -1, .probability = 0.2, .fault = Fault::SlowDown()});
  proxy_->AddRule({.kind = RequestKind::kGet,
                   .times = -1,
                   .probability = 0.1,
                   .fault = Fault::Error(500, "InternalError")});

  // Through the S3 source, as a job would: list, then download each listed version.
  auto source = source::S3Source::Create("s3://faults/r/*.bin", NewClient());
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto listing = (*source)->List({.max_files = 100});
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  ASSERT_EQ(listing->files.size(), static_cast<size_t>(kObjects));
  for (int i = 0; i < kObjects; ++i) {
    const std::string path = dir_.Join("r" + std::to_string(i));
    const Status status = (*source)->Download(listing->files[i], path);
    ASSERT_TRUE(status.ok()) << listing->files[i].key << ": " << status.ToString();
    EXPECT_EQ(Digest(ReadFileBytes(path)), Digest(data[i])) << listing->files[i].key;
  }
  // A cut past the end of a short ranged body is picked but changes nothing, so retries can
  // be fewer than faults picked, never more.
  const uint64_t retries = (*source)->client().stats().retries;
  EXPECT_GT(retries, 5u);
  EXPECT_LE(retries, proxy_->counts().faulted);
}

}  // namespace
}  // namespace millrace::s3
