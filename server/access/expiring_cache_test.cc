#include "server/access/expiring_cache.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/common/testing/fake_clock.h"

namespace wm::access {
namespace {

using ::wm::testing::FakeClock;

TEST(ExpiringCacheTest, EntriesLiveForTheirOwnTimeToLive) {
  FakeClock clock;
  ExpiringCache<int> cache(10, clock.AsClock());
  cache.Put("short", 1, absl::Seconds(10));
  cache.Put("long", 2, absl::Minutes(5));
  EXPECT_EQ(cache.Get("short"), 1);
  EXPECT_EQ(cache.Get("long"), 2);
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(cache.Get("short"), std::nullopt);  // expired at exactly its ttl
  EXPECT_EQ(cache.Get("long"), 2);
  clock.Advance(absl::Minutes(5));
  EXPECT_EQ(cache.Get("long"), std::nullopt);
  EXPECT_EQ(cache.stats().size, 0u);  // expired entries are dropped
  EXPECT_EQ(cache.Get("never"), std::nullopt);
  ExpiringCache<int>::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.misses, 3u);
}

TEST(ExpiringCacheTest, PutReplacesTheValueAndItsExpiry) {
  FakeClock clock;
  ExpiringCache<std::string> cache(10, clock.AsClock());
  cache.Put("k", "allowed", absl::Minutes(5));
  cache.Put("k", "denied", absl::Seconds(30));
  clock.Advance(absl::Seconds(29));
  EXPECT_EQ(cache.Get("k"), "denied");
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(cache.Get("k"), std::nullopt);
}

TEST(ExpiringCacheTest, AtCapacityTheLeastRecentlyUsedEntryMakesRoom) {
  ExpiringCache<int> cache(3);
  cache.Put("a", 1, absl::Hours(1));
  cache.Put("b", 2, absl::Hours(1));
  cache.Put("c", 3, absl::Hours(1));
  EXPECT_EQ(cache.Get("a"), 1);  // now b is the least recently used
  cache.Put("d", 4, absl::Hours(1));
  EXPECT_EQ(cache.Get("b"), std::nullopt);
  EXPECT_EQ(cache.Get("a"), 1);
  EXPECT_EQ(cache.Get("c"), 3);
  EXPECT_EQ(cache.Get("d"), 4);
  EXPECT_EQ(cache.stats().size, 3u);
  EXPECT_EQ(cache.stats().evictions, 1u);
}

// For TSan: callers on many threads at once over a cache smaller than their
// keys, so that lookups, replacements, expiries and evictions interleave.
TEST(ExpiringCacheTest, ConcurrentCallersStayWithinCapacity) {
  ExpiringCache<std::string> cache(64);
  constexpr int kThreads = 4;
  constexpr int kOperations = 20000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOperations; ++i) {
        std::string key = absl::StrCat("k", (i * 7 + t) % 200);
        if (i % 3 == 0) {
          cache.Put(key, key, i % 2 ? absl::Hours(1) : absl::ZeroDuration());
        } else if (std::optional<std::string> value = cache.Get(key); value && *value != key) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  ExpiringCache<std::string>::Stats stats = cache.stats();
  EXPECT_LE(stats.size, 64u);
  EXPECT_GT(stats.hits, 0u);
  EXPECT_GT(stats.evictions, 0u);
}

}  // namespace
}  // namespace wm::access
