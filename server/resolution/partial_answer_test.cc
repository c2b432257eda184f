// Partial answers: an expression of one component that fails on the object
// costs that component only. The status, the other components with their
// pods, and the gang of their pods are still resolved, and the failed
// component says which definition field failed and why.

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/resolution/edit.h"
#include "server/resolution/field_error.h"
#include "server/resolution/resolver.h"
#include "server/resolution/test_support.h"
#include "server/resolution/testing/trainer_definition.h"

namespace wm::resolution {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
namespace v1 = ::workloadmap::v1;

constexpr char kFailedField[] = "spec.structureDefinition.childComponents[1].instanceIdPath";
// The engine's words for it ("Cannot iterate over null (null)" in jq 1.6,
// "cannot iterate over: null" in gojq).
constexpr char kIterateOverNull[] = "iterate over";

constexpr char kTrainer[] = R"(
apiVersion: example.com/v1
kind: Trainer
metadata: {name: tune, namespace: ml, uid: trainer-uid}
spec:
  worker:
    replicas: 2
    template:
      spec:
        containers:
        - {name: w, image: x, resources: {limits: {nvidia.com/gpu: '2'}}}
status: {phase: Running}
)";

Json PodOf(const std::string& name, const std::string& role) {
  return testing::Yaml(absl::StrCat(
      "{apiVersion: v1, kind: Pod, metadata: {name: ", name, ", namespace: ml, uid: ", name,
      "-uid, labels: {role: ", role,
      ", evaluator: e1}, ownerReferences: [{controller: true, uid: "
      "trainer-uid, kind: Trainer, name: tune, apiVersion: example.com/v1}]}, spec: {nodeName: ",
      name, "-node, containers: [{name: c, resources: {limits: {nvidia.com/gpu: '2'}}}]}, ",
      "status: {phase: Running, conditions: [{type: Ready, status: 'True'}]}}"));
}

const v1::Component& Child(const v1::ResolvedWorkload& w, const std::string& name) {
  for (const auto& c : w.root().instances(0).children()) {
    if (c.name() == name) return c;
  }
  ADD_FAILURE() << "no component " << name;
  static v1::Component none;
  return none;
}

class PartialAnswerTest : public ::testing::Test {
 protected:
  std::shared_ptr<const definitions::CompiledDefinition> def_ =
      testing::CompileYaml(testing::kTrainerDefinition, "trainer");
  Json trainer_ = testing::Yaml(kTrainer);
  Json worker_0_ = PodOf("worker-0", "worker"), worker_1_ = PodOf("worker-1", "worker");
  Json evaluator_ = PodOf("evaluator-0", "evaluator");

  WorkloadInput Input() const { return {&trainer_, {&worker_0_, &worker_1_, &evaluator_}, {}}; }
};

TEST_F(PartialAnswerTest, FailingInstanceIdPathKeepsStatusOtherComponentsAndPods) {
  ASSERT_NE(def_, nullptr);
  auto w = ResolveWorkload(*def_, testing::TestEngine(), Input());
  ASSERT_TRUE(w.ok()) << w.status();

  EXPECT_EQ(w->status().phase(), "");
  EXPECT_THAT(w->status().matched_statuses(), ElementsAre("Running"));

  const v1::Component& evaluator = Child(*w, "evaluator");
  EXPECT_EQ(evaluator.error().field_path(), kFailedField);
  EXPECT_THAT(evaluator.error().message(),
              AllOf(Not(HasSubstr(kFailedField)), HasSubstr(kIterateOverNull)));
  EXPECT_TRUE(evaluator.has_pod_definition());
  EXPECT_EQ(evaluator.instances_size(), 0);
  EXPECT_EQ(evaluator.replicas().desired(), 0);
  EXPECT_TRUE(evaluator.resources().quantities().empty());

  const v1::Component& worker = Child(*w, "worker");
  EXPECT_FALSE(worker.has_error());
  ASSERT_EQ(worker.instances_size(), 1);
  EXPECT_EQ(worker.instances(0).replicas().desired(), 2);
  EXPECT_EQ(worker.instances(0).replicas().ready(), 2);
  ASSERT_EQ(worker.instances(0).pods_size(), 2);
  EXPECT_EQ(worker.instances(0).pods(0).name(), "worker-0");
  EXPECT_EQ(w->resources().quantities().at("nvidia.com/gpu"), 4);  // workers only
  // The evaluator's pod has no instance to be listed under, but its node
  // is the workload's.
  EXPECT_THAT(w->nodes(), ElementsAre("evaluator-0-node", "worker-0-node", "worker-1-node"));
  EXPECT_FALSE(w->root().has_error());
  // The one failed component, as ComponentErrors lists it.
  EXPECT_THAT(ComponentErrors(*w),
              ElementsAre(AllOf(StartsWith(absl::StrCat("evaluator ", kFailedField, ": ")),
                                HasSubstr(kIterateOverNull))));
}

