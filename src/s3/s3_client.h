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
// - Addressing: virtual-hosted unless use_path_style, an IP-address endpoint, or a bucket name
//   that is not one DNS label (then path style, as the AWS SDKs do). With no credentials in
//   the config or the environment, requests are sent unsigned (public buckets).
// - Time (for signing, stall detection and backoff sleeps) comes from the injected Clock.
#pragma once

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

  // AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN from the environment.
  static Credentials FromEnvironment();
};

struct RetryPolicy {
  int max_attempts = 8;                            // per request, first try included
  std::chrono::milliseconds base_backoff{100};     // first retry waits up to this
  std::chrono::milliseconds max_backoff{5000};     // cap of one wait
  std::chrono::milliseconds total_budget{60'000};  // all attempts of one call; 0: none
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30'000};  // no byte moved for this long: timeout
};

struct S3Config {
  // "http://127.0.0.1:9000", "https://s3.us-east-1.amazonaws.com". Empty: AWS for `region`.
  std::string endpoint;
  std::string region = "us-east-1";
  bool use_path_style = false;  // http://endpoint/bucket/key instead of http://bucket.endpoint/key
  Credentials credentials;
  RetryPolicy retry;
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

// Counters of requests sent, for tests and the discovery-cost benchmark.
struct ClientStats {
  uint64_t list_requests = 0;
  uint64_t get_requests = 0;
  uint64_t head_requests = 0;
  uint64_t retries = 0;
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
