// DownloadSlots: how many downloads of one job may be in flight at once, shared by the
// fetchers of a batch and of its read ahead (batch.h), and which of them goes first.
//
// Contract
// - At most `slots` Acquire calls hold a slot at once; Release gives one back.
// - A free slot goes to the waiter of the least `order` waiting (a batch's first key: an earlier
//   batch's downloads never wait behind a later one's); among equal orders, to the first come.
//   Only that waiter is woken.
// - Acquire returns false, holding nothing, once `cancelled` is true and Wake was called after
//   it was set.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
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

  // How many Acquire calls wait.
  size_t waiters() EXCLUDES(mu_);

 private:
  Mutex mu_;
  int free_ GUARDED_BY(mu_);
  // By order, then arrival (a multimap inserts after its equal keys); each waits on its own.
  std::multimap<std::string, std::condition_variable*> waiting_ GUARDED_BY(mu_);
  // Wakes the first waiter when a slot is free.
  void WakeFirst() REQUIRES(mu_);
};

}  // namespace millrace::load
