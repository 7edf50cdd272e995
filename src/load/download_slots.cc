#include "load/download_slots.h"

#include <algorithm>

namespace millrace::load {

DownloadSlots::DownloadSlots(int slots) : slots_(std::max(1, slots)), free_(slots_) {}

bool DownloadSlots::Acquire(const std::string& order, const std::atomic<bool>& cancelled) {
  MutexLock lock(&mu_);
  const auto mine = waiting_.insert(order);
  WaitOn(cv_, &mu_, [&]() NO_THREAD_SAFETY_ANALYSIS {
    return cancelled.load() || (free_ > 0 && *waiting_.begin() == order);
  });
  waiting_.erase(mine);
  // Whoever waits behind this one may now be first.
  cv_.notify_all();
  if (cancelled.load()) return false;
  --free_;
  return true;
}

void DownloadSlots::Release() {
  MutexLock lock(&mu_);
  ++free_;
  cv_.notify_all();
}

void DownloadSlots::Wake() {
  MutexLock lock(&mu_);
  cv_.notify_all();
}

}  // namespace millrace::load
