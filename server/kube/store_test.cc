#include "server/kube/store.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::kube {
namespace {

std::shared_ptr<const CachedObject> Obj(const std::string& name, const std::string& uid,
                                        const std::string& rv, const std::string& owner = "") {
  Json object = {
      {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", uid}, {"resourceVersion", rv}}}};
  if (!owner.empty()) {
    object["metadata"]["ownerReferences"] = {
        {{"uid", owner}, {"kind", "Job"}, {"controller", true}}};
  }
  return CachedObject::FromJson(object, ObjectShape::kFull);
}

std::string Describe(const std::vector<Change>& changes) {
  std::string out;
  for (const Change& c : changes) {
    const auto& object = c.new_object ? c.new_object : c.old_object;
    out += std::string(EventTypeName(c.type)) + ":" + object->key() + "@" + object->uid() + " ";
  }
  return out;
}

TEST(StoreTest, ApplyFollowsWatchSemantics) {
  Store store;
  EXPECT_EQ(Describe(store.Apply(EventType::kAdded, Obj("a", "u1", "1"))), "ADDED:ns/a@u1 ");
  // ADDED for a known key is a modification; MODIFIED for an unknown key an addition.
  EXPECT_EQ(Describe(store.Apply(EventType::kAdded, Obj("a", "u1", "2"))), "MODIFIED:ns/a@u1 ");
  EXPECT_EQ(Describe(store.Apply(EventType::kModified, Obj("b", "u2", "3"))), "ADDED:ns/b@u2 ");
  // DELETED for an unknown key changes nothing.
  EXPECT_EQ(Describe(store.Apply(EventType::kDeleted, Obj("zzz", "u9", "4"))), "");
  // Same name, new UID: the old object is deleted, the new one added.
  EXPECT_EQ(Describe(store.Apply(EventType::kModified, Obj("a", "u3", "5"))),
            "DELETED:ns/a@u1 ADDED:ns/a@u3 ");
  EXPECT_EQ(store.GetByUid("u1"), nullptr);
  EXPECT_EQ(store.GetByUid("u3")->resource_version(), "5");
  EXPECT_EQ(Describe(store.Apply(EventType::kDeleted, Obj("b", "u2", "6"))), "DELETED:ns/b@u2 ");
  EXPECT_EQ(store.size(), 1u);
}

TEST(StoreTest, ReplaceEmitsDeletesForVanishedAndRecreatedObjects) {
  Store store;
  store.Replace({Obj("keep", "k1", "1"), Obj("same", "s1", "1"), Obj("gone", "g1", "1"),
                 Obj("recreated", "r1", "1")});
  std::vector<Change> changes = store.Replace({Obj("keep", "k1", "2"), Obj("same", "s1", "1"),
                                               Obj("recreated", "r2", "3"), Obj("new", "n1", "4")});
  EXPECT_EQ(Describe(changes),
            "DELETED:ns/gone@g1 MODIFIED:ns/keep@k1 DELETED:ns/recreated@r1 "
            "ADDED:ns/recreated@r2 ADDED:ns/new@n1 ");
  EXPECT_EQ(store.size(), 4u);
  EXPECT_EQ(store.Get("ns/gone"), nullptr);
}

TEST(StoreTest, IndexesByOwner) {
  Store store;
  store.Apply(EventType::kAdded, Obj("p1", "p1", "1", "job"));
  store.Apply(EventType::kAdded, Obj("p2", "p2", "1", "job"));
  store.Apply(EventType::kAdded, Obj("p3", "p3", "1", "other"));
  EXPECT_EQ(store.ListOwnedBy("job").size(), 2u);
  // Moving to another owner updates the index.
  store.Apply(EventType::kModified, Obj("p2", "p2", "2", "other"));
  EXPECT_EQ(store.ListOwnedBy("job").size(), 1u);
  EXPECT_EQ(store.ListOwnedBy("other").size(), 2u);
  store.Apply(EventType::kDeleted, Obj("p1", "p1", "3", "job"));
  EXPECT_TRUE(store.ListOwnedBy("job").empty());
}

// Readers hold objects while the writer replaces them: no torn reads, every
// snapshot is one of the complete states.
TEST(StoreTest, ReadersSeeConsistentSnapshotsWhileWriting) {
  Store store;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int round = 0; round < 300; ++round) {
      std::vector<std::shared_ptr<const CachedObject>> objects;
      for (int i = 0; i < 20; ++i) {
        objects.push_back(
            Obj("o" + std::to_string(i), "u" + std::to_string(i), std::to_string(round)));
      }
      store.Replace(std::move(objects));
    }
    done.store(true);
  });
  int snapshots = 0;
  while (!done.load()) {
    auto snapshot = store.List();
    if (snapshot.empty()) continue;
    ++snapshots;
    ASSERT_EQ(snapshot.size(), 20u);
    const std::string& version = snapshot[0]->resource_version();
    for (const auto& object : snapshot) ASSERT_EQ(object->resource_version(), version);
  }
  writer.join();
  EXPECT_GT(snapshots, 0);
}

// Compact pods share interned fragments, freed with their last holder. Two
// threads making and dropping pods with the same texts race the interning
// of a text against the release of its expiring fragment; under ASan a key
// left pointing into the released text is a use after free.
TEST(CachedObjectTest, FragmentsSurviveConcurrentInternAndRelease) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "p"},
                {"namespace", "ns"},
                {"uid", "u"},
                {"resourceVersion", "1"},
                {"labels", {{"role", "worker"}}}}},
              {"spec", {{"schedulerName", "default-scheduler"}}},
              {"status", {{"phase", "Running"}}}};
  const std::string expected =
      CachedObject::FromJson(pod, ObjectShape::kCompactPod)->Document()->dump();
  auto churn = [&] {
    for (int i = 0; i < 20000; ++i) {
      auto object = CachedObject::FromJson(pod, ObjectShape::kCompactPod);
      ASSERT_EQ(object->uid(), "u");
    }
  };
  std::thread other(churn);
  churn();
  other.join();
  EXPECT_EQ(CachedObject::FromJson(pod, ObjectShape::kCompactPod)->Document()->dump(), expected);
}

}  // namespace
}  // namespace wm::kube
