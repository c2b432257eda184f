#include "server/controllers/pod_groups.h"

#include "gtest/gtest.h"

namespace wm::controllers {
namespace {

namespace v1 = workloadmap::v1;

Json TopOwner() {
  return Json::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "train", "namespace": "ml", "uid": "0b5e-77",
      "labels": {"team": "vision", "kai.scheduler/queue": "q1"},
      "annotations": {"note": "hi"}}
  })");
}

// A gang of a leader subgroup (1 pod) and a workers subgroup (4 pods).
v1::PodGroup Gang() {
  v1::PodGroup group;
  group.set_name("pg-0b5e-77-train");
  group.set_min_member(5);
  group.set_queue("q1");
  group.mutable_topology()->set_topology("rack-topology");
  group.mutable_topology()->set_required_topology_level("rack");
  v1::SubGroup* leader = group.add_sub_groups();
  leader->set_name("leader");
  leader->set_min_member(1);
  v1::SubGroup* workers = group.add_sub_groups();
  workers->set_name("workers");
  workers->set_min_member(4);
  return group;
}

// Two replicas of a slice (2 pods each), of which one is needed.
v1::PodGroup SubGroupGang() {
  v1::PodGroup group;
  group.set_name("pg-0b5e-77-slices");
  group.set_min_sub_group(1);
  group.set_queue("default-queue");
  for (const char* name : {"slice-0", "slice-1"}) {
    v1::SubGroup* sub = group.add_sub_groups();
    sub->set_name(name);
    sub->set_min_member(2);
  }
  return group;
}

TEST(DesiredPodGroupTest, KaiAsItsPodGrouperWritesIt) {
  Json pg =
      DesiredPodGroup(GangScheduler::kKai, Gang(), TopOwner(), {.kai_priority_class = "train"});
  Json expected = Json::parse(R"({
    "apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
    "metadata": {"name": "pg-0b5e-77-train", "namespace": "ml",
      "labels": {"team": "vision", "kai.scheduler/queue": "q1"},
      "annotations": {"note": "hi",
        "kai.scheduler/top-owner-metadata":
          "name: train\nuid: 0b5e-77\ngroup: jobset.x-k8s.io\nversion: v1alpha2\nkind: JobSet\n"},
      "ownerReferences": [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                           "name": "train", "uid": "0b5e-77"}]},
    "spec": {"queue": "q1", "priorityClassName": "train", "minMember": 5,
      "subGroups": [{"name": "leader", "minMember": 1}, {"name": "workers", "minMember": 4}],
      "topologyConstraint": {"topology": "rack-topology", "requiredTopologyLevel": "rack"}}
  })");
  EXPECT_EQ(pg, expected) << pg.dump(2);
}

TEST(DesiredPodGroupTest, TopOwnerMetadataQuotesWhatYamlWouldReadAsAnotherType) {
  Json owner = TopOwner();
  owner["apiVersion"] = "v1";
  owner["kind"] = "Pod";
  owner["metadata"]["name"] = "123";
  Json pg = DesiredPodGroup(GangScheduler::kKai, Gang(), owner, {});
  EXPECT_EQ(pg["metadata"]["annotations"]["kai.scheduler/top-owner-metadata"],
            "name: \"123\"\nuid: 0b5e-77\ngroup: \"\"\nversion: v1\nkind: Pod\n");
}

TEST(DesiredPodGroupTest, KaiWithoutMinSubGroupInItsSchemaCountsTheFewestPods) {
  Json pg = DesiredPodGroup(GangScheduler::kKai, SubGroupGang(), TopOwner(),
                            {.schema = {.min_sub_group = false}});
  EXPECT_EQ(pg["spec"]["minMember"], 2);  // one slice of two pods
  EXPECT_FALSE(pg["spec"].contains("minSubGroup"));
  Json current = DesiredPodGroup(GangScheduler::kKai, SubGroupGang(), TopOwner(), {});
  EXPECT_EQ(current["spec"]["minSubGroup"], 1);
  EXPECT_FALSE(current["spec"].contains("minMember"));
  EXPECT_FALSE(current["spec"].contains("priorityClassName"));
}

