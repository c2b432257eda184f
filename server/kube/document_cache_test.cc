#include "server/kube/document_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"

namespace wm::kube {
namespace {

std::shared_ptr<const CachedObject> Pod(const std::string& name,
                                        const std::string& phase = "Running") {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", "ml"},
                {"uid", "uid-" + name},
                {"labels", {{"jobset.sigs.k8s.io/replicatedjob-name", "workers"}}}}},
              {"spec", {{"nodeName", "gpu-node-1"}}},
              {"status", {{"phase", phase}}}};
  auto object = CachedObject::FromJson(std::move(pod), ObjectShape::kCompactPod);
  EXPECT_NE(object, nullptr);
  return object;
}

TEST(DocumentCacheTest, KeepsTheTreeOfTheObjectItWasBuiltFor) {
  DocumentCache cache(1 << 20);
  auto pod = Pod("a");
  std::shared_ptr<const Json> first = cache.Document(pod);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(*first, *pod->Document());
  EXPECT_EQ(cache.Document(pod), first);  // the same tree, not a new one
  DocumentCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.trees, 1u);
  EXPECT_GT(stats.bytes, TreeBytes(*first));
}

TEST(DocumentCacheTest, ANewVersionOfAnObjectGetsItsOwnTree) {
  DocumentCache cache(1 << 20);
  auto running = Pod("a", "Running");
  auto done = Pod("a", "Succeeded");  // the same pod, changed: a new object
  EXPECT_EQ(FindString(*cache.Document(running), {"status", "phase"}), "Running");
  EXPECT_EQ(FindString(*cache.Document(done), {"status", "phase"}), "Succeeded");
  EXPECT_EQ(cache.stats().misses, 2u);
}

TEST(DocumentCacheTest, AnObjectGoneAndAnotherAtItsAddressIsNotConfused) {
  DocumentCache cache(1 << 20);
  // Two objects placed in turn at one address, as an allocator may reuse
  // a freed object's memory for the next: the second must get a tree of
  // its own, not the first's.
  alignas(CachedObject) unsigned char storage[sizeof(CachedObject)];
  auto at_storage = [&](const CachedObject& object) {
    return std::shared_ptr<const CachedObject>(new (storage) CachedObject(object),
                                               [](const CachedObject* o) { o->~CachedObject(); });
  };
  auto a = Pod("a"), b = Pod("b");
  {
    auto first = at_storage(*a);
    EXPECT_EQ(FindString(*cache.Document(first), {"metadata", "name"}), "a");
  }
  auto second = at_storage(*b);
  EXPECT_EQ(FindString(*cache.Document(second), {"metadata", "name"}), "b");
  EXPECT_EQ(cache.stats().misses, 2u);
  EXPECT_EQ(cache.stats().trees, 1u);  // the first's entry replaced, not kept beside
}

TEST(DocumentCacheTest, KeepsWithinItsBudgetLeastRecentlyUsedOut) {
  auto a = Pod("a"), b = Pod("b"), c = Pod("c");
  size_t one = TreeBytes(*a->Document());
  DocumentCache cache(2 * one + 2 * 512);  // two trees and their entries
  cache.Document(a);
  cache.Document(b);
  cache.Document(a);  // a used last: b goes first
  cache.Document(c);
  DocumentCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.trees, 2u);
  EXPECT_LE(stats.bytes, 2 * one + 2 * 512);
  uint64_t hits = stats.hits;
  cache.Document(a);
  EXPECT_EQ(cache.stats().hits, hits + 1);  // a was kept
  cache.Document(b);
  EXPECT_EQ(cache.stats().hits, hits + 1);  // b was not
}

TEST(DocumentCacheTest, ZeroBudgetAndFullObjectsKeepNothing) {
  DocumentCache none(0);
  auto pod = Pod("a");
  EXPECT_NE(none.Document(pod), none.Document(pod));
  EXPECT_EQ(none.stats().trees, 0u);
  DocumentCache cache(1 << 20);
  auto full = CachedObject::FromJson(
      {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "j"}, {"uid", "u"}}}},
      ObjectShape::kFull);
  EXPECT_EQ(cache.Document(full), full->Document());  // its own tree, passed through
  EXPECT_EQ(cache.stats().trees, 0u);
}

TEST(DocumentCacheTest, TreeBytesCountsStringsNodesAndArrays) {
  EXPECT_EQ(TreeBytes(Json(1)), 0u);
  EXPECT_EQ(TreeBytes(Json("short")), sizeof(std::string));
  EXPECT_GT(TreeBytes(Json(std::string(100, 'x'))), 100u);
  EXPECT_GT(TreeBytes(Json::parse(R"({"a": [1, 2, 3]})")), 3 * sizeof(Json));
}

// Resolver threads and RPC handlers share one cache: many threads asking
// for overlapping objects, with a budget small enough that trees are
// pushed out while others are being read (run under TSan in CI). Each
// object is asked for twice in a row, as a resolution asks for a pod's
// tree and the next resolution does again: the threads cycle over more
// objects than the budget holds, where the least recently used one is
// always the next asked for, so single asks alone would never hit.
TEST(DocumentCacheStressTest, ConcurrentReadersAgreeOnEveryTree) {
  std::vector<std::shared_ptr<const CachedObject>> pods;
  for (int i = 0; i < 64; ++i) pods.push_back(Pod(absl::StrCat("pod-", i)));
  DocumentCache cache(16 * TreeBytes(*pods[0]->Document()));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        for (size_t i = t; i < pods.size(); i += 3) {
          for (int ask = 0; ask < 2; ++ask) {
            auto tree = cache.Document(pods[i]);
            if (FindString(*tree, {"metadata", "name"}) != absl::StrCat("pod-", i)) ++wrong;
          }
        }
        if (round % 50 == 0) (void)cache.stats();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  DocumentCache::Stats stats = cache.stats();
  EXPECT_GT(stats.hits, 0u);
  EXPECT_GT(stats.misses, 64u);  // pushed out and built again
  EXPECT_LE(stats.trees, 16u);
}

}  // namespace
}  // namespace wm::kube
