// S3Client: Millrace's own client for the S3 REST API (ListObjectsV2, GetObject, HeadObject),
// signed with our SigV4 signer, over libcurl.
//
// Contract
// - Thread-safety: one S3Client may be used from many threads at once; connections are reused.
// - Errors are Status values whose message names the endpoint, the bucket and the key, and
//   never the secret key or session token. S3 error codes map as:
//     NoSuchBucket, NoSuchKey        -> NOT_FOUND
//     AccessDenied                   -> PERMISSION_DENIED
//     InvalidAccessKeyId,
//     SignatureDoesNotMatch          -> UNAUTHENTICATED
//     PreconditionFailed (If-Match)  -> ABORTED (the object changed)
//     endpoint unreachable, DNS,
//     TLS failure, retry budget spent-> UNAVAILABLE
//     timeout                        -> DEADLINE_EXCEEDED
//     malformed XML                  -> DATA_LOSS
//   and the S3 error code (e.g. "NoSuchKey") appears in the message.
// - Retries: HTTP 500/502/503/504, SlowDown, RequestTimeout, connection refused/reset,
//   timeouts and short reads are retried with capped exponential backoff and full jitter,
//   within RetryPolicy. A GetObject that breaks mid-body resumes with a Range request from the
//   last byte received and If-Match on the ETag of the first response, so the bytes delivered
//   are always of one object version; if the object changed, the call fails with ABORTED.
//   A download that made progress since its last failure starts a fresh allowance of attempts
//   and budget, so a long transfer survives many breaks as long as each attempt moves it on.
//   If a resumed response shows another ETag or size, or the resumed range no longer fits
//   (HTTP 416), the object changed: ABORTED, even against servers that ignore If-Match.
// - GetObject never buffers a whole object: the body is handed to the sink as it arrives.
//   A range that starts at or past the end of a non-empty object is OUT_OF_RANGE (as S3 says).
// - Endpoint: http(s)://host[:port], or a bare host[:port] as Doris scripts write it: http for
//   an IP address or localhost, https for any other host.
// - Addressing: virtual-hosted unless use_path_style, an IP-address or localhost endpoint, or a
//   bucket name that is not one DNS label (then path style, as the AWS SDKs do). With no
//   credentials in the config or the environment, requests are sent unsigned (public buckets).
// - Time (for signing, stall detection and backoff sleeps) comes from the injected Clock.
// - Counting: every attempt sent (first tries and retries) is counted once it ends, by kind and
//   outcome (RequestStats), in the client's own counters (stats()) and, when the config names
//   one, in a RequestStats shared with others (S3Config::request_stats: a job's, kept across
//   the clients its rebuilt sources create). Retries and the body bytes of GetObject's 2xx
//   responses (bytes fetched again after a break included) are counted too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace millrace::s3 {

struct Credentials {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // empty when not using temporary credentials
  // None at all: anonymous, unsigned requests. The client never looks in the environment
  // (the command line's flags do, for the host's own operator: cli/s3_command.cc).
};

struct RetryPolicy {
  int max_attempts = 8;                            // per request, first try included
  std::chrono::milliseconds base_backoff{100};     // first retry waits up to this
  std::chrono::milliseconds max_backoff{5000};     // cap of one wait
  std::chrono::milliseconds total_budget{60'000};  // all attempts of one call; 0: none
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30'000};  // no byte moved for this long: timeout
};

enum class RequestKind { kList, kGet, kHead };
// How one attempt ended.
enum class RequestOutcome {
  kOk,           // a 2xx answer received in full (or stopped by the caller's sink)
  kClientError,  // a 3xx or 4xx answer: credentials, a missing key, a changed object, a region
  kServerError,  // a 5xx answer (SlowDown, InternalError, ServiceUnavailable ...)
  kNetwork,      // no complete answer: unreachable, refused, reset, timed out, TLS, a cut body
};
inline constexpr int kRequestKinds = 3;
inline constexpr int kRequestOutcomes = 4;
// "list", "get", "head"; "ok", "client_error", "server_error", "network" (metric labels).
std::string_view RequestKindName(RequestKind kind);
std::string_view RequestOutcomeName(RequestOutcome outcome);

// Counters of requests by kind and outcome, retries and bytes downloaded; lock-free, so a
// metrics scrape reads them while requests run.
class RequestStats {
 public:
  void Count(RequestKind kind, RequestOutcome outcome) {
    requests_[static_cast<int>(kind)][static_cast<int>(outcome)].fetch_add(
        1, std::memory_order_relaxed);
  }
  void AddRetry() { retries_.fetch_add(1, std::memory_order_relaxed); }
  void AddBytesDownloaded(uint64_t n) { bytes_downloaded_.fetch_add(n, std::memory_order_relaxed); }

