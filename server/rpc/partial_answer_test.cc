// Partial answers through the service: a workload one of whose components
// fails an expression is answered (OK) with the error on that component,
// and listed with its phase, over a snapshot cluster.

#include <chrono>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/common/testing/scratch_dir.h"
#include "server/common/yaml_json.h"
#include "server/definitions/registry.h"
#include "server/expressions/jq_engine.h"
#include "server/index/snapshot_cluster.h"
#include "server/resolution/testing/trainer_definition.h"
#include "server/rpc/testing/service_harness.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::rpc {
namespace {

using ::wm::index::Cluster;
using ::wm::index::SnapshotCluster;

namespace v1 = workloadmap::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 2}).value().release();
  return *engine;
}

constexpr char kSnapshot[] = R"(
apiVersion: example.com/v1
kind: Trainer
metadata: {name: tune, namespace: ml, uid: trainer-uid, creationTimestamp: '2026-11-30T18:30:00Z'}
spec:
  worker:
    replicas: 1
    template:
      spec:
        containers:
        - {name: w, image: x, resources: {limits: {nvidia.com/gpu: '2'}}}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: tune-worker-0
  namespace: ml
  uid: worker-uid
  labels: {role: worker}
  ownerReferences:
  - {apiVersion: example.com/v1, kind: Trainer, name: tune, uid: trainer-uid, controller: true}
spec:
  nodeName: node-1
  containers:
  - {name: w, image: x, resources: {limits: {nvidia.com/gpu: '2'}}}
status:
  phase: Running
  conditions: [{type: Ready, status: 'True'}]
)";

constexpr char kFailedField[] = "spec.structureDefinition.childComponents[1].instanceIdPath";
// The engine's words for it ("Cannot iterate over null (null)" in jq 1.6,
// "cannot iterate over: null" in gojq).
constexpr char kIterateOverNull[] = "iterate over";

const v1::Component* Child(const v1::ResolvedWorkload& w, const std::string& name) {
  if (w.root().instances_size() == 0) return nullptr;
  for (const auto& c : w.root().instances(0).children()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
}

class PartialAnswerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = std::make_shared<definitions::Registry>(Engine());
    ASSERT_TRUE(registry
                    ->AddDocuments({{"trainer.yaml", resolution::testing::kTrainerDefinition}},
                                   definitions::Origin::kFile)
                    .ok());
    for (const auto& r : registry->rejected()) {
      for (const auto& f : r.findings) ADD_FAILURE() << r.name << ": " << f.ToString();
    }
    snapshot_dir_.Write("trainer.yaml", kSnapshot);
    auto snapshot = SnapshotCluster::Load(snapshot_dir_.path(), registry);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    snapshot_ = *std::move(snapshot);
    harness_ = std::make_unique<testing::ServiceHarness>(std::vector<Cluster*>{snapshot_.get()},
                                                         Engine(), WorkloadMapService::Options{});
    ASSERT_TRUE(harness_->started());
    snapshot_->Feed(harness_->index());
    harness_->index().WaitForIdle();
  }

  static v1::ObjectRef TuneRef() {
    v1::ObjectRef ref;
    ref.set_kind("Trainer");
    ref.set_namespace_("ml");
    ref.set_name("tune");
    return ref;
  }

  // The worker's pod and the status survive; the evaluator names its field.
  static void ExpectPartial(const v1::ResolvedWorkload& w, bool with_pods) {
    EXPECT_THAT(w.status().matched_statuses(), ElementsAre("Running"));
    const v1::Component* evaluator = Child(w, "evaluator");
    ASSERT_NE(evaluator, nullptr);
    EXPECT_EQ(evaluator->error().field_path(), kFailedField);
    EXPECT_THAT(evaluator->error().message(), HasSubstr(kIterateOverNull));
    EXPECT_EQ(evaluator->instances_size(), 0);
    const v1::Component* worker = Child(w, "worker");
    ASSERT_NE(worker, nullptr);
    EXPECT_FALSE(worker->has_error());
    ASSERT_EQ(worker->instances_size(), 1);
    EXPECT_EQ(worker->instances(0).replicas().ready(), 1);
    if (with_pods) {
      ASSERT_EQ(worker->instances(0).pods_size(), 1);
      EXPECT_EQ(worker->instances(0).pods(0).name(), "tune-worker-0");
    }
  }

  std::unique_ptr<SnapshotCluster> snapshot_;
  wm::testing::ScratchDir snapshot_dir_{"rpc_partial_answer_snapshot"};
  std::unique_ptr<testing::ServiceHarness> harness_;  // destroyed before the cluster
};

TEST_F(PartialAnswerTest, ResolveByRefSucceedsWithTheComponentError) {
  for (bool with_pods : {false, true}) {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = TuneRef();
    request.set_include_pods(with_pods);
    v1::ResolveWorkloadResponse response;
    grpc::ClientContext context;
    SetDeadline(context);
    grpc::Status status = harness_->stub().ResolveWorkload(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ExpectPartial(response.workload(), with_pods);
  }
}

TEST_F(PartialAnswerTest, ResolveInlineSucceedsWithTheComponentError) {
  std::string text = kSnapshot;
  size_t split = text.find("---\n");
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(
      ParseYamlDocuments(text.substr(0, split)).value().at(0).dump());
  request.mutable_inline_()->add_pod_json(
      ParseYamlDocuments(text.substr(split + 4)).value().at(0).dump());
  request.set_include_pods(true);
  v1::ResolveWorkloadResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = harness_->stub().ResolveWorkload(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectPartial(response.workload(), true);
}

TEST_F(PartialAnswerTest, ListWorkloadsShowsThePhaseAndTheFailedComponent) {
  v1::ListWorkloadsResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = harness_->stub().ListWorkloads(&context, {}, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.workloads_size(), 1);
  const v1::WorkloadSummary& row = response.workloads(0);
  EXPECT_EQ(row.error(), "");
  EXPECT_THAT(row.matched_statuses(), ElementsAre("Running"));
  ASSERT_EQ(row.components_size(), 2);
  EXPECT_EQ(row.components(0).name(), "worker");
  EXPECT_EQ(row.components(0).replicas().ready(), 1);
  EXPECT_EQ(row.components(0).gpus(), 2);
  EXPECT_EQ(row.components(0).error(), "");
  EXPECT_EQ(row.components(1).name(), "evaluator");
  EXPECT_THAT(row.components(1).error(), StartsWith(absl::StrCat(kFailedField, ": ")));
  EXPECT_THAT(row.components(1).error(), HasSubstr(kIterateOverNull));
  EXPECT_EQ(row.gpus(), 2);
}

TEST_F(PartialAnswerTest, GangOfTheOtherComponentsIsAnswered) {
  v1::GetGangInstructionsRequest request;
  *request.mutable_workload() = TuneRef();
  v1::GetGangInstructionsResponse response;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = harness_->stub().GetGangInstructions(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.gang().assignments_size(), 1);
  EXPECT_EQ(response.gang().assignments(0).pod(), "tune-worker-0");
  EXPECT_EQ(response.gang().assignments(0).error(), "");
  ASSERT_EQ(response.gang().pod_groups_size(), 1);
  EXPECT_EQ(response.gang().pod_groups(0).min_member(), 1);
}

}  // namespace
}  // namespace wm::rpc
