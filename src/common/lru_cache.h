// LruCache: at most `capacity` values by string key; the least recently found or inserted goes
// first when a new key needs room.
//
// Contract
// - Values are shared, immutable once inserted: Find hands out the pointer, which stays valid
//   after the entry is evicted.
// - Only what is a function of the key alone belongs here (a parse of a statement's text, not
//   a decision about who runs it).
// - Thread-safety: every method may be called concurrently.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/thread_annotations.h"

namespace millrace {

template <typename V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}
  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  // The value of `key`, now the most recent; null when absent.
  std::shared_ptr<const V> Find(std::string_view key) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Sets `key`'s value (replacing one it had), evicting the least recent entry when full.
  void Insert(std::string key, std::shared_ptr<const V> value) EXCLUDES(mu_) {
    if (capacity_ == 0) return;
    MutexLock lock(&mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    if (order_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(std::move(key), std::move(value));
    // The index's keys view the list's strings, which a list node never moves.
    index_.emplace(order_.front().first, order_.begin());
  }

  size_t size() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return order_.size();
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const V>>;

  const size_t capacity_;
  mutable Mutex mu_;
  std::list<Entry> order_ GUARDED_BY(mu_);  // most recent first
  std::unordered_map<std::string_view, typename std::list<Entry>::iterator> index_ GUARDED_BY(mu_);
};

}  // namespace millrace
