#include "server/kube/discovery.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/kube/testing/scripted_server.h"

namespace wm::kube {
namespace {

using testing::ScriptedServer;

TEST(DiscoveryTest, AggregatedDocumentsMapKindsToResources) {
  Json core = Json::parse(R"({"kind":"APIGroupDiscoveryList","items":[{"metadata":{},
    "versions":[{"version":"v1","resources":[
      {"resource":"pods","responseKind":{"kind":"Pod"},"scope":"Namespaced","verbs":["get","list","watch"],
       "subresources":[{"subresource":"status"}]},
      {"resource":"nodes","responseKind":{"kind":"Node"},"scope":"Cluster","verbs":["list"]}]}]}]})");
  Json groups =
      Json::parse(R"({"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":"ray.io"},
    "versions":[{"version":"v1","resources":[{"resource":"rayclusters","responseKind":{"kind":"RayCluster"},
      "scope":"Namespaced","verbs":["list","watch"]}]},
      {"version":"v1alpha1","resources":[{"resource":"rayclusters","responseKind":{"kind":"RayCluster"},
      "scope":"Namespaced","verbs":["list","watch"]}]}]}]})");
  absl::StatusOr<Discovery> discovery = Discovery::FromAggregated(core, groups);
  ASSERT_TRUE(discovery.ok()) << discovery.status();
  const ApiResource* pods = discovery->Find("", "v1", "Pod");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(pods->plural, "pods");
  EXPECT_TRUE(pods->namespaced);
  EXPECT_EQ(pods->CollectionPath("ns"), "/api/v1/namespaces/ns/pods");
  const ApiResource* nodes = discovery->Find("", "v1", "Node");
  ASSERT_NE(nodes, nullptr);
  EXPECT_FALSE(nodes->namespaced);
  EXPECT_EQ(nodes->CollectionPath("ns"), "/api/v1/nodes");
  EXPECT_FALSE(nodes->Supports("watch"));
  EXPECT_EQ(discovery->Find("ray.io", "v1", "RayCluster")->CollectionPath(),
            "/apis/ray.io/v1/rayclusters");
  EXPECT_EQ(discovery->Find("ray.io", "v2", "RayCluster"), nullptr);
  EXPECT_THAT(discovery->ServedVersions("ray.io", "RayCluster"),
              ::testing::ElementsAre("v1", "v1alpha1"));
}

// A server without aggregated discovery: /api and /apis answer with the
// legacy documents, then one request per group version.
TEST(DiscoveryTest, FallsBackToLegacyPerGroupDiscovery) {
  ScriptedServer server([](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200, {{"Content-Type", "application/json"}});
    if (r.path == "/api") {
      out.Write(R"({"kind":"APIVersions","versions":["v1"]})");
    } else if (r.path == "/apis") {
      out.Write(R"({"kind":"APIGroupList","groups":[{"name":"batch","versions":[
        {"groupVersion":"batch/v1","version":"v1"}],"preferredVersion":{"groupVersion":"batch/v1","version":"v1"}}]})");
    } else if (r.path == "/api/v1") {
      out.Write(R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
        {"name":"pods","namespaced":true,"kind":"Pod","verbs":["list","watch"]},
        {"name":"pods/status","namespaced":true,"kind":"Pod","verbs":["get"]}]})");
    } else if (r.path == "/apis/batch/v1") {
      out.Write(R"({"kind":"APIResourceList","groupVersion":"batch/v1","resources":[
        {"name":"jobs","namespaced":true,"kind":"Job","verbs":["list","watch"]}]})");
    }
  });
  ClusterConnection connection;
  connection.server = server.url();
  ApiClient client(connection);
  absl::StatusOr<Discovery> discovery = Discovery::Fetch(client);
  ASSERT_TRUE(discovery.ok()) << discovery.status();
  EXPECT_FALSE(discovery->aggregated());
  ASSERT_NE(discovery->Find("batch", "v1", "Job"), nullptr);
  EXPECT_EQ(discovery->Find("batch", "v1", "Job")->plural, "jobs");
  EXPECT_EQ(discovery->Find("", "v1", "Pod")->plural, "pods");  // not pods/status
  EXPECT_EQ(discovery->resources().size(), 2u);
}

}  // namespace
}  // namespace wm::kube
