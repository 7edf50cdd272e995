// Test support: the real s3rver (npm s3rver@3.7.1) as a child process. The process helpers
// (SpawnProcess, RunProcess, ...) are in testing/server_process.h, included here for the tests
// that use both.
//
// Contract
// - S3rver::Start runs `node .../s3rver/bin/s3rver.js` on 127.0.0.1 with port 0 (the kernel
//   picks a free port, which s3rver prints, so there is no race for it), data in a fresh
//   temporary directory, NODE_OPTIONS=--openssl-legacy-provider (Node >= 17 needs it for
//   paginated listings), `--service-endpoint localhost` (so http://<bucket>.s3.localhost:<port>
//   reaches the bucket virtual-hosted), and the given buckets created at start-up. It returns
//   once the server prints that it listens, or fails with the server's output.
// - s3rver checks the access key (S3RVER) but not signatures; credentials are S3RVER/S3RVER.
// - The destructor stops the server (SIGTERM, then SIGKILL after 5 s) and removes its data.
//   The child also dies with the test process (PR_SET_PDEATHSIG).
// - Put/Create/Delete go through Millrace's own S3 transport (signed, path-style) and stream
//   their bodies: a large object never sits in memory.
// - Thread-safety: the helper methods may be called concurrently.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "s3/s3_client.h"
#include "testing/server_process.h"
#include "testing/temp_dir.h"

namespace millrace::s3 {
class S3Transport;
}

namespace millrace::testing {

class S3rver {
 public:
  static constexpr char kAccessKey[] = "S3RVER";
  static constexpr char kSecretKey[] = "S3RVER";

  static Result<std::unique_ptr<S3rver>> Start(const std::vector<std::string>& buckets = {});
  ~S3rver();
  S3rver(const S3rver&) = delete;
  S3rver& operator=(const S3rver&) = delete;

  // "http://127.0.0.1:<port>"
  const std::string& endpoint() const { return endpoint_; }
  uint16_t port() const { return port_; }
  // The s3rver (node) process, e.g. for benchmarks that account for the store's CPU time.
  pid_t pid() const { return pid_; }
  // A client configuration for this server: path-style, us-east-1, the S3RVER credentials,
  // and a retry policy that gives up within seconds.
  s3::S3Config Config() const;
  // The same, addressing buckets virtual-hosted through http://s3.localhost:<port>.
  s3::S3Config VirtualHostConfig() const;

  Status CreateBucket(const std::string& bucket);
  Status PutObject(const std::string& bucket, const std::string& key, std::string_view data);
  // Puts `size` bytes produced piecewise by fill(offset, buffer, length).
  Status PutGenerated(const std::string& bucket, const std::string& key, uint64_t size,
                      const std::function<void(uint64_t offset, char* buf, size_t len)>& fill);
  // Puts many small objects, four at a time (s3rver takes milliseconds per PUT).
  Status PutObjects(const std::string& bucket,
                    const std::vector<std::pair<std::string, std::string>>& objects);
  Status DeleteObject(const std::string& bucket, const std::string& key);

 private:
  S3rver() = default;
  Status Send(const std::string& op, const std::string& method, const std::string& bucket,
              const std::string& key, uint64_t size,
              std::function<size_t(char* buf, size_t len)> reader);

  TempDir dir_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string endpoint_;
  std::unique_ptr<s3::S3Transport> transport_;
};

}  // namespace millrace::testing
