// EventIntake: news that jobs may have work, turned into wake-ups (JobService::Wake), and
// counted. Events only wake: a woken job still lists after its offset before it loads, and
// polls every max_interval, so a lost or forged event costs at most latency or one listing.
//
// Contract
// - Local(path, directory): a local watcher's event (source/local_watcher.h); counted as
//   received, and as matched when it woke a job.
// - S3(body, secret): a POST /api/s3-events, the S3 event notification JSON Ceph RGW and MinIO
//   push ({"Records":[{"eventName", "s3":{"bucket":{"name"}, "object":{"key", "size",
//   "eTag"}}}]}; keys URL-encoded as S3 encodes them, '+' a space). The secret must equal the
//   s3.event_secret of some job (compared in constant time with each): else 403, counted as
//   rejected, and nothing is woken. Then each object-created record wakes the jobs of that
//   secret whose source covers "s3://bucket/key" (counted as matched), or none (counted as
//   unmatched); other records (removals, tests) are skipped. A body that is not such JSON is
//   400 naming what is wrong. The answer is JSON: {"matched":n,"unmatched":m}.
// - AWS SNS's envelope and its subscription handshake are not read (docs/jobs.md).
// - Thread-safety: any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/metrics.h"
#include "common/result.h"

namespace millrace::job {

class JobService;

struct EventAnswer {
  int status = 200;
  std::string body;  // JSON
};

// The objects created according to an S3 event notification, as "s3://bucket/key".
Result<std::vector<std::string>> ParseS3Events(std::string_view body);

class EventIntake {
 public:
  // `service` and `metrics` (may be null) are borrowed and must outlive the intake.
  EventIntake(JobService* service, MetricsRegistry* metrics);

  void Local(const std::string& path, bool directory);
  EventAnswer S3(std::string_view body, std::string_view secret);

 private:
  static void Count(Counter* counter, int64_t n = 1) {
    if (counter != nullptr && n > 0) counter->Add(n);
  }

  JobService* const service_;
  Counter* received_ = nullptr;
  Counter* matched_ = nullptr;
  Counter* rejected_ = nullptr;
  Counter* unmatched_ = nullptr;
};

}  // namespace millrace::job
