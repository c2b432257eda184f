#include "server/rpc/kind_names.h"

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/expressions/jq_engine.h"
#include "server/kube/cluster_view.h"

namespace wm::rpc {
namespace {

using ::wm::index::Cluster;

namespace v1 = workloadmap::v1;
using ::testing::HasSubstr;

// A cluster over a StaticCluster whose kinds and definitions a test changes.
class FakeCluster final : public Cluster {
 public:
  const std::string& name() const override { return name_; }
  const kube::ClusterView& view() const override { return view_; }
  std::shared_ptr<const definitions::Registry> definitions() const override { return registry_; }
  std::vector<definitions::Registry::Rejected> rejected_definitions() const override { return {}; }
  bool InitialSyncDone() const override { return true; }
  std::string KindProblem(const kube::Gvk&) const override { return ""; }
  std::string Resource(const kube::Gvk& gvk) const override {
    return gvk.kind == "Gadget" ? "gadgetries" : "";  // an irregular plural the cluster knows
  }
  absl::StatusOr<std::string> Patch(const kube::Gvk&, const std::string&, const std::string&,
                                    const Json&) override {
    return absl::UnimplementedError("read-only");
  }

  // Holds a kind (with one object of it).
  void Hold(const kube::Gvk& gvk) {
    view_.Add(gvk, Json{{"apiVersion", gvk.group + "/" + gvk.version},
                        {"kind", gvk.kind},
                        {"metadata",
                         {{"name", "x"}, {"namespace", "default"}, {"uid", gvk.ToString()}}}});
  }
  void SetDefinitions(std::shared_ptr<const definitions::Registry> registry) {
    registry_ = std::move(registry);
  }

 private:
  const std::string name_ = "test";
  kube::StaticCluster view_;
  std::shared_ptr<const definitions::Registry> registry_;
};

std::shared_ptr<const definitions::Registry> Catalog() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 1}).value().release();
  auto registry = std::make_shared<definitions::Registry>(*engine);
  absl::Status s = registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
  EXPECT_TRUE(s.ok()) << s;
  return registry;
}

v1::ObjectRef Ref(const std::string& kind, const std::string& resource,
                  const std::string& group = "", const std::string& version = "") {
  v1::ObjectRef ref;
  ref.set_kind(kind);
  ref.set_resource(resource);
  ref.set_group(group);
  ref.set_version(version);
  ref.set_name("x");
  return ref;
}

std::string Named(const KindNames& names, const v1::ObjectRef& ref) {
  auto gvk = names.Resolve(ref, "ref");
  return gvk.ok() ? gvk->ToString() : std::string(gvk.status().ToString());
}

const kube::Gvk kWidgetV1{"example.com", "v1", "Widget"};
const kube::Gvk kWidgetV2{"example.com", "v2", "Widget"};
const kube::Gvk kOtherWidget{"other.io", "v1", "Widget"};
const kube::Gvk kGadget{"example.com", "v1", "Gadget"};

TEST(KindNamesTest, NamesAKindByKindResourceOrSingular) {
  FakeCluster cluster;
  cluster.Hold(kWidgetV1);
  cluster.Hold(kGadget);
  auto names = KindNames::Build(cluster);
  EXPECT_EQ(Named(*names, Ref("Widget", "")), "example.com/v1/Widget");
  EXPECT_EQ(Named(*names, Ref("", "widgets")), "example.com/v1/Widget");  // guessed plural
  EXPECT_EQ(Named(*names, Ref("", "Widget")), "example.com/v1/Widget");   // singular, any case
  EXPECT_EQ(Named(*names, Ref("", "gadgetries")), "example.com/v1/Gadget");
  EXPECT_EQ(Named(*names, Ref("", "gadgets")).substr(0, 19), "FAILED_PRECONDITION");
  EXPECT_EQ(Named(*names, Ref("Widget", "", "example.com", "v1")), "example.com/v1/Widget");
  EXPECT_THAT(Named(*names, Ref("Widget", "", "", "v9")),
              HasSubstr("ref: no definition covers kind \"Widget\" in cluster test"));
  EXPECT_THAT(Named(*names, Ref("", "")), HasSubstr("ref: kind or resource is required"));

  EXPECT_TRUE(names->Matches(kGadget, "Gadget"));
  EXPECT_TRUE(names->Matches(kGadget, "example.com/Gadget"));
  EXPECT_TRUE(names->Matches(kGadget, "gadgetries"));
  EXPECT_TRUE(names->Matches(kGadget, "gadget.example.com"));
  EXPECT_FALSE(names->Matches(kGadget, "gadgets"));
  EXPECT_FALSE(names->Matches(kGadget, "Widget"));
}

TEST(KindNamesTest, SeveralGroupsNeedAGroupAndTheHeldVersionWins) {
  FakeCluster cluster;
  cluster.Hold(kWidgetV2);
  cluster.Hold(kOtherWidget);
  auto names = KindNames::Build(cluster);
  EXPECT_THAT(Named(*names, Ref("Widget", "")),
              HasSubstr("kind \"Widget\" is in groups example.com, other.io; set group"));
  EXPECT_EQ(Named(*names, Ref("Widget", "", "other.io")), "other.io/v1/Widget");

  // A definition's root kind is named even when the cluster does not hold
  // it; of a definition's version and a held one, the held one.
  cluster.SetDefinitions(Catalog());
  names = KindNames::Build(cluster);
  EXPECT_EQ(Named(*names, Ref("JobSet", "")), "jobset.x-k8s.io/v1alpha2/JobSet");
  EXPECT_EQ(Named(*names, Ref("", "jobsets")), "jobset.x-k8s.io/v1alpha2/JobSet");
  kube::Gvk held_jobset{"jobset.x-k8s.io", "v1alpha9", "JobSet"};
  cluster.Hold(held_jobset);
  names = KindNames::Build(cluster);
  EXPECT_EQ(Named(*names, Ref("JobSet", "")), held_jobset.ToString());
}

TEST(KindNamesCacheTest, RebuildsWhenKindsOrDefinitionsChange) {
  FakeCluster cluster;
  cluster.Hold(kWidgetV1);
  KindNamesCache cache;
  std::shared_ptr<const KindNames> first = cache.For(cluster);
  EXPECT_EQ(cache.For(cluster), first);  // unchanged: the same names
  EXPECT_TRUE(first->Current(cluster));

  cluster.Hold(kGadget);  // a new kind held
  EXPECT_FALSE(first->Current(cluster));
  std::shared_ptr<const KindNames> second = cache.For(cluster);
  EXPECT_NE(second, first);
  EXPECT_EQ(Named(*second, Ref("Gadget", "")), "example.com/v1/Gadget");
  EXPECT_EQ(cache.For(cluster), second);

  cluster.SetDefinitions(Catalog());  // new definitions
  std::shared_ptr<const KindNames> third = cache.For(cluster);
  EXPECT_NE(third, second);
  EXPECT_EQ(Named(*third, Ref("", "jobsets")), "jobset.x-k8s.io/v1alpha2/JobSet");
}

}  // namespace
}  // namespace wm::rpc
