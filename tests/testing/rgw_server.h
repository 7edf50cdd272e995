// Test support: a real one-node Ceph RADOS Gateway (Debian ceph-mon, ceph-osd, radosgw) on
// loopback, for tests that need S3 with real signature checks and bucket notifications.
//
// Contract
// - Start fails with FAILED_PRECONDITION when ceph-mon, ceph-osd, radosgw or radosgw-admin is
//   missing (scripts/install_deps.sh installs them). Otherwise it makes a temporary directory
//   holding ceph.conf, the monitor's store, the logs and the sockets, and starts one monitor,
//   one OSD on memstore (in memory, capped at 512 MiB) and radosgw (beast) on three ports
//   free on 127.0.0.1 a moment ago, with cephx off (auth none) and every pool of size 1. It
//   returns once radosgw answers HTTP and the S3 user exists (access key kAccessKey, secret
//   kSecretKey, any region, path-style). It takes about 13 s, most of it radosgw's start.
//   On failure the error holds the tail of the daemons' logs.
// - The daemons are children of the test process started with -f; they die with the thread
//   that started them (PR_SET_PDEATHSIG), and the destructor kills them (SIGKILL: the OSD keeps
//   nothing worth a clean stop) and removes the directory.
// - Call sends one request signed with SigV4 by Millrace's own signer for `service` ("s3" or
//   "sns"), its payload hash the body's SHA-256; it returns the body of a 2xx answer, or
//   INTERNAL naming the request, the status and RGW's answer. The helpers are Calls:
//   CreateBucket, PutObject, CreateTopic (an SNS topic whose HTTP push endpoint is `push_url`;
//   returns the topic's ARN) and NotifyOnCreate (the bucket's notification configuration: every
//   ObjectCreated event of the bucket to the topic).
// - Thread-safety: Call and the helpers may be called concurrently.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "s3/sigv4.h"
#include "testing/temp_dir.h"

namespace millrace::testing {

class RgwServer {
 public:
  static constexpr char kAccessKey[] = "RGWTESTKEY";
  static constexpr char kSecretKey[] = "RGWTESTSECRET";

  static Result<std::unique_ptr<RgwServer>> Start();
  ~RgwServer();
  RgwServer(const RgwServer&) = delete;
  RgwServer& operator=(const RgwServer&) = delete;

  // "http://127.0.0.1:<port>"
  const std::string& endpoint() const { return endpoint_; }

  Result<std::string> Call(const std::string& service, const std::string& method,
                           const std::string& path, const s3::NameValues& query,
                           const std::string& body, const std::string& content_type = "");

  Status CreateBucket(const std::string& bucket);
  Status PutObject(const std::string& bucket, const std::string& key, const std::string& data);
  Result<std::string> CreateTopic(const std::string& name, const std::string& push_url);
  Status NotifyOnCreate(const std::string& bucket, const std::string& topic_arn);

 private:
  RgwServer() = default;
  // Starts one daemon, recorded for the destructor.
  Status Spawn(const std::string& name, const std::vector<std::string>& argv);
  // The `ceph` command line against this cluster.
  Result<std::string> Ceph(const std::vector<std::string>& args);
  std::string LogTails() const;

  TempDir dir_;
  std::string conf_;
  std::string endpoint_;
  int rgw_port_ = 0;
  std::vector<pid_t> pids_;
};

}  // namespace millrace::testing