TEST(DesiredPodGroupTest, VolcanoCountsPodsAndTasks) {
  Json owner = TopOwner();
  owner["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] = "research";
  Json pg = DesiredPodGroup(GangScheduler::kVolcano, Gang(), owner, {});
  Json expected = Json::parse(R"({
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "pg-0b5e-77-train", "namespace": "ml",
      "ownerReferences": [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                           "name": "train", "uid": "0b5e-77"}]},
    "spec": {"minMember": 5, "minTaskMember": {"leader": 1, "workers": 4}, "queue": "research"}
  })");
  EXPECT_EQ(pg, expected) << pg.dump(2);
  // A gang that may leave subgroups out has no per-task minimum.
  Json slices = DesiredPodGroup(GangScheduler::kVolcano, SubGroupGang(), TopOwner(), {});
  EXPECT_EQ(slices["spec"], Json({{"minMember", 2}}));
}

TEST(DesiredPodGroupTest, CoschedulingCountsPods) {
  Json pg = DesiredPodGroup(GangScheduler::kCoscheduling, Gang(), TopOwner(), {});
  EXPECT_EQ(pg["apiVersion"], "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(pg["spec"], Json({{"minMember", 5}}));
  EXPECT_EQ(pg["metadata"]["ownerReferences"][0]["uid"], "0b5e-77");
}

// The object as the apiserver returns it: what was written, and more.
Json Served(Json object) {
  object["metadata"]["resourceVersion"] = "41";
  object["metadata"]["uid"] = "pg-uid";
  object["metadata"]["labels"]["added-by-someone"] = "x";
  object["spec"]["markUnschedulable"] = false;
  object["status"] = {{"phase", "Pending"}};
  return object;
}

TEST(PodGroupPatchTest, NothingWhenTheServedObjectCarriesEverything) {
  for (GangScheduler scheduler :
       {GangScheduler::kKai, GangScheduler::kVolcano, GangScheduler::kCoscheduling}) {
    Json desired = DesiredPodGroup(scheduler, Gang(), TopOwner(), {});
    EXPECT_EQ(PodGroupPatch(Served(desired), desired), std::nullopt)
        << GangSchedulerName(scheduler);
  }
}

TEST(PodGroupPatchTest, AScaledWorkloadChangesTheCountsWithTheResourceVersion) {
  Json served = Served(DesiredPodGroup(GangScheduler::kKai, Gang(), TopOwner(), {}));
  v1::PodGroup scaled = Gang();
  scaled.set_min_member(9);
  scaled.mutable_sub_groups(1)->set_min_member(8);
  Json desired = DesiredPodGroup(GangScheduler::kKai, scaled, TopOwner(), {});
  std::optional<Json> patch = PodGroupPatch(served, desired);
  ASSERT_TRUE(patch);
  Json expected = Json::parse(R"({
    "metadata": {"resourceVersion": "41"},
    "spec": {"minMember": 9,
             "subGroups": [{"name": "leader", "minMember": 1}, {"name": "workers", "minMember": 8}]}
  })");
  EXPECT_EQ(*patch, expected) << patch->dump(2);
}

TEST(PodGroupPatchTest, AQueueOnceSetIsLeftAlone) {
  Json served = Served(DesiredPodGroup(GangScheduler::kKai, Gang(), TopOwner(), {}));
  served["spec"]["queue"] = "moved-by-admin";
  EXPECT_EQ(PodGroupPatch(served, DesiredPodGroup(GangScheduler::kKai, Gang(), TopOwner(), {})),
            std::nullopt);
  served["spec"]["queue"] = "";
  auto patch = PodGroupPatch(served, DesiredPodGroup(GangScheduler::kKai, Gang(), TopOwner(), {}));
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["spec"]["queue"], "q1");
}

TEST(PodGroupPatchTest, MinMemberAndMinSubGroupReplaceEachOther) {
  Json served = Served(DesiredPodGroup(GangScheduler::kKai, Gang(), TopOwner(), {}));
  auto patch =
      PodGroupPatch(served, DesiredPodGroup(GangScheduler::kKai, SubGroupGang(), TopOwner(), {}));
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["spec"]["minSubGroup"], 1);
  EXPECT_TRUE((*patch)["spec"]["minMember"].is_null());
  EXPECT_TRUE((*patch)["spec"].contains("minMember"));
}

