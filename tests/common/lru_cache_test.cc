#include "common/lru_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace millrace {
namespace {

std::shared_ptr<const int> Int(int v) {
  return std::make_shared<const int>(v);
}

TEST(LruCacheTest, TheLeastRecentlyUsedEntryGoesFirst) {
  LruCache<int> cache(2);
  cache.Insert("a", Int(1));
  cache.Insert("b", Int(2));
  ASSERT_NE(cache.Find("a"), nullptr);  // a is now more recent than b
  cache.Insert("c", Int(3));
  EXPECT_EQ(cache.Find("b"), nullptr);
  EXPECT_EQ(*cache.Find("a"), 1);
  EXPECT_EQ(*cache.Find("c"), 3);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(LruCacheTest, InsertReplacesAndAValueOutlivesItsEviction) {
  LruCache<int> cache(1);
  cache.Insert("a", Int(1));
  std::shared_ptr<const int> held = cache.Find("a");
  cache.Insert("a", Int(10));
  EXPECT_EQ(*cache.Find("a"), 10);
  EXPECT_EQ(cache.size(), 1u);
  cache.Insert("b", Int(2));
  EXPECT_EQ(cache.Find("a"), nullptr);
  EXPECT_EQ(*held, 1);
  LruCache<int> none(0);
  none.Insert("a", Int(1));
  EXPECT_EQ(none.Find("a"), nullptr);
}

TEST(LruCacheTest, ConcurrentFindsAndInsertsKeepItsBound) {
  LruCache<int> cache(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = std::to_string((i * 7 + t) % 20);
        if (auto found = cache.Find(key)) {
          EXPECT_EQ(std::to_string(*found), key);
        } else {
          cache.Insert(key, Int(std::stoi(key)));
        }
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(cache.size(), 8u);
}

}  // namespace
}  // namespace millrace
