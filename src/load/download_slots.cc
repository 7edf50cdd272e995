#include "load/download_slots.h"

#include <algorithm>

namespace millrace::load {

DownloadSlots::DownloadSlots(int slots) : free_(std::max(1, slots)) {}

bool DownloadSlots::Acquire(const std::string& order, const std::atomic<bool>& cancelled) {
  std::condition_variable mine;
  MutexLock lock(&mu_);
  const auto me = waiting_.emplace(order, &mine);
  WaitOn(mine, &mu_, [&]() NO_THREAD_SAFETY_ANALYSIS {
    return cancelled.load() || (free_ > 0 && waiting_.begin() == me);
  });
  waiting_.erase(me);
  if (cancelled.load()) {
    WakeFirst();  // it may have been woken for a slot it does not take
    return false;
  }
  --free_;
  WakeFirst();
  return true;
}

void DownloadSlots::Release() {
  MutexLock lock(&mu_);
  ++free_;
  WakeFirst();
}

void DownloadSlots::Wake() {
  MutexLock lock(&mu_);
  for (auto& [order, cv] : waiting_)
    cv->notify_one();
}

size_t DownloadSlots::waiters() {
  MutexLock lock(&mu_);
  return waiting_.size();
}

void DownloadSlots::WakeFirst() {
  if (free_ > 0 && !waiting_.empty()) waiting_.begin()->second->notify_one();
}

}  // namespace millrace::load
