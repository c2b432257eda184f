// The watch cache against the real kube-apiserver and etcd of the testbed:
// sync, propagation, restarts, compaction, CRDs appearing and going, RBAC
// and credentials.
#include "server/kube/informer.h"

#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration_tests/kube/tcp_proxy.h"
#include "integration_tests/kube/testbed_fixture.h"
#include "server/kube/auth/credentials.h"
#include "server/kube/auth/kubeconfig.h"
#include "server/kube/cluster_cache.h"
#include "server/kube/testing/eventually.h"

namespace wm::kube {
namespace {

using ::wm::kube::testing::Eventually;
using wm::testing::SchemalessCrd;
using wm::testing::Testbed;

// How long a test waits for the cache to catch up before it fails.
constexpr absl::Duration kWait = absl::Seconds(30);

ApiResource Pods() { return {"", "v1", "Pod", "pods", true, {"list", "watch"}}; }
ApiResource ConfigMaps() { return {"", "v1", "ConfigMap", "configmaps", true, {"list", "watch"}}; }

ReflectorOptions Options(const std::string& namespace_) {
  ReflectorOptions options;
  options.namespace_ = namespace_;
  options.backoff.initial = absl::Milliseconds(100);
  options.backoff.cap = absl::Seconds(2);
  return options;
}

Json PodManifest(const std::string& name, Json labels = Json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec",
           {{"containers",
             {{{"name", "main"},
               {"image", "registry.invalid/trainer:1"},
               {"resources", {{"limits", {{"nvidia.com/gpu", "4"}}}}}}}}}}};
}

Json ConfigMap(const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", {{"value", value}}}};
}

void Must(const absl::StatusOr<Json>& result) { ASSERT_TRUE(result.ok()) << result.status(); }

// (key -> uid@resourceVersion) of a fresh list, to compare with the cache.
std::map<std::string, std::string> FreshList(const std::string& path) {
  std::map<std::string, std::string> out;
  absl::StatusOr<Json> list = Testbed::Get().Call("GET", path);
  EXPECT_TRUE(list.ok()) << list.status();
  if (!list.ok()) return out;
  for (const Json& item : (*list)["items"]) {
    const Json& m = item["metadata"];
    out[absl::StrCat(m.value("namespace", ""), "/", m.value("name", ""))] =
        absl::StrCat(m.value("uid", ""), "@", m.value("resourceVersion", ""));
  }
  return out;
}

std::map<std::string, std::string> Cached(const Store& store) {
  std::map<std::string, std::string> out;
  for (const auto& object : store.List()) {
    out[object->key()] = absl::StrCat(object->uid(), "@", object->resource_version());
  }
  return out;
}

