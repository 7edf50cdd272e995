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

}  // namespace

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

std::string MetricsRegistry::RenderPrometheus() const {
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
