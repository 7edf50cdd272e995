// Test support: a fault-injecting HTTP/1.1 proxy to put between an S3 client and s3rver.
//
// The client is pointed at the proxy's endpoint (path-style); the proxy forwards each request
// to the upstream on a fresh connection and relays the answer, unless a rule says otherwise:
// answer an S3 error (503 SlowDown ...), reset the connection or close it (a truncated body
// under a full Content-Length) after K body bytes, stall before or in the middle of the body,
// or hold the body at byte K until the test releases it (to change the object meanwhile).
//
// Contract
// - Listens on 127.0.0.1 on an ephemeral port; one thread accepts, one thread serves each
//   client connection (keep-alive honoured). Stop() (or the destructor) unblocks stalls and
//   holds, closes every connection and joins every thread.
// - Rules are tried in the order added; the first whose kind and key match and that has uses
//   left applies (a `probability` < 1 draws from a generator seeded by Options::seed, so runs
//   are repeatable). Requests no rule takes pass through untouched.
// - Requests are classified as LIST (GET on a bucket), GET (GET of an object), HEAD, or OTHER
//   and counted, faulted or not.
// - With enforce_if_match, a forwarded GET whose If-Match differs from the upstream's ETag is
//   answered 412 PreconditionFailed, as S3 does (s3rver ignores If-Match on GET).
// - Thread-safety: every public method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/thread_annotations.h"

namespace millrace::testing {

enum class RequestKind { kList, kGet, kHead, kOther };
std::string_view RequestKindName(RequestKind kind);

struct Fault {
  enum class Cut {
    kContinue,  // after the stall/hold, send the rest of the body
    kReset,     // RST the connection
    kClose,     // close it cleanly: the client sees fewer bytes than Content-Length
  };

  // Answer with this S3 error instead of forwarding (0: forward).
  int error_status = 0;
  std::string error_code;
  // Pause before the first byte of the answer.
  std::chrono::milliseconds delay{0};
  // At this many body bytes (only when the body is longer): pause `stall`, wait for
  // ReleaseHold() if `hold`, then `cut`.
  std::optional<uint64_t> cut_after_bytes;
  std::chrono::milliseconds stall{0};
  bool hold = false;
  Cut cut = Cut::kContinue;

  static Fault SlowDown() { return {.error_status = 503, .error_code = "SlowDown"}; }
  static Fault Error(int status, std::string code) {
    return {.error_status = status, .error_code = std::move(code)};
  }
  static Fault ResetAfter(uint64_t bytes) { return {.cut_after_bytes = bytes, .cut = Cut::kReset}; }
  static Fault TruncateAfter(uint64_t bytes) {
    return {.cut_after_bytes = bytes, .cut = Cut::kClose};
  }
  static Fault StallBefore(std::chrono::milliseconds d) { return {.delay = d}; }
  static Fault StallAfter(uint64_t bytes, std::chrono::milliseconds d) {
    return {.cut_after_bytes = bytes, .stall = d};
  }
  // Sends `bytes` of the body, waits for ReleaseHold(), then resets.
  static Fault HoldThenReset(uint64_t bytes) {
    return {.cut_after_bytes = bytes, .hold = true, .cut = Cut::kReset};
  }
};

struct FaultRule {
  std::optional<RequestKind> kind;  // nullopt: any kind
  std::string key_contains;         // "": any key; else a substring of the decoded object key
  int times = 1;                    // matching requests it applies to; -1: every one
  double probability = 1.0;         // chance a matching request gets the fault
  Fault fault;
};

struct ProxyCounts {
  uint64_t list = 0;
  uint64_t get = 0;
  uint64_t head = 0;
  uint64_t other = 0;
  uint64_t faulted = 0;
};

struct ProxiedRequest {
  std::string method;
  RequestKind kind = RequestKind::kOther;
  std::string key;            // decoded object key; "" for bucket requests
  std::string range;          // Range header, "" if none
  std::string if_match;       // If-Match header, "" if none
  std::string authorization;  // Authorization header, "" if none (an anonymous request)
  bool faulted = false;
};

class FaultProxy {
 public:
  struct Options {
    std::string upstream_host = "127.0.0.1";
    int upstream_port = 0;
    uint64_t seed = 1;
    bool enforce_if_match = false;
  };

  static Result<std::unique_ptr<FaultProxy>> Start(Options options);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port>"
  std::string endpoint() const;

  void AddRule(FaultRule rule) EXCLUDES(mu_);
  void ClearRules() EXCLUDES(mu_);
  void set_enforce_if_match(bool on) EXCLUDES(mu_);

  ProxyCounts counts() const EXCLUDES(mu_);
  std::vector<ProxiedRequest> requests() const EXCLUDES(mu_);
  void ResetCounts() EXCLUDES(mu_);

  // Waits until a response is held at its cut point; false on timeout.
  bool WaitForHold(std::chrono::milliseconds timeout) EXCLUDES(mu_);
  // Lets one held response go on.
  void ReleaseHold() EXCLUDES(mu_);

  void Stop() EXCLUDES(mu_);

 private:
  struct Request;
  struct Response;
  explicit FaultProxy(Options options) : options_(std::move(options)), rng_(options_.seed) {}

  void AcceptLoop();
  void ServeConnection(int fd);
  // Reads one request; false when the client closed or the proxy stops.
  bool ReadRequest(int fd, std::string* buffer, Request* request);
  std::optional<Fault> PickFault(const ProxiedRequest& request) EXCLUDES(mu_);
  Result<Response> Forward(const Request& request);
  // Sends the response applying `fault`; false when the connection must be closed.
  bool SendResponse(int fd, const Response& response, const Fault& fault);
  // Waits for `d` unless the proxy stops first; false when stopping.
  bool SleepFor(std::chrono::milliseconds d) EXCLUDES(mu_);
  bool Hold() EXCLUDES(mu_);
  // Reads more bytes into `buffer`; false at EOF, error, timeout or stop.
  bool ReadMore(int fd, std::string* buffer, std::chrono::milliseconds timeout);
  bool stopping() EXCLUDES(mu_);

  const Options options_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;

  mutable Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool enforce_if_match_ GUARDED_BY(mu_) = false;
  std::vector<FaultRule> rules_ GUARDED_BY(mu_);
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  ProxyCounts counts_ GUARDED_BY(mu_);
  std::vector<ProxiedRequest> requests_ GUARDED_BY(mu_);
  std::vector<std::thread> connection_threads_ GUARDED_BY(mu_);
  std::vector<int> open_fds_ GUARDED_BY(mu_);
  int held_ GUARDED_BY(mu_) = 0;
  int releases_ GUARDED_BY(mu_) = 0;
};

}  // namespace millrace::testing
