// HttpTransport: one HTTP exchange at a time over libcurl, with pooled connections. Internal
// to the s3 module (and its test support); S3Client is the public face.
//
// Contract
// - Perform runs one request to completion. The body of a 2xx response is handed to the sink
//   piece by piece as it arrives (never accumulated); the body of any other response is kept
//   in HttpResponse::error_body (first 64 KiB) so the caller can parse the S3 error.
// - Transport failures are classified (TransportError) rather than turned into Status here:
//   the caller decides what is retryable and names the endpoint, bucket and key.
// - Timeouts: connect_timeout bounds connection set-up; stall_timeout aborts an exchange in
//   which no byte (header or body, either direction) moved for that long, measured on the
//   injected Clock (libcurl's own low-speed check averages over seconds and misses a stall that
//   follows a burst); total_timeout, when non-zero, bounds the whole exchange.
// - Connections are reused: easy handles return to a pool after each request and keep their
//   connection cache. Thread-safety: Perform may be called from many threads at once.
// - Requests are sent as given: the URL path is not normalized ("/a/../b" stays), nothing is
//   decompressed, redirects are not followed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "s3/sigv4.h"

namespace millrace::s3 {

enum class TransportError {
  kNone,
  kResolve,         // the host name did not resolve
  kConnect,         // connection refused or unreachable
  kTimeout,         // connect timeout, stall, or total timeout
  kTls,             // TLS handshake or certificate failure
  kBrokenTransfer,  // reset, truncated body, connection closed or garbage mid-response
  kSinkFailed,      // the body sink, or the endpoint policy (common/endpoint_policy.h), refused
                    // (HttpResponse::sink_status)
  kOther,
};

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, DELETE, POST
  std::string url;             // fully encoded
  NameValues headers;
  // Upload body for PUT/POST: fills `buf` with up to `size` bytes, returns how many (0: end).
  std::function<size_t(char* buf, size_t size)> body_reader;
  uint64_t body_size = 0;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds stall_timeout{30'000};
  std::chrono::milliseconds total_timeout{0};  // 0: no bound
};

struct HttpResponse {
  int status = 0;      // 0 when no response arrived
  NameValues headers;  // names lower-cased, in arrival order (of the final response)
  std::string error_body;
  uint64_t body_bytes = 0;  // 2xx body bytes accepted by the sink
  TransportError error = TransportError::kNone;
  std::string error_detail;  // libcurl's description of `error`
  Status sink_status;        // the sink's error when error == kSinkFailed

  // Value of the first header with this lower-case name, or nullptr.
  const std::string* Header(std::string_view lower_name) const;
  bool ok_status() const { return status >= 200 && status < 300; }
};

using BodyCallback = std::function<Status(std::string_view bytes)>;
// Sees the status and headers of a 2xx response before its first body byte; an error aborts
// the exchange with kSinkFailed and that error.
using HeadersCallback = std::function<Status(const HttpResponse& response)>;

class HttpTransport {
 public:
  explicit HttpTransport(Clock* clock);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  HttpResponse Perform(const HttpRequest& request, const BodyCallback& on_body,
                       const HeadersCallback& on_headers = {});

 private:
  // A libcurl easy handle and the sockets of the connections it keeps.
  struct Handle;
  std::unique_ptr<Handle> Acquire() EXCLUDES(mu_);
  void Release(std::unique_ptr<Handle> handle) EXCLUDES(mu_);

  Clock* const clock_;
  Mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_ GUARDED_BY(mu_);
};

std::string_view TransportErrorName(TransportError error);

}  // namespace millrace::s3
