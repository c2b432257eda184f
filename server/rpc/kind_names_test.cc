#include "server/rpc/kind_names.h"

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/expressions/jq_engine.h"
#include "server/index/testing/fake_cluster.h"

namespace wm::rpc {
namespace {

using ::wm::index::testing::FakeCluster;

namespace v1 = workloadmap::v1;
using ::testing::HasSubstr;

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

// Holds a kind in `cluster` (with one object of it).
void Hold(FakeCluster& cluster, const Gvk& gvk) {
  cluster.Put(
      Json{{"apiVersion", gvk.ApiVersion()},
           {"kind", gvk.kind},
           {"metadata", {{"name", "x"}, {"namespace", "default"}, {"uid", gvk.ToString()}}}});
}

std::string Named(const KindNames& names, const v1::ObjectRef& ref) {
  auto gvk = names.Resolve(ref, "ref");
  return gvk.ok() ? gvk->ToString() : std::string(gvk.status().ToString());
}

const Gvk kWidgetV1{"example.com", "v1", "Widget"};
const Gvk kWidgetV2{"example.com", "v2", "Widget"};
const Gvk kOtherWidget{"other.io", "v1", "Widget"};
const Gvk kGadget{"example.com", "v1", "Gadget"};

// A cluster holding no kind yet, whose Gadgets have an irregular plural.
class KindNamesTest : public ::testing::Test {
 protected:
  KindNamesTest() { cluster_.SetResource("Gadget", "gadgetries"); }

  FakeCluster cluster_{nullptr};
};
using KindNamesCacheTest = KindNamesTest;

TEST_F(KindNamesTest, NamesAKindByKindResourceOrSingular) {
  Hold(cluster_, kWidgetV1);
  Hold(cluster_, kGadget);
  auto names = KindNames::Build(cluster_);
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

TEST_F(KindNamesTest, SeveralGroupsNeedAGroupAndTheHeldVersionWins) {
  Hold(cluster_, kWidgetV2);
  Hold(cluster_, kOtherWidget);
  auto names = KindNames::Build(cluster_);
  EXPECT_THAT(Named(*names, Ref("Widget", "")),
              HasSubstr("kind \"Widget\" is in groups example.com, other.io; set group"));
  EXPECT_EQ(Named(*names, Ref("Widget", "", "other.io")), "other.io/v1/Widget");

  // A definition's root kind is named even when the cluster does not hold
  // it; of a definition's version and a held one, the held one.
  cluster_.SetDefinitions(Catalog());
  names = KindNames::Build(cluster_);
  EXPECT_EQ(Named(*names, Ref("JobSet", "")), "jobset.x-k8s.io/v1alpha2/JobSet");
  EXPECT_EQ(Named(*names, Ref("", "jobsets")), "jobset.x-k8s.io/v1alpha2/JobSet");
  Gvk held_jobset{"jobset.x-k8s.io", "v1alpha9", "JobSet"};
  Hold(cluster_, held_jobset);
  names = KindNames::Build(cluster_);
  EXPECT_EQ(Named(*names, Ref("JobSet", "")), held_jobset.ToString());
}

TEST_F(KindNamesCacheTest, RebuildsWhenKindsOrDefinitionsChange) {
  Hold(cluster_, kWidgetV1);
  KindNamesCache cache;
  std::shared_ptr<const KindNames> first = cache.For(cluster_);
  EXPECT_EQ(cache.For(cluster_), first);  // unchanged: the same names
  EXPECT_TRUE(first->Current(cluster_));

  Hold(cluster_, kGadget);  // a new kind held
  EXPECT_FALSE(first->Current(cluster_));
  std::shared_ptr<const KindNames> second = cache.For(cluster_);
  EXPECT_NE(second, first);
  EXPECT_EQ(Named(*second, Ref("Gadget", "")), "example.com/v1/Gadget");
  EXPECT_EQ(cache.For(cluster_), second);

  cluster_.SetDefinitions(Catalog());  // new definitions
  std::shared_ptr<const KindNames> third = cache.For(cluster_);
  EXPECT_NE(third, second);
  EXPECT_EQ(Named(*third, Ref("", "jobsets")), "jobset.x-k8s.io/v1alpha2/JobSet");
}

}  // namespace
}  // namespace wm::rpc
