// S3Transport: addressing, signing and sending of single S3 requests, and the mapping of a
// failed exchange to a Status. Internal to the s3 module: S3Client adds retries and resumption
// on top; test support uses it directly to create buckets and put objects.
//
// Contract
// - Addressing: virtual-hosted (http://bucket.host/key) unless the config asks for path style
//   (http://host/bucket/key), the endpoint host is an IP address, or the bucket name is not a
//   single DNS label (dots would break TLS name checks) — then path style, as the AWS SDKs do.
// - Every request is signed with SigV4 at the clock's current time, unless no access key is
//   configured (then it is sent anonymously, for public buckets).
// - Classify maps a failed exchange (transport error or non-2xx status) to the Status codes of
//   the S3Client contract and says whether retrying may help. Messages name the operation,
//   the bucket, the key and the endpoint, carry the S3 error code, and never a secret.
// - Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "s3/http_transport.h"
#include "s3/s3_client.h"
#include "s3/sigv4.h"

namespace millrace::s3 {

struct S3Call {
  std::string op = "GetObject";  // names the operation in messages
  std::string method = "GET";
  std::string bucket;
  std::string key;  // "" addresses the bucket itself
  NameValues query;
  NameValues headers;  // besides Host and the signature headers, e.g. Range, If-Match
  // Upload body (PUT); sent as UNSIGNED-PAYLOAD.
  std::function<size_t(char* buf, size_t size)> body_reader;
  uint64_t body_size = 0;
};

struct Failure {
  Status status;
  bool retryable = false;
};

class S3Transport {
 public:
  // INVALID_ARGUMENT for an endpoint that is not http(s)://host[:port][/] or an empty region.
  static Result<std::unique_ptr<S3Transport>> Create(S3Config config, Clock* clock);

  // Sends one attempt. `total_timeout` (0: none) bounds the whole exchange.
  HttpResponse Send(const S3Call& call, const BodyCallback& on_body,
                    const HeadersCallback& on_headers = {},
                    std::chrono::milliseconds total_timeout = std::chrono::milliseconds(0));

  Result<std::string> PresignGet(const std::string& bucket, const std::string& key,
                                 std::chrono::seconds expires, Clock::WallTime signing_time) const;

  // "s3://bucket/key at http://127.0.0.1:9000"
  std::string Describe(const std::string& bucket, const std::string& key) const;
  Failure Classify(const S3Call& call, const HttpResponse& response) const;
  // Masks the secret key and session token should either ever reach a message.
  std::string Scrub(std::string text) const;

  const S3Config& config() const { return config_; }
  Clock* clock() const { return clock_; }
  const std::string& endpoint() const { return endpoint_; }

 private:
  struct Target {
    std::string host;  // Host header value, with the port when one was given
    std::string path;  // decoded
  };

  S3Transport(S3Config config, Clock* clock, std::string scheme, std::string host, bool host_is_ip);
  Target Address(const std::string& bucket, const std::string& key) const;
  std::string Url(const Target& target, const NameValues& query) const;

  const S3Config config_;
  Clock* const clock_;
  const std::string scheme_;    // "http" or "https"
  const std::string host_;      // "127.0.0.1:9000"
  const std::string endpoint_;  // scheme_ + "://" + host_
  const bool host_is_ip_;
  const Signer signer_;
  HttpTransport http_;
};

}  // namespace millrace::s3
