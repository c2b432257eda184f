// The PodGroup role's threads at once, against the testbed's real
// apiserver (scripts/test runs it under TSan too): the worker reconciling
// workloads while the mutating webhook's threads ask MembershipOfNewPod,
// the elector flips leadership and calls ResyncAll, and discoveries mark the
// schemas stale. What must hold when it settles: one PodGroup per workload,
// created once, of the workload's current size, every pod in it, and every
// answer the webhook gave naming that group.
//
// The end-to-end behaviour on the schedulers' real CRDs, with the daemon,
// is integration_tests/controllers/pod_groups_test.sh's.
#include "server/controllers/pod_group_controller.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "gtest/gtest.h"
#include "integration_tests/kube/testbed_fixture.h"
#include "server/common/json_path.h"
#include "server/expressions/native_engine.h"
#include "server/index/live_cluster.h"
#include "server/index/workload_index.h"
#include "server/kube/testing/eventually.h"

namespace wm::controllers {
namespace {

using ::wm::kube::testing::Eventually;
using ::wm::testing::SchemalessCrd;
using ::wm::testing::Testbed;

constexpr absl::Duration kWait = absl::Seconds(60);
constexpr int kJobs = 6;
const std::string kSchedulerName = "stress-scheduler";
const std::string kCrdPath =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.scheduling.x-k8s.io";
const std::string kMemberLabel = "scheduling.x-k8s.io/pod-group";

// The coscheduling plugin's PodGroup kind, as far as this test needs it:
// served with any fields. The real CRD (pod_groups_test.sh applies it from
// the scheduler-plugins module) is used when it is there already.
Json MinimalPodGroupCrd() {
  return SchemalessCrd({"scheduling.x-k8s.io", "v1alpha1", "PodGroup"}, "podgroups", "podgroup");
}

// Serves the PodGroup kind for the test's life; removes it after only if
// the test created it.
class PodGroupKind {
 public:
  PodGroupKind() {
    Testbed& tb = Testbed::Get();
    if (tb.Call("GET", kCrdPath).ok()) return;
    created_ = tb.Call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                       MinimalPodGroupCrd())
                   .ok();
    EXPECT_TRUE(created_);
    EXPECT_TRUE(Eventually(
        [&] { return tb.Call("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups").ok(); },
        kWait));
  }
  ~PodGroupKind() {
    if (!created_) return;
    Testbed& tb = Testbed::Get();
    EXPECT_TRUE(tb.Call("DELETE", kCrdPath).ok());
    // Testbed::Call names the HTTP status in its error.
    EXPECT_TRUE(Eventually(
        [&] { return absl::StrContains(tb.Call("GET", kCrdPath).status().message(), "HTTP 404"); },
        kWait));
  }

 private:
  bool created_ = false;
};

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

Json OwnerReference(const Json& job) {
  return Json::array({{{"apiVersion", "batch/v1"},
                       {"kind", "Job"},
                       {"name", job["metadata"]["name"]},
                       {"uid", job["metadata"]["uid"]},
                       {"controller", true}}});
}

Json JobManifest(const std::string& name, int parallelism) {
  Json container = {{"name", "main"}, {"image", "registry.invalid/trainer:1"}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"parallelism", parallelism},
            {"completions", 8},
            {"template",
             {{"spec",
               {{"restartPolicy", "Never"},
                {"schedulerName", kSchedulerName},
                {"containers", {container}}}}}}}}};
}

// A pod of `job` as its controller would create it (and as the webhook's
// admission request holds it: no uid yet).
Json PodManifest(const Json& job, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"labels", {{"batch.kubernetes.io/job-name", job["metadata"]["name"]}}},
            {"ownerReferences", OwnerReference(job)}}},
          {"spec",
           {{"schedulerName", kSchedulerName},
            {"restartPolicy", "Never"},
            {"containers", {{{"name", "main"}, {"image", "registry.invalid/trainer:1"}}}}}}};
}

// The PodGroup owned by the object of `uid` in `podgroups`, or null.
Json GroupOwnedBy(const Json& podgroups, const Json& uid) {
  for (const Json& group : podgroups["items"]) {
    for (const Json& owner : group["metadata"].value("ownerReferences", Json::array())) {
      if (owner["uid"] == uid) return group;
    }
  }
  return nullptr;
}

