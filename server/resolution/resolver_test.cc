#include "server/resolution/resolver.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/resolution/mutation.h"
#include "server/resolution/resources.h"
#include "server/resolution/test_support.h"

namespace wm::resolution {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace v1 = ::workloadmap::v1;

// The seed JobSet with its Jobs and running pods.
struct Seed {
  std::vector<Json> docs =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml")
          .value();
  WorkloadInput Input() const {
    WorkloadInput in{&docs[0]};
    for (size_t i = 1; i < docs.size(); ++i) {
      (docs[i]["kind"] == "Pod" ? in.pods : in.owners).push_back(&docs[i]);
    }
    return in;
  }
};

const v1::ComponentInstance& Instance(const v1::ResolvedWorkload& w, const std::string& id) {
  for (const auto& i : w.root().instances(0).children(0).instances()) {
    if (i.id() == id) return i;
  }
  ADD_FAILURE() << "no instance " << id;
  static v1::ComponentInstance none;
  return none;
}

TEST(ResolverTest, SeedJobSetWithPods) {
  auto def = testing::Ours("jobset-x-k8s-io-jobset-v1alpha2");
  ASSERT_NE(def, nullptr);
  Seed seed;
  auto w = ResolveWorkload(*def, testing::TestEngine(), seed.Input());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_THAT(w->status().matched_statuses(), ElementsAre("Running"));
  const auto& leader = Instance(*w, "leader");
  EXPECT_EQ(leader.replicas().desired(), 1);
  EXPECT_EQ(leader.replicas().ready(), 1);
  EXPECT_EQ(leader.resources().quantities().at("nvidia.com/gpu"), 4);
  ASSERT_EQ(leader.pods_size(), 1);
  EXPECT_EQ(leader.pods(0).node(), "gpu-node-1");
  EXPECT_EQ(leader.pods(0).replica_key(), "0");
  const auto& worker = Instance(*w, "worker");
  EXPECT_EQ(worker.replicas().desired(), 2);
  EXPECT_EQ(worker.replicas().current(), 2);
  EXPECT_EQ(worker.replicas().ready(), 2);
  EXPECT_EQ(worker.resources().quantities().at("nvidia.com/gpu"), 8);
  EXPECT_THAT(worker.nodes(), ElementsAre("gpu-node-2", "gpu-node-3"));
  EXPECT_EQ(w->resources().quantities().at("nvidia.com/gpu"), 12);
  EXPECT_THAT(w->nodes(), ElementsAre("gpu-node-1", "gpu-node-2", "gpu-node-3"));
  EXPECT_EQ(w->ref().kind(), "JobSet");
  EXPECT_EQ(w->definition().name(), "jobset-x-k8s-io-jobset-v1alpha2");

  // Gang: one PodGroup for the whole JobSet, every pod in it.
  ASSERT_EQ(w->gang().pod_groups_size(), 1);
  const auto& group = w->gang().pod_groups(0);
  EXPECT_EQ(group.name(), "pg-a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f-jobset");
  EXPECT_EQ(group.min_member(), 3);
  ASSERT_EQ(w->gang().assignments_size(), 3);
  for (const auto& a : w->gang().assignments()) {
    EXPECT_EQ(a.pod_group(), group.name()) << a.pod() << ": " << a.error();
  }
}

// Our LeaderWorkerSet definition counts its groups with `until`, a tail
// recursion: 900 groups (of 2 pods, more than a slice of placement) resolve
// whole, every pod under its group's leader or worker, in its group's gang.
// Before tail calls ran in constant stack, the group component failed at
// about 280 groups ("expression recursed too deeply"). The daemon's engine;
// libjq optimizes tail calls too.
TEST(ResolverTest, LeaderWorkerSetOfManyGroups) {
  auto def =
      testing::Ours("leaderworkerset-x-k8s-io-leaderworkerset-v1", testing::NativeTestEngine());
  ASSERT_NE(def, nullptr);
  constexpr int kGroups = 900;
  Json lws = {{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
              {"kind", "LeaderWorkerSet"},
              {"metadata", {{"name", "serve"}, {"namespace", "ml"}, {"uid", "lws"}}}};
  lws["spec"]["replicas"] = kGroups;
  lws["spec"]["leaderWorkerTemplate"]["size"] = 2;
  lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"] = Json::array();
  std::vector<Json> pods;
  for (int g = 0; g < kGroups; ++g) {
    for (int i = 0; i < 2; ++i) {
      std::string leader = absl::StrCat("serve-", g);
      Json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata",
                   {{"name", i == 0 ? leader : leader + "-1"},
                    {"uid", absl::StrCat("pod-", g, "-", i)},
                    {"labels",
                     {{"leaderworkerset.sigs.k8s.io/name", "serve"},
                      {"leaderworkerset.sigs.k8s.io/group-index", absl::StrCat(g)},
                      {"leaderworkerset.sigs.k8s.io/worker-index", absl::StrCat(i)}}},
                    {"ownerReferences", {{{"uid", "lws"}, {"controller", true}}}}}}};
      if (i == 1)
        pod["metadata"]["annotations"]["leaderworkerset.sigs.k8s.io/leader-name"] = leader;
      pods.push_back(std::move(pod));
    }
  }
  WorkloadInput in{&lws};
  for (const Json& pod : pods) in.pods.push_back(&pod);
  auto w = ResolveWorkload(*def, testing::NativeTestEngine(), in);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->root().instances_size(), 1);
  const v1::Component& group = w->root().instances(0).children(0);
  ASSERT_FALSE(group.has_error()) << group.error().message();
  ASSERT_EQ(group.instances_size(), kGroups);
  for (const v1::ComponentInstance& instance : group.instances()) {
    ASSERT_EQ(instance.children_size(), 2) << instance.id();
    for (const v1::Component& role : instance.children()) {
      ASSERT_EQ(role.instances_size(), 1) << instance.id() << " " << role.name();
      EXPECT_EQ(role.instances(0).pods_size(), 1) << instance.id() << " " << role.name();
    }
  }
  EXPECT_EQ(w->gang().pod_groups_size(), kGroups);
  ASSERT_EQ(w->gang().assignments_size(), 2 * kGroups);
  for (const auto& a : w->gang().assignments()) {
    EXPECT_EQ(a.error(), "") << a.pod();
    EXPECT_EQ(a.pod_group(), "pg-lws-serve-" + a.pod().substr(6, a.pod().find('-', 6) - 6))
        << a.pod();
  }
  for (const auto& pg : w->gang().pod_groups()) EXPECT_EQ(pg.min_member(), 2) << pg.name();
}