  uint64_t requests(RequestKind kind, RequestOutcome outcome) const {
    return requests_[static_cast<int>(kind)][static_cast<int>(outcome)].load(
        std::memory_order_relaxed);
  }
  // Of any outcome.
  uint64_t requests(RequestKind kind) const;
  uint64_t retries() const { return retries_.load(std::memory_order_relaxed); }
  uint64_t bytes_downloaded() const { return bytes_downloaded_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> requests_[kRequestKinds][kRequestOutcomes]{};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> bytes_downloaded_{0};
};

struct S3Config {
  // "http://127.0.0.1:9000", "https://s3.us-east-1.amazonaws.com". Empty: AWS for `region`.
  std::string endpoint;
  std::string region = "us-east-1";
  bool use_path_style = false;  // http://endpoint/bucket/key instead of http://bucket.endpoint/key
  Credentials credentials;
  RetryPolicy retry;
  // Also counted into when set (see the contract); may be shared by many clients.
  std::shared_ptr<RequestStats> request_stats;
};

struct ObjectInfo {
  std::string key;
  std::string etag;  // without surrounding quotes
  uint64_t size = 0;
  Clock::WallTime last_modified{};
};

struct ListRequest {
  std::string bucket;
  std::string prefix;
  std::string start_after;
  std::string continuation_token;
  int max_keys = 1000;
};

struct ListPage {
  std::vector<ObjectInfo> objects;  // in key order
  bool truncated = false;
  std::string next_continuation_token;
};

struct GetRequest {
  std::string bucket;
  std::string key;
  uint64_t offset = 0;             // first byte wanted
  std::optional<uint64_t> length;  // nullopt: to the end of the object
  std::string if_match;            // ETag the object must have; empty: any
};

// Receives the body in pieces, in order. Returning an error aborts the download with it.
using BodySink = std::function<Status(std::string_view bytes)>;

// The client's own counters (see the contract), for tests and the discovery-cost benchmark:
// attempts sent of each kind whatever their outcome, retries, GetObject body bytes.
struct ClientStats {
  uint64_t list_requests = 0;
  uint64_t get_requests = 0;
  uint64_t head_requests = 0;
  uint64_t retries = 0;
  uint64_t bytes_downloaded = 0;
};

class S3Client {
 public:
  static Result<std::unique_ptr<S3Client>> Create(S3Config config, Clock* clock);
  virtual ~S3Client() = default;

  virtual Result<ListPage> ListObjectsV2(const ListRequest& request) = 0;
  virtual Result<ObjectInfo> HeadObject(const std::string& bucket, const std::string& key) = 0;
  // Streams the object (or range) to `sink`; on success returns the object's metadata
  // (size is the whole object's size).
  virtual Result<ObjectInfo> GetObject(const GetRequest& request, const BodySink& sink) = 0;
  // Downloads to a file (created or truncated) and returns the object's metadata.
  virtual Result<ObjectInfo> GetObjectToFile(const GetRequest& request,
                                             const std::string& path) = 0;
  // A presigned GET URL valid for `expires` from `signing_time`.
  virtual Result<std::string> PresignGetObject(const std::string& bucket, const std::string& key,
                                               std::chrono::seconds expires,
                                               Clock::WallTime signing_time) = 0;

  virtual ClientStats stats() const = 0;
  virtual const S3Config& config() const = 0;
};

// Splits "s3://bucket/key-or-pattern" into bucket and key. INVALID_ARGUMENT names the URI.
struct S3Uri {
  std::string bucket;
  std::string key;
  static Result<S3Uri> Parse(std::string_view uri);
};

}  // namespace millrace::s3