TEST(InformerIntegrationTest, SyncsExistingObjectsAndFollowsChanges) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("sync");
  std::string pods = absl::StrCat("/api/v1/namespaces/", ns, "/pods");
  for (int i = 0; i < 5; ++i) Must(tb.Call("POST", pods, PodManifest(absl::StrCat("before-", i))));

  Informer informer(tb.admin(), Pods(), [&] {
    ReflectorOptions o = Options(ns);
    o.shape = ObjectShape::kCompactPod;
    return o;
  }());
  std::vector<std::string> seen;
  std::mutex mu;
  informer.AddHandler([&](const Change& c) {
    std::unique_lock lock(mu);
    const auto& object = c.new_object ? c.new_object : c.old_object;
    seen.push_back(absl::StrCat(EventTypeName(c.type), " ", object->key()));
  });
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  EXPECT_EQ(informer.store().size(), 5u);
  EXPECT_EQ(Cached(informer.store()), FreshList(pods));

  // Create, update labels, write status through the subresource, delete.
  Must(tb.Call("POST", pods, PodManifest("after")));
  Must(tb.Call("PATCH", pods + "/after", Json{{"metadata", {{"labels", {{"role", "worker"}}}}}},
               "application/merge-patch+json"));
  Must(tb.Call(
      "PATCH", pods + "/after/status",
      Json{{"status",
            {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}},
      "application/merge-patch+json"));
  ASSERT_TRUE(Eventually(
      [&] {
        auto pod = informer.store().Get(ns + "/after");
        return pod && (*pod->Document())["status"].value("phase", "") == "Running";
      },
      kWait));
  auto document = informer.store().Get(ns + "/after")->Document();
  EXPECT_EQ((*document)["metadata"]["labels"]["role"], "worker");
  EXPECT_EQ((*document)["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "4");
  EXPECT_FALSE((*document)["spec"]["containers"][0].contains("image"));  // compact
  Must(tb.Call("DELETE", pods + "/before-0"));
  ASSERT_TRUE(Eventually([&] { return informer.store().Get(ns + "/before-0") == nullptr; }, kWait));
  informer.WaitForIdle();
  EXPECT_EQ(Cached(informer.store()), FreshList(pods));
  std::unique_lock lock(mu);
  EXPECT_THAT(seen, ::testing::Contains(absl::StrCat("ADDED ", ns, "/after")));
  EXPECT_THAT(seen, ::testing::Contains(absl::StrCat("MODIFIED ", ns, "/after")));
  EXPECT_THAT(seen, ::testing::Contains(absl::StrCat("DELETED ", ns, "/before-0")));
}

TEST(InformerIntegrationTest, CustomResourceStatusThroughTheSubresource) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("jobset");
  ApiResource jobsets{"jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", true, {"list", "watch"}};
  Informer informer(tb.admin(), jobsets, Options(ns));
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  std::string path = absl::StrCat("/apis/jobset.x-k8s.io/v1alpha2/namespaces/", ns, "/jobsets");
  Json jobset = {
      {"apiVersion", "jobset.x-k8s.io/v1alpha2"},
      {"kind", "JobSet"},
      {"metadata", {{"name", "demo"}}},
      {"spec",
       {{"replicatedJobs",
         {{{"name", "worker"},
           {"replicas", 2},
           {"template",
            {{"spec",
              {{"template",
                {{"spec",
                  {{"restartPolicy", "Never"},
                   {"containers",
                    {{{"name", "main"}, {"image", "registry.invalid/x:1"}}}}}}}}}}}}}}}}}};
  Must(tb.Call("POST", path, jobset));
  Must(tb.Call("PATCH", path + "/demo/status",
               Json{{"status",
                     {{"conditions",
                       {{{"type", "Completed"},
                         {"status", "True"},
                         {"reason", "AllJobsCompleted"},
                         {"message", "jobset completed successfully"},
                         {"lastTransitionTime", "2026-11-30T00:00:00Z"}}}}}}},
               "application/merge-patch+json"));
  ASSERT_TRUE(Eventually(
      [&] {
        auto object = informer.store().Get(ns + "/demo");
        // The created object may be seen before its status is patched in:
        // look the key up rather than index a const document by it.
        return object && object->Document()->value("status", Json::object()).contains("conditions");
      },
      kWait));
  auto document = informer.store().Get(ns + "/demo")->Document();
  EXPECT_EQ((*document)["status"]["conditions"][0]["type"], "Completed");
  EXPECT_EQ((*document)["spec"]["replicatedJobs"][0]["replicas"], 2);
  EXPECT_FALSE((*document)["metadata"].contains("managedFields"));
}

TEST(InformerIntegrationTest, ScopedByNamespaceAndLabelSelector) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("scoped");
  std::string other = tb.NewNamespace("other");
  Must(tb.Call("POST", absl::StrCat("/api/v1/namespaces/", ns, "/pods"),
               PodManifest("mine", {{"team", "a"}})));
  Must(tb.Call("POST", absl::StrCat("/api/v1/namespaces/", ns, "/pods"),
               PodManifest("theirs", {{"team", "b"}})));
  Must(tb.Call("POST", absl::StrCat("/api/v1/namespaces/", other, "/pods"),
               PodManifest("elsewhere", {{"team", "a"}})));
  ReflectorOptions options = Options(ns);
  options.label_selector = "team=a";
  Informer informer(tb.admin(), Pods(), options);
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  std::vector<std::string> keys;
  for (const auto& object : informer.store().List()) keys.push_back(object->key());
  EXPECT_THAT(keys, ::testing::ElementsAre(ns + "/mine"));
}

