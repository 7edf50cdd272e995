#include "common/metrics.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace millrace {
namespace {

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

std::string FormatBound(double bound) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", bound);
  return buf;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double value) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket])
    ++bucket;
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot snapshot;
  snapshot.bounds = bounds_;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    snapshot.cumulative.push_back(running);
  }
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

void MetricsWriter::Family(std::string_view name, std::string_view help, std::string_view type) {
  out_ += "# HELP " + std::string(name) + " " + std::string(help) + "\n";
  out_ += "# TYPE " + std::string(name) + " " + std::string(type) + "\n";
}

void MetricsWriter::Sample(std::string_view name, const Labels& labels, double value) {
  if (keep_ && !keep_(labels)) return;
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      out_ +=
          (i == 0 ? "" : ",") + labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
    }
    out_ += '}';
  }
  out_ += " " + FormatValue(value) + "\n";
}

void MetricsWriter::Histogram(std::string_view name, const Labels& labels,
                              const Histogram::Snapshot& h) {
  const std::string base(name);
  for (size_t i = 0; i < h.cumulative.size(); ++i) {
    Labels bucket = labels;
    bucket.emplace_back("le", i < h.bounds.size() ? FormatBound(h.bounds[i]) : "+Inf");
    Sample(base + "_bucket", bucket, static_cast<double>(h.cumulative[i]));
  }
  Sample(base + "_sum", labels, h.sum);
  Sample(base + "_count", labels, static_cast<double>(h.cumulative.back()));
}

MetricsRegistry::Entry* MetricsRegistry::FindOrAddLocked(std::string_view name,
                                                         std::string_view help,
                                                         std::string_view type) {
  for (auto& entry : entries_) {
    if (entry->name == name) return entry.get();
  }
  auto entry = std::make_unique<Entry>();
  entry->name = std::string(name);
  entry->help = std::string(help);
  entry->type = std::string(type);
  entries_.push_back(std::move(entry));
  return entries_.back().get();
}

Counter* MetricsRegistry::AddCounter(std::string_view name, std::string_view help) {
  MutexLock lock(&mu_);
  Entry* entry = FindOrAddLocked(name, help, "counter");
  if (!entry->counter) entry->counter = std::make_unique<Counter>();
  return entry->counter.get();
}

Gauge* MetricsRegistry::AddGauge(std::string_view name, std::string_view help) {
  MutexLock lock(&mu_);
  Entry* entry = FindOrAddLocked(name, help, "gauge");
  if (!entry->gauge) entry->gauge = std::make_unique<Gauge>();
  return entry->gauge.get();
}

void MetricsRegistry::AddCallbackGauge(std::string_view name, std::string_view help,
                                       std::function<double()> read) {
  MutexLock lock(&mu_);
  FindOrAddLocked(name, help, "gauge")->read = std::move(read);
}

void MetricsRegistry::AddCollector(std::function<void(MetricsWriter&)> collect) {
  MutexLock lock(&mu_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::RenderPrometheus(const SampleFilter& keep) const {
  std::vector<std::function<void(MetricsWriter&)>> collectors;
  {
    MutexLock lock(&mu_);
    collectors = collectors_;
  }
  std::string out = RenderOwn();
  // Collectors may take their own locks and read databases: outside the registry's.
  MetricsWriter writer(keep);
  for (const auto& collect : collectors)
    collect(writer);
  return out + writer.Take();
}

std::string MetricsRegistry::RenderOwn() const {
  MutexLock lock(&mu_);
  std::string out;
  for (const auto& entry : entries_) {
    double value = 0;
    if (entry->counter) value = static_cast<double>(entry->counter->value());
    if (entry->gauge) value = static_cast<double>(entry->gauge->value());
    if (entry->read) value = entry->read();
    out += "# HELP " + entry->name + " " + entry->help + "\n";
    out += "# TYPE " + entry->name + " " + entry->type + "\n";
    out += entry->name + " " + FormatValue(value) + "\n";
  }
  return out;
}

double ProcessResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0;
  unsigned long resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

}  // namespace millrace