TEST_F(PartialAnswerTest, GangOfTheOtherComponentsIsStillResolved) {
  ASSERT_NE(def_, nullptr);
  auto w = ResolveWorkload(*def_, testing::TestEngine(), Input());
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->gang().assignments_size(), 3);
  for (const auto& a : w->gang().assignments()) {
    if (a.pod() == "evaluator-0") {
      // Its group would count the failed component: too small a gang.
      EXPECT_EQ(a.pod_group(), "");
      EXPECT_THAT(a.error(),
                  AllOf(StartsWith(absl::StrCat(
                            "component evaluator could not be resolved: ", kFailedField, ": ")),
                        HasSubstr(kIterateOverNull)));
    } else {
      EXPECT_EQ(a.pod_group(), "pg-trainer-uid") << a.pod() << ": " << a.error();
      EXPECT_EQ(a.error(), "");
    }
  }
  ASSERT_EQ(w->gang().pod_groups_size(), 1);
  EXPECT_EQ(w->gang().pod_groups(0).min_member(), 2);
}

TEST_F(PartialAnswerTest, WholeAnswerWhenTheExpressionSucceeds) {
  ASSERT_NE(def_, nullptr);
  trainer_["spec"]["evaluators"] =
      testing::Yaml("[{name: e1, template: {spec: {containers: [{name: e, image: x}]}}}]");
  auto w = ResolveWorkload(*def_, testing::TestEngine(), Input());
  ASSERT_TRUE(w.ok()) << w.status();
  const v1::Component& evaluator = Child(*w, "evaluator");
  EXPECT_FALSE(evaluator.has_error());
  ASSERT_EQ(evaluator.instances_size(), 1);
  ASSERT_EQ(evaluator.instances(0).pods_size(), 1);
  EXPECT_EQ(evaluator.instances(0).pods(0).name(), "evaluator-0");
  EXPECT_THAT(ComponentErrors(*w), ElementsAre());
}

TEST_F(PartialAnswerTest, FailingRootComponentKeepsTheStatus) {
  Json root_fails = testing::Yaml(testing::kTrainerDefinition);
  root_fails["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {
      {"replicasPath", ".spec.size[]"}};
  auto def = testing::CompileYaml(root_fails.dump(), "root-fails");
  ASSERT_NE(def, nullptr);
  auto w = ResolveWorkload(*def, testing::TestEngine(), Input());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_THAT(w->status().matched_statuses(), ElementsAre("Running"));
  EXPECT_EQ(w->root().error().field_path(),
            "spec.structureDefinition.rootComponent.scaleDefinition.replicasPath");
  EXPECT_EQ(w->root().instances_size(), 0);
}

TEST_F(PartialAnswerTest, FailingStatusStillFailsTheResolution) {
  Json status_fails = testing::Yaml(testing::kTrainerDefinition);
  status_fails["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
              ["running"][0]["byExpression"]["expression"] = ".status.x[]";
  auto def = testing::CompileYaml(status_fails.dump(), "status-fails");
  ASSERT_NE(def, nullptr);
  auto w = ResolveWorkload(*def, testing::TestEngine(), Input());
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("statusMappings"));
  EXPECT_THAT(w.status().message(), HasSubstr(kIterateOverNull));
}

TEST_F(PartialAnswerTest, MutationNeedsTheWholeTree) {
  ASSERT_NE(def_, nullptr);
  WorkloadEdit edit;
  edit.templates.push_back(
      {.component = "worker", .merge_patch = {{"spec", {{"schedulerName", "kai-scheduler"}}}}});
  auto edited = EditWorkload(*def_, testing::TestEngine(), trainer_, edit);
  ASSERT_FALSE(edited.ok());
  EXPECT_THAT(std::string(edited.status().message()),
              AllOf(StartsWith(absl::StrCat(kFailedField, ": ")), HasSubstr(kIterateOverNull)));
}

TEST(FieldErrorTest, KeepsFieldAndDetailApart) {
  absl::Status e = FieldError(absl::StatusCode::kInvalidArgument, "a.b", "went wrong");
  EXPECT_EQ(e.message(), "a.b: went wrong");
  EXPECT_EQ(FieldPathOf(e), "a.b");
  EXPECT_EQ(DetailOf(e), "went wrong");
  absl::Status own_words = WithFieldPath(absl::InvalidArgumentError("counts differ"), "a.c");
  EXPECT_EQ(FieldPathOf(own_words), "a.c");
  EXPECT_EQ(DetailOf(own_words), "counts differ");
  EXPECT_EQ(FieldPathOf(absl::InternalError("x")), "");
  EXPECT_EQ(DetailOf(absl::InternalError("x")), "x");
}

}  // namespace
}  // namespace wm::resolution