// kill -9 of kube-apiserver mid-watch while objects change before, during
// (writes fail) and right after the restart: the cache converges to exactly
// a fresh list, with no stale object.
TEST(InformerIntegrationTest, ConvergesAfterApiserverKilledAndRestarted) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("restart");
  std::string path = absl::StrCat("/api/v1/namespaces/", ns, "/configmaps");
  for (int i = 0; i < 20; ++i) Must(tb.Call("POST", path, ConfigMap(absl::StrCat("cm-", i), "0")));
  Informer informer(tb.admin(), ConfigMaps(), Options(ns));
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  Must(tb.Call("PUT", path + "/cm-0", ConfigMap("cm-0", "1")));
  tb.Script("kill-apiserver");
  tb.Script("start-apiserver");
  for (int i = 1; i < 5; ++i) Must(tb.Call("DELETE", absl::StrCat(path, "/cm-", i)));
  for (int i = 5; i < 9; ++i) {
    Must(tb.Call("PUT", absl::StrCat(path, "/cm-", i), ConfigMap(absl::StrCat("cm-", i), "2")));
  }
  Must(tb.Call("DELETE", path + "/cm-9"));
  Must(tb.Call("POST", path, ConfigMap("cm-9", "recreated")));
  Must(tb.Call("POST", path, ConfigMap("cm-new", "3")));
  std::map<std::string, std::string> fresh = FreshList(path);
  ASSERT_EQ(fresh.size(), 17u);
  EXPECT_TRUE(Eventually([&] { return Cached(informer.store()) == fresh; }, absl::Seconds(60)))
      << "cache did not converge; state " << StateName(informer.Health().state) << ": "
      << informer.Health().message;
  EXPECT_EQ((*informer.store().Get(ns + "/cm-0")->Document())["data"]["value"], "1");
}

// A client cut off while objects are deleted and recreated, with etcd
// compacted meanwhile (the testbed serves configmaps without a watch cache,
// so the watch goes to etcd): the watch answers 410 and the relist emits a
// delete for every vanished object and delete-then-add for the recreated.
TEST(InformerIntegrationTest, CompactionWhileDisconnectedForcesARelistWithoutLoss) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("compact");
  std::string path = absl::StrCat("/api/v1/namespaces/", ns, "/configmaps");
  for (const char* name : {"keep", "gone", "again", "changed"}) {
    Must(tb.Call("POST", path, ConfigMap(name, "0")));
  }
  wm::testing::TcpProxy proxy(tb.apiserver_port());
  ApiClient client(tb.AdminConnection(proxy.port()));
  Informer informer(client, ConfigMaps(), Options(ns));
  std::vector<std::string> seen;
  std::mutex mu;
  informer.AddHandler([&](const Change& c) {
    std::unique_lock lock(mu);
    const auto& object = c.new_object ? c.new_object : c.old_object;
    seen.push_back(absl::StrCat(EventTypeName(c.type), " ", object->key(), " ", object->uid()));
  });
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  informer.WaitForIdle();
  std::string old_again_uid = informer.store().Get(ns + "/again")->uid();
  {
    std::unique_lock lock(mu);
    seen.clear();
  }

  proxy.Cut();
  Must(tb.Call("DELETE", path + "/gone"));
  Must(tb.Call("DELETE", path + "/again"));
  Must(tb.Call("POST", path, ConfigMap("again", "new")));
  Must(tb.Call("PUT", path + "/changed", ConfigMap("changed", "1")));
  // Enough unrelated writes that the informer's version is well behind.
  std::string filler = tb.NewNamespace("filler");
  for (int i = 0; i < 5; ++i) {
    Must(tb.Call("POST", absl::StrCat("/api/v1/namespaces/", filler, "/configmaps"),
                 ConfigMap(absl::StrCat("f", i), "x")));
  }
  tb.Script("compact");
  proxy.Restore();

  ASSERT_TRUE(
      Eventually([&] { return Cached(informer.store()) == FreshList(path); }, absl::Seconds(60)))
      << informer.Health().message;
  EXPECT_GE(informer.Health().relists_410, 1);
  informer.WaitForIdle();
  std::string new_again_uid = informer.store().Get(ns + "/again")->uid();
  EXPECT_NE(new_again_uid, old_again_uid);
  std::unique_lock lock(mu);
  EXPECT_THAT(seen, ::testing::Contains(::testing::StartsWith("DELETED " + ns + "/gone ")));
  auto deleted_again =
      std::find(seen.begin(), seen.end(), absl::StrCat("DELETED ", ns, "/again ", old_again_uid));
  auto added_again =
      std::find(seen.begin(), seen.end(), absl::StrCat("ADDED ", ns, "/again ", new_again_uid));
  ASSERT_NE(deleted_again, seen.end());
  ASSERT_NE(added_again, seen.end());
  EXPECT_LT(deleted_again, added_again);
}

