// Metrics: counters and gauges that any module updates and /metrics exposes in the Prometheus
// text format (version 0.0.4).
//
// Contract
// - A MetricsRegistry owns its metrics; the pointers it hands out stay valid for its lifetime.
//   Registering a name twice returns the existing metric (names are unique per registry).
// - Counter only goes up; Gauge goes up and down; a callback gauge is read when rendered.
// - Histogram counts observations into cumulative buckets (Prometheus' `le` buckets, +Inf
//   last) with their sum.
// - A collector (AddCollector) writes labelled families when rendered, after the registry's
//   own metrics, in registration order: the series it writes are exactly those of its state
//   at that moment (a series of a dropped object is gone at the next scrape). Label values are
//   escaped (backslash, double quote, newline).
// - Thread-safety: every method may be called concurrently; updates are lock-free atomics.
//   Collectors run on the rendering thread, under no registry lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"

namespace millrace {

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Upper bounds (seconds) for durations from milliseconds to minutes.
inline constexpr double kDurationBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                              1,     2.5,  5,     10,   30,  60,   300};

class Histogram {
 public:
  // `bounds` ascending; an implicit +Inf bucket follows.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (= count)
    double sum = 0;
  };
  Snapshot Read() const;

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // per bucket (not cumulative), +Inf last
  std::atomic<double> sum_{0};
};

using Labels = std::vector<std::pair<std::string, std::string>>;

// Which labelled samples a render keeps (RenderPrometheus); all when empty.
using SampleFilter = std::function<bool(const Labels& labels)>;

// What a collector writes: families, each with its samples.
class MetricsWriter {
 public:
  MetricsWriter() = default;
  // Samples `keep` refuses are left out (a family's HELP and TYPE stay).
  explicit MetricsWriter(SampleFilter keep) : keep_(std::move(keep)) {}
  // Starts a family (its HELP and TYPE lines); `type` is counter, gauge or histogram.
  void Family(std::string_view name, std::string_view help, std::string_view type);
  // One sample of the current family; `name` is the family's (with _bucket, _sum or _count for
  // a histogram's).
  void Sample(std::string_view name, const Labels& labels, double value);
  // A histogram's samples under the current family `name`.
  void Histogram(std::string_view name, const Labels& labels, const Histogram::Snapshot& h);

  std::string Take() { return std::move(out_); }

 private:
  SampleFilter keep_;
  std::string out_;
};

class MetricsRegistry {
 public:
  // `name` must match [a-zA-Z_:][a-zA-Z0-9_:]*; by convention counters end in "_total".
  Counter* AddCounter(std::string_view name, std::string_view help) EXCLUDES(mu_);
  Gauge* AddGauge(std::string_view name, std::string_view help) EXCLUDES(mu_);
  // A gauge whose value is computed when rendered (e.g. resident memory).
  void AddCallbackGauge(std::string_view name, std::string_view help, std::function<double()> read)
      EXCLUDES(mu_);

  // Writes labelled families at each render (see the contract above).
  void AddCollector(std::function<void(MetricsWriter&)> collect) EXCLUDES(mu_);

  // Every metric in registration order, then the collectors' families, as Prometheus text;
  // the collectors' samples `keep` refuses are left out (the HTTP server shows a user only the
  // series of the jobs it may see).
  std::string RenderPrometheus(const SampleFilter& keep = {}) const EXCLUDES(mu_);

 private:
  struct Entry {
    std::string name;
    std::string help;
    std::string type;  // "counter" or "gauge"
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::function<double()> read;
  };
  Entry* FindOrAddLocked(std::string_view name, std::string_view help, std::string_view type)
      REQUIRES(mu_);
  std::string RenderOwn() const EXCLUDES(mu_);

  mutable Mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_ GUARDED_BY(mu_);
  std::vector<std::function<void(MetricsWriter&)>> collectors_ GUARDED_BY(mu_);
};

// Resident set size of this process in bytes (from /proc/self/statm); 0 when unknown.
double ProcessResidentBytes();

}  // namespace millrace
