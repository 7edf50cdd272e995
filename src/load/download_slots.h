// DownloadSlots: how many downloads of one job may be in flight at once, shared by the
// fetchers of a batch and of its read ahead (batch.h), and which of them goes first.
//
// Contract
// - At most `slots` Acquire calls hold a slot at once; Release gives one back.
// - A free slot goes to a waiter of the least `order` waiting (a batch's first key: an earlier
//   batch's downloads never wait behind a later one's); among equal orders, to any of them.
// - Acquire returns false, holding nothing, once `cancelled` is true and Wake was called after
//   it was set.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <set>
#include <string>

#include "common/thread_annotations.h"

namespace millrace::load {

class DownloadSlots {
 public:
  explicit DownloadSlots(int slots);
  DownloadSlots(const DownloadSlots&) = delete;
  DownloadSlots& operator=(const DownloadSlots&) = delete;

  bool Acquire(const std::string& order, const std::atomic<bool>& cancelled) EXCLUDES(mu_);
  void Release() EXCLUDES(mu_);
  // Wakes the waiters, so that one whose `cancelled` was set returns.
  void Wake() EXCLUDES(mu_);

  int slots() const { return slots_; }

 private:
  const int slots_;
  Mutex mu_;
  std::condition_variable cv_;
  int free_ GUARDED_BY(mu_);
  std::multiset<std::string> waiting_ GUARDED_BY(mu_);
};

}  // namespace millrace::load