TEST(ClusterCacheIntegrationTest, CustomResourceDefinitionsComeAndGo) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("crd");
  Gvk widget{"widgets.wm.test", "v1", "Widget"};
  ClusterCache::Options options;
  options.reflector = Options("");
  ClusterCache cache(tb.admin(), options);
  std::vector<std::string> deletions;
  std::mutex mu;
  cache.AddHandler([&](const Gvk& gvk, const Change& c) {
    std::unique_lock lock(mu);
    if (gvk == widget && c.type == EventType::kDeleted) deletions.push_back(c.old_object->key());
  });
  ASSERT_TRUE(cache.Start({widget}).ok());
  auto status_of = [&](const Gvk& gvk) {
    for (const KindStatus& s : cache.Status()) {
      if (s.gvk == gvk) return s;
    }
    return KindStatus{};
  };
  EXPECT_FALSE(status_of(widget).served);
  EXPECT_THAT(status_of(widget).message, ::testing::HasSubstr("not served"));

  Json crd = SchemalessCrd(widget, "widgets", "widget");
  Must(tb.Call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd));
  ASSERT_TRUE(Eventually([&] { return cache.HasSynced(widget); }, kWait))
      << status_of(widget).message;
  std::string path = absl::StrCat("/apis/widgets.wm.test/v1/namespaces/", ns, "/widgets");
  Must(tb.Call("POST", path,
               Json{{"apiVersion", "widgets.wm.test/v1"},
                    {"kind", "Widget"},
                    {"metadata", {{"name", "w1"}}},
                    {"spec", {{"size", 3}}}}));
  ASSERT_TRUE(Eventually(
      [&] {
        auto store = cache.StoreFor(widget);
        return store && store->Get(ns + "/w1") != nullptr;
      },
      kWait));

  Must(tb.Call("DELETE",
               "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
               "widgets.widgets.wm.test"));
  ASSERT_TRUE(Eventually([&] { return !status_of(widget).served; }, absl::Seconds(60)));
  EXPECT_EQ(cache.StoreFor(widget), nullptr);
  std::unique_lock lock(mu);
  EXPECT_THAT(deletions, ::testing::Contains(ns + "/w1"));
}

// Credentials of a ServiceAccount whose ClusterRole lacks Jobs: Jobs are
// reported Forbidden while pods and configmaps sync.
TEST(ClusterCacheIntegrationTest, UnreadableResourceIsReportedWhileOthersWork) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("rbac");
  Must(tb.Call(
      "POST", absl::StrCat("/api/v1/namespaces/", ns, "/serviceaccounts"),
      Json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "reader"}}}}));
  std::string role = "wm-reader-" + ns;
  Must(tb.Call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                    {"kind", "ClusterRole"},
                    {"metadata", {{"name", role}}},
                    {"rules",
                     {{{"apiGroups", {""}},
                       {"resources", {"pods", "configmaps"}},
                       {"verbs", {"get", "list", "watch"}}},
                      {{"apiGroups", {"apiextensions.k8s.io"}},
                       {"resources", {"customresourcedefinitions"}},
                       {"verbs", {"get", "list", "watch"}}}}}}));
  Must(tb.Call(
      "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
      Json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
           {"kind", "ClusterRoleBinding"},
           {"metadata", {{"name", role}}},
           {"roleRef",
            {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
           {"subjects", {{{"kind", "ServiceAccount"}, {"name", "reader"}, {"namespace", ns}}}}}));
  absl::StatusOr<Json> token =
      tb.Call("POST", absl::StrCat("/api/v1/namespaces/", ns, "/serviceaccounts/reader/token"),
              Json{{"apiVersion", "authentication.k8s.io/v1"},
                   {"kind", "TokenRequest"},
                   {"spec", {{"expirationSeconds", 3600}}}});
  ASSERT_TRUE(token.ok()) << token.status();
  ClusterConnection connection = tb.AdminConnection();
  connection.credentials = StaticToken((*token)["status"]["token"].get<std::string>());
  ApiClient client(connection);
  ClusterCache::Options options;
  options.reflector = Options("");
  ClusterCache cache(client, options);
  Gvk jobs{"batch", "v1", "Job"}, configmaps{"", "v1", "ConfigMap"};
  ASSERT_TRUE(cache.Start({jobs, configmaps}).ok());
  ASSERT_TRUE(
      Eventually([&] { return cache.HasSynced(PodGvk()) && cache.HasSynced(configmaps); }, kWait));
  ASSERT_TRUE(Eventually(
      [&] {
        for (const KindStatus& s : cache.Status()) {
          if (s.gvk == jobs) return s.health.state == ReflectorHealth::State::kForbidden;
        }
        return false;
      },
      kWait));
  for (const KindStatus& s : cache.Status()) {
    if (s.gvk == jobs) {
      EXPECT_FALSE(s.health.has_synced);
      EXPECT_THAT(s.message, ::testing::HasSubstr("forbidden"));
    }
  }
}