TEST(ResolverTest, SeedManifestAloneHasDesiredScale) {
  auto def = testing::Ours("jobset-x-k8s-io-jobset-v1alpha2");
  auto docs = ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/jobset.yaml");
  ASSERT_TRUE(docs.ok());
  WorkloadInput in{&(*docs)[0]};
  auto w = ResolveWorkload(*def, testing::TestEngine(), in);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(Instance(*w, "leader").replicas().desired(), 1);
  EXPECT_EQ(Instance(*w, "worker").replicas().desired(), 2);
  EXPECT_EQ(Instance(*w, "worker").replicas().current(), 0);
  EXPECT_EQ(w->resources().quantities().at("nvidia.com/gpu"), 12);
  // No status yet: initializing.
  EXPECT_THAT(w->status().matched_statuses(), ElementsAre("Initializing"));
}

TEST(ResolverTest, PodsOfOtherWorkloadsAreIgnored) {
  auto def = testing::Ours("jobset-x-k8s-io-jobset-v1alpha2");
  Seed seed;
  Json stranger = seed.docs.back();
  stranger["metadata"]["name"] = "stranger";
  stranger["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
  WorkloadInput in = seed.Input();
  in.pods.push_back(&stranger);
  auto w = ResolveWorkload(*def, testing::TestEngine(), in);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(Instance(*w, "worker").pods_size(), 2);
}

TEST(ResolverTest, SuspendAndResumeProducePatches) {
  auto def = testing::Ours("jobset-x-k8s-io-jobset-v1alpha2");
  Seed seed;
  testing::WithEvaluation(*def, [&](Evaluation& eval) {
    auto suspended = ApplySuspend(eval, seed.docs[0], 0, true);
    ASSERT_TRUE(suspended.ok()) << suspended.status();
    EXPECT_EQ((*suspended)["spec"]["suspend"], true);
    EXPECT_EQ(JsonPatch(seed.docs[0], *suspended),
              Json::parse(R"([{"op":"add","path":"/spec/suspend","value":true}])"));
    auto resumed = ApplySuspend(eval, *suspended, 0, false);
    ASSERT_TRUE(resumed.ok());
    EXPECT_EQ(JsonPatch(*suspended, *resumed),
              Json::parse(R"([{"op":"replace","path":"/spec/suspend","value":false}])"));
    auto none = ApplySuspend(eval, seed.docs[0], 1, true);
    EXPECT_FALSE(none.ok());
  });
}

TEST(ResolverTest, SetsSchedulerNameOnEveryPodTemplate) {
  auto def = testing::Ours("jobset-x-k8s-io-jobset-v1alpha2");
  Seed seed;
  testing::WithEvaluation(*def, [&](Evaluation& eval) {
    int rj = def->ComponentIndex("replicatedjob");
    std::map<std::string, Json> templates;
    for (const auto& job : seed.docs[0]["spec"]["replicatedJobs"]) {
      Json t = job["template"]["spec"]["template"];
      t["spec"]["schedulerName"] = "kai-scheduler";
      templates[job["name"]] = t;
    }
    auto out = UpdatePodField(eval, seed.docs[0], rj, PodField::kPodTemplateSpec, templates);
    ASSERT_TRUE(out.ok()) << out.status();
    Json patch = JsonPatch(seed.docs[0], *out);
    ASSERT_EQ(patch.size(), 2u) << patch.dump();
    EXPECT_EQ(patch[0]["path"], "/spec/replicatedJobs/0/template/spec/template/spec/schedulerName");
    EXPECT_EQ(patch[1]["path"], "/spec/replicatedJobs/1/template/spec/template/spec/schedulerName");
    EXPECT_EQ(seed.docs[0].patch(patch), *out);
  });
}

TEST(ResolverTest, ResourceAggregationRules) {
  Json spec = Json::parse(R"({
    "containers": [
      {"name": "a", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1", "memory": "1Gi"}}},
      {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "2", "example.com/fpga": "1"}}}],
    "initContainers": [
      {"name": "init", "resources": {"requests": {"cpu": "4", "memory": "512Mi"}}},
      {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}}],
    "overhead": {"cpu": "100m"}})");
  Resources r = PodSpecRequests(spec).value();
  // max(init 4, containers 0.5 + sidecar 0.25) + overhead 0.1
  EXPECT_EQ(r["cpu"], 4100);
  EXPECT_EQ(r["memory"], (int64_t{1} << 30) * 1000);
  EXPECT_EQ(r["nvidia.com/gpu"], 2000);
  EXPECT_EQ(r["example.com/fpga"], 1000);
  spec["resources"] = {{"requests", {{"cpu", "8"}}}};
  EXPECT_EQ(PodSpecRequests(spec).value()["cpu"], 8100);  // pod-level replaces, overhead on top
}

