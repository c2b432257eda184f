#include "server/kube/cluster_view.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::kube {
namespace {

using ::testing::ElementsAre;

const Gvk kJobSet{"jobset.x-k8s.io", "v1alpha2", "JobSet"};
const Gvk kJob{"batch", "v1", "Job"};
const Gvk kConfigMap{"", "v1", "ConfigMap"};

// An object in namespace "ns" whose uid is its name, owned by `owner`.
Json Object(const std::string& name, const std::string& owner = "", bool controller = true) {
  Json object = {{"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", name}}}};
  if (!owner.empty()) {
    object["metadata"]["ownerReferences"] = {
        {{"uid", owner}, {"kind", "Owner"}, {"name", owner}, {"controller", controller}}};
  }
  return object;
}

std::shared_ptr<const CachedObject> Get(const ClusterView& view, const Gvk& gvk,
                                        const std::string& name) {
  return view.StoreFor(gvk)->Get("ns/" + name);
}

// The owners ForEachControllerOwner visits, as "Kind name", stopping after
// `limit` of them.
std::vector<std::string> Chain(const ClusterView& view, const CachedObject& object,
                               int limit = 100) {
  std::vector<std::string> out;
  view.ForEachControllerOwner(object, [&](const ClusterView::Found& owner) {
    out.push_back(absl::StrCat(owner.gvk.kind, " ", owner.object->key()));
    return static_cast<int>(out.size()) < limit;
  });
  return out;
}

TEST(GvkFromApiVersionTest, SplitsGroupAndVersion) {
  EXPECT_EQ(GvkFromApiVersion("jobset.x-k8s.io/v1alpha2", "JobSet"), kJobSet);
  EXPECT_EQ(GvkFromApiVersion("batch/v1", "Job"), kJob);
  EXPECT_EQ(GvkFromApiVersion("v1", "Pod"), PodGvk());
  EXPECT_EQ(GvkFromApiVersion("v1", "Pod").ToString(), "v1/Pod");
  // Only the first slash separates the group.
  EXPECT_EQ(GvkFromApiVersion("a/b/c", "K"), (Gvk{"a", "b/c", "K"}));
}

class ControllerChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    view_.Add(kJobSet, Object("demo"));
    view_.Add(kJob, Object("demo-worker", "demo"));
    view_.Add(PodGvk(), Object("demo-worker-0", "demo-worker"));
  }

  StaticCluster view_;
};

TEST_F(ControllerChainTest, VisitsOwnersNearestFirst) {
  EXPECT_THAT(Chain(view_, *Get(view_, PodGvk(), "demo-worker-0")),
              ElementsAre("Job ns/demo-worker", "JobSet ns/demo"));
  EXPECT_THAT(Chain(view_, *Get(view_, kJob, "demo-worker")), ElementsAre("JobSet ns/demo"));
  EXPECT_THAT(Chain(view_, *Get(view_, kJobSet, "demo")), ElementsAre());
  ClusterView::Found top = view_.TopOwner(PodGvk(), Get(view_, PodGvk(), "demo-worker-0"));
  EXPECT_EQ(top.gvk, kJobSet);
  EXPECT_EQ(top.object->key(), "ns/demo");
  top = view_.TopOwner(kJobSet, Get(view_, kJobSet, "demo"));
  EXPECT_EQ(top.gvk, kJobSet);
  EXPECT_EQ(top.object->key(), "ns/demo");
}

TEST_F(ControllerChainTest, StopsWhenTheVisitorSaysSo) {
  EXPECT_THAT(Chain(view_, *Get(view_, PodGvk(), "demo-worker-0"), 1),
              ElementsAre("Job ns/demo-worker"));
}

TEST_F(ControllerChainTest, StopsAtOwnersNotHeldAndOwnersNotControllers) {
  view_.Add(PodGvk(), Object("orphan", "gone"));
  view_.Add(PodGvk(), Object("borrowed", "demo-worker", /*controller=*/false));
  EXPECT_THAT(Chain(view_, *Get(view_, PodGvk(), "orphan")), ElementsAre());
  EXPECT_THAT(Chain(view_, *Get(view_, PodGvk(), "borrowed")), ElementsAre());
  EXPECT_EQ(view_.TopOwner(PodGvk(), Get(view_, PodGvk(), "orphan")).object->key(), "ns/orphan");
}

TEST_F(ControllerChainTest, StopsAtCyclesAndAfterEightSteps) {
  view_.Add(kConfigMap, Object("a", "b"));
  view_.Add(kConfigMap, Object("b", "a"));
  EXPECT_THAT(Chain(view_, *Get(view_, kConfigMap, "a")), ElementsAre("ConfigMap ns/b"));
  EXPECT_EQ(view_.TopOwner(kConfigMap, Get(view_, kConfigMap, "a")).object->key(), "ns/b");

  // c0 is owned by c1, ..., c9 by nobody.
  for (int i = 0; i < 10; ++i) {
    view_.Add(kConfigMap,
              Object(absl::StrCat("c", i), i < 9 ? absl::StrCat("c", i + 1) : std::string()));
  }
  EXPECT_EQ(Chain(view_, *Get(view_, kConfigMap, "c0")).size(), 8u);
  EXPECT_EQ(view_.TopOwner(kConfigMap, Get(view_, kConfigMap, "c0")).object->key(), "ns/c8");
}

}  // namespace
}  // namespace wm::kube