// Who the apiserver thinks we are.
std::string WhoAmI(const ApiClient& client) {
  HttpRequest request;
  request.method = "POST";
  request.path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
  request.content_type = "application/json";
  request.body = R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})";
  absl::StatusOr<HttpResponse> response = client.Do(request);
  if (!response.ok() || response->status != 201) return "error";
  return Json::parse(response->body)["status"]["userInfo"].value("username", "");
}

std::string ServiceAccountToken(const std::string& ns, const std::string& name) {
  Testbed& tb = Testbed::Get();
  EXPECT_TRUE(
      tb.Call(
            "POST", absl::StrCat("/api/v1/namespaces/", ns, "/serviceaccounts"),
            Json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", name}}}})
          .ok());
  absl::StatusOr<Json> token =
      tb.Call("POST", absl::StrCat("/api/v1/namespaces/", ns, "/serviceaccounts/", name, "/token"),
              Json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}});
  EXPECT_TRUE(token.ok()) << token.status();
  return token.ok() ? (*token)["status"]["token"].get<std::string>() : "";
}

// A rotated token file is re-read when the apiserver rejects the old token.
TEST(CredentialsIntegrationTest, TokenFileRotationOnUnauthorized) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("rotate");
  std::string first = ServiceAccountToken(ns, "first");
  std::string second = ServiceAccountToken(ns, "second");
  std::string file = ::testing::TempDir() + "/rotating-token";
  std::ofstream(file) << first << "\n";
  ClusterConnection connection = tb.AdminConnection();
  connection.credentials = TokenFile(file, absl::Hours(1));
  ApiClient client(connection);
  EXPECT_EQ(WhoAmI(client), absl::StrCat("system:serviceaccount:", ns, ":first"));
  std::ofstream(file, std::ios::trunc) << second << "\n";
  // Deleting the first ServiceAccount invalidates its token: the next
  // request gets 401, the file is re-read, and the retry succeeds.
  Must(tb.Call("DELETE", absl::StrCat("/api/v1/namespaces/", ns, "/serviceaccounts/first")));
  EXPECT_TRUE(Eventually(
      [&] { return WhoAmI(client) == absl::StrCat("system:serviceaccount:", ns, ":second"); },
      kWait));
}

TEST(CredentialsIntegrationTest, ExecPluginProvidesTheToken) {
  Testbed& tb = Testbed::Get();
  std::string dir = ::testing::TempDir() + "/exec-plugin";
  std::system(("mkdir -p " + dir).c_str());
  std::string counter = dir + "/runs";
  std::ofstream(dir + "/plugin.sh")
      << "#!/bin/sh\n"
      << "echo run >> " << counter << "\n"
      << "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 3;; esac\n"
      << "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
         "\"status\":{\"token\":\"%s\"}}' \"$WM_TEST_TOKEN\"\n";
  std::system(("chmod +x " + dir + "/plugin.sh; rm -f " + counter).c_str());
  std::ofstream(dir + "/kubeconfig")
      << "apiVersion: v1\nkind: Config\n"
      << "clusters:\n- name: tb\n  cluster:\n    server: https://127.0.0.1:" << tb.apiserver_port()
      << "\n    certificate-authority: " << tb.dir() << "/ca.crt\n"
      << "users:\n- name: plugin\n  user:\n    exec:\n      apiVersion: "
         "client.authentication.k8s.io/v1\n      command: ./plugin.sh\n      interactiveMode: "
         "Never\n      env:\n      - name: WM_TEST_TOKEN\n        value: "
      << tb.env("ADMIN_TOKEN") << "\n"
      << "contexts:\n- name: tb\n  context: {cluster: tb, user: plugin}\ncurrent-context: tb\n";
  KubeconfigOptions options;
  options.paths = {dir + "/kubeconfig"};
  absl::StatusOr<ClusterConnection> connection = LoadKubeconfig(options);
  ASSERT_TRUE(connection.ok()) << connection.status();
  ApiClient client(*connection);
  EXPECT_EQ(WhoAmI(client), "admin");
  EXPECT_EQ(WhoAmI(client), "admin");
  std::ifstream runs(counter);
  int count = 0;
  for (std::string line; std::getline(runs, line);) ++count;
  EXPECT_EQ(count, 1);  // cached: no expiry was given
}

}  // namespace
}  // namespace wm::kube