TEST(ResolverTest, BadQuantitiesAreErrorsNamingTheField) {
  Json spec = Json::parse(R"({"containers": [{"name": "a"},
      {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "-4"}}}]})");
  EXPECT_EQ(
      PodSpecRequests(spec).status().message(),
      "containers[1].resources.limits.nvidia.com/gpu: quantity \"-4\" is negative (at least 0)");
  spec["containers"][1]["resources"]["limits"]["nvidia.com/gpu"] = "999Ei";
  EXPECT_THAT(PodSpecRequests(spec).status().message(),
              HasSubstr("containers[1].resources.limits.nvidia.com/gpu: quantity \"999Ei\" is out "
                        "of range"));
  spec["containers"][1]["resources"]["limits"]["nvidia.com/gpu"] = "four";
  EXPECT_EQ(PodSpecRequests(spec).status().message(),
            "containers[1].resources.limits.nvidia.com/gpu: invalid quantity \"four\"");
  // Two containers of 8Pi each sum past int64 thousandths.
  spec["containers"][0]["resources"]["requests"]["memory"] = "8Pi";
  spec["containers"][1]["resources"] = {{"requests", {{"memory", "8Pi"}}}};
  EXPECT_THAT(PodSpecRequests(spec).status().message(),
              HasSubstr("memory: 8Pi + 8Pi overflows the largest quantity"));
}

// The seed JobSet manifest with one change.
absl::StatusOr<v1::ResolvedWorkload> ResolveSeedWith(const std::function<void(Json&)>& change) {
  auto def = testing::Ours("jobset-x-k8s-io-jobset-v1alpha2");
  Json jobset =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/jobset.yaml").value()[0];
  change(jobset);
  WorkloadInput in{&jobset};
  return ResolveWorkload(*def, testing::TestEngine(), in);
}

Json& LeaderLimits(Json& jobset) {
  return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]
               [0]["resources"]["limits"];
}

TEST(ResolverTest, ScaleAndResourceArithmeticIsChecked) {
  // 1 leader + 2147483647 workers: more desired replicas than int32 holds.
  auto w =
      ResolveSeedWith([](Json& j) { j["spec"]["replicatedJobs"][1]["replicas"] = 2147483647; });
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("overflow int32"));
  // Negative scale values are refused with their definition field, on
  // their component (a partial answer).
  w = ResolveSeedWith([](Json& j) { j["spec"]["replicatedJobs"][1]["replicas"] = -2; });
  ASSERT_TRUE(w.ok()) << w.status();
  const v1::Component& replicatedjob = w->root().instances(0).children(0);
  EXPECT_EQ(replicatedjob.error().field_path(),
            "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath");
  EXPECT_EQ(replicatedjob.error().message(),
            "instance worker: replica count -2 is negative (at least 0)");
  EXPECT_EQ(replicatedjob.instances_size(), 0);
  // Negative quantities too, with the instance and the field.
  w = ResolveSeedWith([](Json& j) { LeaderLimits(j)["nvidia.com/gpu"] = "-4"; });
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "component replicatedjob instance leader pod spec: containers[0].resources.limits."
            "nvidia.com/gpu: quantity \"-4\" is negative (at least 0)");
  // Per-pod × replicas past int64 thousandths.
  w = ResolveSeedWith([](Json& j) {
    LeaderLimits(j)["memory"] = "8Pi";
    j["spec"]["replicatedJobs"][0]["replicas"] = 2000;
  });
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(),
              HasSubstr("component replicatedjob instance leader resources × replicas: memory: 8Pi "
                        "× 2000 overflows the largest quantity"));
}

}  // namespace
}  // namespace wm::resolution
