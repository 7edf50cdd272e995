// Metrics: counters and gauges that any module updates and /metrics exposes in the Prometheus
// text format (version 0.0.4).
//
// Contract
// - A MetricsRegistry owns its metrics; the pointers it hands out stay valid for its lifetime.
//   Registering a name twice returns the existing metric (names are unique per registry).
// - Counter only goes up; Gauge goes up and down; a callback gauge is read when rendered.
// - Thread-safety: every method may be called concurrently; updates are lock-free atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
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

class MetricsRegistry {
 public:
  // `name` must match [a-zA-Z_:][a-zA-Z0-9_:]*; by convention counters end in "_total".
  Counter* AddCounter(std::string_view name, std::string_view help) EXCLUDES(mu_);
  Gauge* AddGauge(std::string_view name, std::string_view help) EXCLUDES(mu_);
  // A gauge whose value is computed when rendered (e.g. resident memory).
  void AddCallbackGauge(std::string_view name, std::string_view help, std::function<double()> read)
      EXCLUDES(mu_);

  // Every metric in registration order, as Prometheus text.
  std::string RenderPrometheus() const EXCLUDES(mu_);

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

  mutable Mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_ GUARDED_BY(mu_);
};

// Resident set size of this process in bytes (from /proc/self/statm); 0 when unknown.
double ProcessResidentBytes();

}  // namespace millrace
