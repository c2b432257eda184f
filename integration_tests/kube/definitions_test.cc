// Cluster definitions: Karta objects in the real apiserver override the
// catalog for their kind, hot-reloaded; an invalid one is reported and
// skipped without touching the others.
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration_tests/kube/testbed_fixture.h"
#include "server/definitions/testing/karta_fixture.h"
#include "server/expressions/jq_engine.h"
#include "server/kube/testing/eventually.h"
#include "server/sources/definition_set.h"

namespace wm::sources {
namespace {

using ::wm::kube::testing::Eventually;
using wm::testing::Testbed;

// How long a test waits for the cache to catch up before it fails.
constexpr absl::Duration kWait = absl::Seconds(30);

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 1}).value().release();
  return *engine;
}

Json Karta(const std::string& name, const std::string& kind_group, const std::string& kind) {
  return definitions::testing::KartaFixture(name, Gvk{kind_group, "v1alpha2", kind});
}

TEST(ClusterDefinitionsIntegrationTest, KartaOverridesTheCatalogAndInvalidOnesAreReported) {
  Testbed& tb = Testbed::Get();
  DefinitionSet set(Engine(), [](definitions::Registry& registry) {
    return registry.AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
  });
  ASSERT_TRUE(set.Init().ok());
  Gvk jobset{"jobset.x-k8s.io", "v1alpha2", "JobSet"};
  auto before = set.Current()->ForKind(jobset);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ((*before)->definition->origin, definitions::Origin::kCatalog);

  std::vector<Gvk> watched;
  std::mutex mu;
  kube::ClusterCache::Options options;
  kube::ClusterCache cache(tb.admin(), options);
  set.SetListener([&](std::shared_ptr<const definitions::Registry>, const std::vector<Gvk>& kinds) {
    {
      std::unique_lock lock(mu);
      watched = kinds;
    }
    cache.SetKinds(kinds);
  });
  cache.AddHandler([&](const Gvk& gvk, const kube::Change& change) {
    if (gvk == KartaGvk()) set.OnKartaChange(change);
  });
  ASSERT_TRUE(cache.Start(KindsToWatch(*set.Current())).ok());
  ASSERT_TRUE(Eventually([&] { return cache.HasSynced(KartaGvk()); }, kWait));

  const std::string path = "/apis/run.ai/v1alpha1/kartas";
  ASSERT_TRUE(tb.Call("POST", path, Karta("jobset-override", "jobset.x-k8s.io", "JobSet")).ok());
  // Invalid: the root component has no kind and the status mapping is bogus.
  Json invalid = Karta("broken", "jobset.x-k8s.io", "JobSet");
  invalid["metadata"]["name"] = "broken";
  invalid["spec"]["structureDefinition"]["rootComponent"]["specDefinition"]["podTemplateSpecPath"] =
      ".spec.template | env";
  invalid["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] = "Widget";
  ASSERT_TRUE(tb.Call("POST", path, invalid).ok());

  ASSERT_TRUE(Eventually(
      [&] {
        auto now = set.Current()->ForKind(jobset);
        return now.ok() && (*now)->definition->origin == definitions::Origin::kCluster;
      },
      kWait))
      << "the cluster definition did not take over";
  ASSERT_TRUE(Eventually([&] { return set.rejected().size() == 1; }, kWait));
  auto rejected = set.rejected();
  EXPECT_EQ(rejected[0].name, "broken");
  ASSERT_FALSE(rejected[0].findings.empty());
  EXPECT_THAT(rejected[0].findings[0].ToString(), ::testing::HasSubstr("env"));
  // The catalog still answers for everything else.
  EXPECT_TRUE(set.Current()->ForKind({"ray.io", "v1", "RayCluster"}).ok());

  // Deleting the Karta brings the catalog definition back.
  ASSERT_TRUE(tb.Call("DELETE", path + "/jobset-override").ok());
  ASSERT_TRUE(tb.Call("DELETE", path + "/broken").ok());
  ASSERT_TRUE(Eventually(
      [&] {
        auto now = set.Current()->ForKind(jobset);
        return now.ok() && (*now)->definition->origin == definitions::Origin::kCatalog &&
               set.rejected().empty();
      },
      kWait));
  std::unique_lock lock(mu);
  EXPECT_THAT(watched, ::testing::Contains(Gvk{"batch", "v1", "Job"}));
  EXPECT_THAT(watched, ::testing::Contains(KartaGvk()));
}

}  // namespace
}  // namespace wm::sources
