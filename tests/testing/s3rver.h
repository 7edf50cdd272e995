// Test support: the real s3rver (npm s3rver@3.7.1) as a child process, and the process
// helpers it needs (also used to run the millrace binary and curl from tests).
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
#include "testing/temp_dir.h"

namespace millrace::s3 {
class S3Transport;
}

namespace millrace::testing {

// Starts argv[0] (looked up in PATH) with the current environment plus `extra_env`
// ("NAME=value", replacing variables of the same name); stdout and stderr go to the files
// given ("" keeps the parent's). The child is killed when the calling thread exits.
Result<pid_t> SpawnProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env,
                           const std::string& stdout_path, const std::string& stderr_path);

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// Waits up to `timeout` for the child `pid`; true (with its wait status) once it exited.
bool WaitForExit(pid_t pid, std::chrono::milliseconds timeout, int* wait_status);
// The exit code of a wait status: the code, or 128 + the signal number when killed.
int ExitCode(int wait_status);
// The whole content of a file; "" when it cannot be read.
std::string ReadFile(const std::string& path);

// Runs argv to completion (killing it after `timeout`) and returns its exit code and output.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& extra_env = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60));

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