TEST(PodGroupControllerStressTest, WebhookLookupsLeadershipFlipsAndResyncsWhileTheWorkerWrites) {
  Testbed& tb = Testbed::Get();
  PodGroupKind kind;
  const std::string ns = tb.NewNamespace("pod-group-stress");

  // The daemon's wiring for one cluster (server/daemon/main.cc), watching
  // this test's namespace only.
  index::WorkloadIndex index(Engine(), {});
  index::LiveCluster::Options cluster_options;
  cluster_options.cache.namespace_ = ns;
  cluster_options.cluster_definitions = false;
  PodGroupController::Options options;
  options.scheduler_names = {{kSchedulerName, GangScheduler::kCoscheduling}};
  options.admission_wait = absl::Milliseconds(200);
  options.min_backoff = absl::Milliseconds(50);
  options.max_backoff = absl::Milliseconds(500);
  cluster_options.observed_kinds = PodGroupController::KindsToWatch(options);
  index::LiveCluster cluster(
      "stress", tb.AdminConnection(), Engine(),
      [](definitions::Registry& registry) {
        return registry.AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
      },
      cluster_options);
  index.AddCluster(&cluster);
  index.Start();
  std::atomic<bool> leading{true};
  PodGroupController controller(
      cluster.client(), cluster.cache(), index, cluster.name(), [&] { return leading.load(); },
      options);
  cluster.AddObserver(
      [&](const Gvk& gvk, const kube::Change& change) { controller.OnChange(gvk, change); },
      [&] { controller.OnDiscovery(); });
  ASSERT_TRUE(cluster.Start(index).ok());
  ASSERT_TRUE(controller.Start().ok());

  const std::string jobs_path = absl::StrCat("/apis/batch/v1/namespaces/", ns, "/jobs");
  const std::string pods_path = absl::StrCat("/api/v1/namespaces/", ns, "/pods");
  std::vector<Json> jobs;
  for (int i = 0; i < kJobs; ++i) {
    absl::StatusOr<Json> job = tb.Call("POST", jobs_path, JobManifest(absl::StrCat("job-", i), 2));
    ASSERT_TRUE(job.ok()) << job.status();
    jobs.push_back(*job);
  }

  // The webhook's threads: what each answered, by job. (std::mutex: TSan
  // sees through it; Debian's Abseil is not instrumented.)
  std::mutex mu;
  std::map<int, std::set<std::string>> answers;  // guarded by mu
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; !stop; ++n) {
        int i = (n + t) % kJobs;
        std::optional<PodGroupMembership> membership =
            controller.MembershipOfNewPod(PodManifest(jobs[i], ""), ns);
        (void)controller.counts();
        if (!membership) continue;
        std::lock_guard<std::mutex> lock(mu);
        answers[i].insert(membership->group);
      }
    });
  }
  // The elector: leadership lost and gained (each gain resyncs), and
  // discoveries.
  threads.emplace_back([&] {
    for (int n = 0; !stop; ++n) {
      leading = n % 4 != 0;
      if (leading) controller.ResyncAll();
      if (n % 8 == 0) controller.OnDiscovery();
      absl::SleepFor(absl::Milliseconds(15));
    }
  });

  // Meanwhile the jobs' controller: two pods each, then scaled to three.
  for (int i = 0; i < kJobs; ++i) {
    for (int p = 0; p < 2; ++p) {
      ASSERT_TRUE(
          tb.Call("POST", pods_path, PodManifest(jobs[i], absl::StrCat("job-", i, "-", p))).ok());
    }
  }
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE(tb.Call("PATCH", absl::StrCat(jobs_path, "/job-", i),
                        Json{{"spec", {{"parallelism", 3}}}}, "application/merge-patch+json")
                    .ok());
    ASSERT_TRUE(
        tb.Call("POST", pods_path, PodManifest(jobs[i], absl::StrCat("job-", i, "-2"))).ok());
  }
  absl::SleepFor(absl::Seconds(2));
  stop = true;
  for (std::thread& thread : threads) thread.join();
  leading = true;
  controller.ResyncAll();

  const std::string groups_path =
      absl::StrCat("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/", ns, "/podgroups");
  auto settled = [&] {
    absl::StatusOr<Json> groups = tb.Call("GET", groups_path);
    absl::StatusOr<Json> pods = tb.Call("GET", pods_path);
    if (!groups.ok() || !pods.ok() || (*groups)["items"].size() != kJobs) return false;
    for (const Json& job : jobs) {
      Json group = GroupOwnedBy(*groups, job["metadata"]["uid"]);
      if (group.is_null() || group["spec"].value("minMember", 0) != 3) return false;
      for (const Json& pod : (*pods)["items"]) {
        if (pod["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"] &&
            FindString(pod, {"metadata", "labels", kMemberLabel}) !=
                group["metadata"]["name"].get<std::string>()) {
          return false;
        }
      }
    }
    return true;
  };
  ASSERT_TRUE(Eventually(settled, kWait)) << tb.Call("GET", groups_path)->dump(2);

  Json groups = *tb.Call("GET", groups_path);
  std::lock_guard<std::mutex> lock(mu);
  // The lookups ran while the jobs were resolved, not only before.
  EXPECT_FALSE(answers.empty());
  for (int i = 0; i < kJobs; ++i) {
    std::string group = GroupOwnedBy(groups, jobs[i]["metadata"]["uid"])["metadata"]["name"];
    // Every answer the webhook gave, before or after the group existed,
    // named the one group; and it answers now.
    for (const std::string& answer : answers[i]) EXPECT_EQ(answer, group) << "job-" << i;
    std::optional<PodGroupMembership> now =
        controller.MembershipOfNewPod(PodManifest(jobs[i], ""), ns);
    ASSERT_TRUE(now.has_value()) << "job-" << i;
    EXPECT_EQ(now->group, group);
  }
  // Created once each, whatever the flips and resyncs: no write doubled.
  EXPECT_EQ(controller.counts().creates, kJobs);

  controller.Stop();
  cluster.Stop();
  index.Stop();
  tb.Call("DELETE", "/api/v1/namespaces/" + ns).IgnoreError();
}

}  // namespace
}  // namespace wm::controllers