TEST(PodGroupPatchTest, ChangedLabelsAnnotationsAndAMissingOwnerAreWritten) {
  Json served = Served(DesiredPodGroup(GangScheduler::kKai, Gang(), TopOwner(), {}));
  served["metadata"].erase("ownerReferences");
  Json owner = TopOwner();
  owner["metadata"]["labels"]["team"] = "speech";
  auto patch = PodGroupPatch(served, DesiredPodGroup(GangScheduler::kKai, Gang(), owner, {}));
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["metadata"]["labels"], Json({{"team", "speech"}}));
  EXPECT_EQ((*patch)["metadata"]["ownerReferences"][0]["name"], "train");
  EXPECT_FALSE((*patch)["metadata"].contains("annotations"));
}

Json Pod() {
  return Json::parse(R"({"metadata": {"name": "train-w-0", "resourceVersion": "7",
                                      "labels": {"app": "x"}}})");
}

TEST(PodMembershipPatchTest, EachSchedulersOwnMarks) {
  auto kai = PodMembershipPatch(GangScheduler::kKai, Pod(), "pg-1", "workers");
  ASSERT_TRUE(kai);
  EXPECT_EQ(*kai, Json::parse(R"({"metadata": {"resourceVersion": "7",
      "annotations": {"pod-group-name": "pg-1"},
      "labels": {"kai.scheduler/subgroup-name": "workers"}}})"));
  auto volcano = PodMembershipPatch(GangScheduler::kVolcano, Pod(), "pg-1", "workers");
  ASSERT_TRUE(volcano);
  EXPECT_EQ(*volcano, Json::parse(R"({"metadata": {"resourceVersion": "7",
      "annotations": {"scheduling.k8s.io/group-name": "pg-1", "volcano.sh/task-spec": "workers"}}})"));
  auto cosched = PodMembershipPatch(GangScheduler::kCoscheduling, Pod(), "pg-1", "workers");
  ASSERT_TRUE(cosched);
  EXPECT_EQ(*cosched, Json::parse(R"({"metadata": {"resourceVersion": "7",
      "labels": {"scheduling.x-k8s.io/pod-group": "pg-1"}}})"));
}

TEST(PodMembershipPatchTest, NothingWhenThePodIsInItsGroup) {
  Json pod = Pod();
  pod["metadata"]["annotations"]["pod-group-name"] = "pg-1";
  pod["metadata"]["labels"]["kai.scheduler/subgroup-name"] = "workers";
  EXPECT_EQ(PodMembershipPatch(GangScheduler::kKai, pod, "pg-1", "workers"), std::nullopt);
  // A pod without a subgroup needs only the group.
  EXPECT_EQ(PodMembershipPatch(GangScheduler::kKai, pod, "pg-1", ""), std::nullopt);
  // Another group is another group.
  auto moved = PodMembershipPatch(GangScheduler::kKai, pod, "pg-2", "workers");
  ASSERT_TRUE(moved);
  EXPECT_EQ((*moved)["metadata"]["annotations"]["pod-group-name"], "pg-2");
  // Volcano: a task name the pod has is its own.
  Json vpod = Pod();
  vpod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "pg-1";
  vpod["metadata"]["annotations"]["volcano.sh/task-spec"] = "mine";
  EXPECT_EQ(PodMembershipPatch(GangScheduler::kVolcano, vpod, "pg-1", "workers"), std::nullopt);
}

TEST(KaiHasNativeGrouperTest, FollowsKaisTable) {
  EXPECT_TRUE(KaiHasNativeGrouper({"jobset.x-k8s.io", "v1alpha2", "JobSet"}));
  EXPECT_TRUE(KaiHasNativeGrouper({"kubeflow.org", "v1", "PyTorchJob"}));
  EXPECT_TRUE(KaiHasNativeGrouper({"run.ai", "v9", "TrainingWorkload"}));
  EXPECT_TRUE(KaiHasNativeGrouper({"nvidia.com", "v1beta1", "DynamoGraphDeployment"}));
  EXPECT_FALSE(KaiHasNativeGrouper({"kubeflow.org", "v2", "PyTorchJob"}));
  EXPECT_FALSE(KaiHasNativeGrouper({"serving.kserve.io", "v1beta1", "InferenceService"}));
  EXPECT_FALSE(KaiHasNativeGrouper({"scheduling.run.ai", "v2alpha2", "PodGroup"}));
}

}  // namespace
}  // namespace wm::controllers