namespace wm::kube {
namespace {

// JobSet -> Job -> Pod, linked by controller ownerReferences as the
// operators link them: the top owner of the pod is the JobSet, and the
// JobSet's descendants are its Job and pod.
TEST(ClusterCacheIntegrationTest, OwnerChainsAcrossKinds) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("owners");
  Gvk jobset_gvk{"jobset.x-k8s.io", "v1alpha2", "JobSet"}, job_gvk{"batch", "v1", "Job"};
  ClusterCache::Options options;
  options.namespace_ = ns;
  options.reflector = Options("");
  ClusterCache cache(tb.admin(), options);
  ASSERT_TRUE(cache.Start({jobset_gvk, job_gvk}).ok());
  ASSERT_TRUE(
      Eventually([&] { return cache.HasSynced(jobset_gvk) && cache.HasSynced(job_gvk); }, kWait));

  Json container = {{"name", "main"}, {"image", "registry.invalid/x:1"}};
  absl::StatusOr<Json> jobset = tb.Call(
      "POST", absl::StrCat("/apis/jobset.x-k8s.io/v1alpha2/namespaces/", ns, "/jobsets"),
      Json{{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
           {"kind", "JobSet"},
           {"metadata", {{"name", "demo"}}},
           {"spec",
            {{"replicatedJobs",
              {{{"name", "worker"},
                {"template",
                 {{"spec",
                   {{"template",
                     {{"spec",
                       {{"restartPolicy", "Never"}, {"containers", {container}}}}}}}}}}}}}}}});
  ASSERT_TRUE(jobset.ok()) << jobset.status();
  auto owner_ref = [](const Json& owner, const std::string& api_version) {
    return Json{{{"apiVersion", api_version},
                 {"kind", owner["kind"]},
                 {"name", owner["metadata"]["name"]},
                 {"uid", owner["metadata"]["uid"]},
                 {"controller", true}}};
  };
  absl::StatusOr<Json> job = tb.Call(
      "POST", absl::StrCat("/apis/batch/v1/namespaces/", ns, "/jobs"),
      Json{
          {"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", "demo-worker-0"},
            {"ownerReferences", owner_ref(*jobset, "jobset.x-k8s.io/v1alpha2")}}},
          {"spec",
           {{"template", {{"spec", {{"restartPolicy", "Never"}, {"containers", {container}}}}}}}}});
  ASSERT_TRUE(job.ok()) << job.status();
  Json pod = PodManifest("demo-worker-0-0-abcde");
  pod["metadata"]["ownerReferences"] = owner_ref(*job, "batch/v1");
  Must(tb.Call("POST", absl::StrCat("/api/v1/namespaces/", ns, "/pods"), pod));

  std::shared_ptr<const CachedObject> cached_pod;
  ASSERT_TRUE(Eventually(
      [&] {
        auto pods = cache.StoreFor(PodGvk());
        cached_pod = pods ? pods->Get(ns + "/demo-worker-0-0-abcde") : nullptr;
        return cached_pod != nullptr && cache.FindByUid((*job)["metadata"]["uid"]) &&
               cache.FindByUid((*jobset)["metadata"]["uid"]);
      },
      kWait));
  ClusterCache::Found top = cache.TopOwner(PodGvk(), cached_pod);
  EXPECT_EQ(top.gvk, jobset_gvk);
  EXPECT_EQ(top.object->key(), ns + "/demo");
  std::vector<std::string> below;
  for (const auto& found : cache.Descendants((*jobset)["metadata"]["uid"])) {
    below.push_back(absl::StrCat(found.gvk.kind, " ", found.object->key()));
  }
  EXPECT_THAT(below, ::testing::ElementsAre("Job " + ns + "/demo-worker-0",
                                            "Pod " + ns + "/demo-worker-0-0-abcde"));
}

}  // namespace
}  // namespace wm::kube
