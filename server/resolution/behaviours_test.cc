// The fifteen behaviours a compatible implementation must get exactly right
// (definition-format.md §9), each with its example, over our own catalog's
// definitions (catalog/) or definitions written here.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/definitions/validate.h"
#include "server/resolution/gang.h"
#include "server/resolution/mutation.h"
#include "server/resolution/resolver.h"
#include "server/resolution/status.h"
#include "server/resolution/test_support.h"
#include "server/resolution/tree.h"

namespace wm::resolution {
namespace {

using testing::CompileYaml;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Ours;
using testing::WithEvaluation;
using testing::Yaml;
namespace v1 = ::workloadmap::v1;

std::vector<std::string> Statuses(const definitions::CompiledDefinition& def, const Json& object) {
  WorkloadInput input{&object};
  auto resolved = ResolveWorkload(def, testing::TestEngine(), input);
  EXPECT_TRUE(resolved.ok()) << resolved.status();
  if (!resolved.ok()) return {"<error>"};
  return {resolved->status().matched_statuses().begin(),
          resolved->status().matched_statuses().end()};
}

// A Job-like workload whose mappings are listed out of the fixed order.
constexpr char kOrderDefinition[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: order}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      statusDefinition:
        statusMappings:
          degraded:
          - byExpression: {expression: '(.status.succeeded // 0) > 0', expectedResult: 'true'}
          initializing:
          - byExpression: {expression: '(.status.ready // 0) == 0', expectedResult: 'true'}
          running:
          - byExpression: {expression: '(.status.active // 0) > 0', expectedResult: 'true'}
)";

// 1. Fixed order, all matches.
TEST(BehaviourTest, B01StatusOrderAndMultiplicity) {
  auto def = CompileYaml(kOrderDefinition, "order");
  Json thing = Yaml(R"(
apiVersion: example.com/v1
kind: Thing
metadata: {name: t}
status: {active: 2, ready: 1, succeeded: 1}
)");
  EXPECT_THAT(Statuses(*def, thing), ElementsAre("Running", "Degraded"));
  thing["status"]["ready"] = 0;
  EXPECT_THAT(Statuses(*def, thing), ElementsAre("Running", "Initializing", "Degraded"));
}

// 2. No match means Undefined. (Upstream's "a root without statusDefinition
// has no status" cannot arise here: validation requires one on the root.)
TEST(BehaviourTest, B02NoMatchIsUndefined) {
  auto pod = Ours("core-pod-v1");
  EXPECT_THAT(Statuses(*pod, Yaml("{apiVersion: v1, kind: Pod, metadata: {name: p}, status: "
                                  "{phase: Unknown}}")),
              ElementsAre("Undefined"));
}

// 3. byConditions: type map plus optional status and reason.
TEST(BehaviourTest, B03ByConditions) {
  auto def = Ours("apps-deployment-v1");
  EXPECT_THAT(Statuses(*def, Yaml(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
status:
  conditions:
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
  - {type: Available, status: "True"}
)")),
              ElementsAre("Running"));
  EXPECT_THAT(Statuses(*def, Yaml(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
status:
  conditions:
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}
  - {type: Available, status: "False"}
)")),
              ElementsAre("Initializing"));
}

constexpr char kReasonDefinition[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: reason}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions, typeFieldName: type, statusFieldName: status
                               REASON}
        statusMappings:
          failed: [{byConditions: [{type: Ready, status: "False", reason: Crashed}]}]
)";

// 3b. A definition whose reasonFieldName is empty can never match a reason.
// Divergence: from files we apply the CRD default ("reason") when the field
// is absent, as the API server does for cluster definitions.
TEST(BehaviourTest, B03ReasonNeedsReasonFieldName) {
  Json object = Yaml(
      "{apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, status: {conditions: "
      "[{type: Ready, status: 'False', reason: Crashed}]}}");
  std::string text = kReasonDefinition;
  std::string empty = text, defaulted = text;
  empty.replace(empty.find("REASON"), 6, ", reasonFieldName: ''");
  defaulted.replace(defaulted.find("REASON"), 6, "");
  EXPECT_THAT(Statuses(*CompileYaml(empty, "empty"), object), ElementsAre("Undefined"));
  EXPECT_THAT(Statuses(*CompileYaml(defaulted, "defaulted"), object), ElementsAre("Failed"));
}

constexpr char kExpressionDefinition[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: expr}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: ".a", expectedResult: "true"}}]
          failed: [{byExpression: {expression: ".status.foo", expectedResult: "null"}}]
          completed: [{byExpression: {expression: ".none[]?", expectedResult: ""}}]
          degraded: [{byExpression: {expression: '.a | error("x")', expectedResult: ""}}]
          suspended: [{byExpression: {expression: ".n", expectedResult: "1"}}]
)";

// 4. byExpression compares the first output of `(expr) | tostring`.
TEST(BehaviourTest, B04ByExpressionIsTextComparison) {
  auto def = CompileYaml(kExpressionDefinition, "expr");
  ASSERT_NE(def, nullptr);
  Json object = Yaml("{a: 'true', n: 1}");
  WithEvaluation(*def, [&](Evaluation& eval) {
    auto status = EvaluateStatus(eval, eval.Load(object));
    // The degraded matcher errors: the whole status call fails.
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.status().message(), HasSubstr("x"));
  });
  std::string without_error = kExpressionDefinition;
  without_error.erase(
      without_error.find("          degraded:"),
      without_error.find("          suspended:") - without_error.find("          degraded:"));
  auto ok_def = CompileYaml(without_error, "expr2");
  // "true" (string) and true (boolean) both equal "true"; absent is "null";
  // no output never matches; 1 equals "1".
  EXPECT_THAT(Statuses(*ok_def, object), ElementsAre("Suspended", "Running", "Failed"));
  EXPECT_THAT(Statuses(*ok_def, Yaml("{a: true, n: 2, status: {foo: 1}}")), ElementsAre("Running"));
}

// 5. Matcher AND, list OR, short-circuit.
TEST(BehaviourTest, B05SandboxSuspendedOnly) {
  auto def = Ours("agents-x-k8s-io-sandbox-v1beta1");
  EXPECT_THAT(Statuses(*def, Yaml(R"(
apiVersion: agents.x-k8s.io/v1beta1
kind: Sandbox
metadata: {name: s}
spec: {operatingMode: Suspended}
status: {conditions: [{type: Suspended, status: "True"}]}
)")),
              ElementsAre("Suspended"));
}

// 6. Instances are enumerated and sorted; values follow their ids.
TEST(BehaviourTest, B06DynamoInstancesSorted) {
  auto def = Ours("nvidia-com-dynamographdeployment-v1alpha1");
  Json object = Yaml(R"(
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  services:
    Frontend: {replicas: 2}
    DecodeWorker: {replicas: 3, multinode: {nodeCount: 2}}
    PrefillWorker: {}
)");
  WorkloadInput input{&object};
  auto resolved = ResolveWorkload(*def, testing::TestEngine(), input);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const auto& service = resolved->root().instances(0).children(0);
  ASSERT_EQ(service.instances_size(), 3);
  EXPECT_EQ(service.instances(0).id(), "DecodeWorker");
  EXPECT_EQ(service.instances(0).scale().replicas(), 6);
  EXPECT_EQ(service.instances(1).id(), "Frontend");
  EXPECT_EQ(service.instances(1).scale().replicas(), 2);
  EXPECT_EQ(service.instances(2).id(), "PrefillWorker");
  EXPECT_EQ(service.instances(2).scale().replicas(), 1);
}

// Worker groups as RayJob holds them: the instance ids, replicas (and, where
// MIN_MAX says so, min and max) are separate paths over one array, zipped by
// index.
constexpr char kGroupsDefinition[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: groups}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: 'true', expectedResult: 'true'}}]
    childComponents:
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: root
      specDefinition: {podTemplateSpecPath: '.spec.groups[].template'}
      scaleDefinition:
        replicasPath: '.spec.groups[].replicas // 1'
        MIN_MAX
      instanceIdPath: '.spec.groups[].groupName'
      podSelector:
        componentInstanceSelector: {idPath: '.metadata.labels["example.com/group"]'}
)";

std::shared_ptr<const definitions::CompiledDefinition> GroupsDefinition(bool min_max) {
  std::string text = kGroupsDefinition;
  text.replace(text.find("MIN_MAX"), 7,
               min_max ? "minReplicasPath: '.spec.groups[].minReplicas'\n"
                         "        maxReplicasPath: '.spec.groups[].maxReplicas'"
                       : "");
  return CompileYaml(text, min_max ? "groups-min-max" : "groups");
}

const v1::Component* Child(const v1::ResolvedWorkload& resolved, const std::string& name) {
  for (const auto& c : resolved.root().instances(0).children()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

// 7. Zip by index with padding, then the count check.
TEST(BehaviourTest, B07ZipPaddingAndCountCheck) {
  Json thing = Yaml(R"(
apiVersion: example.com/v1
kind: Thing
metadata: {name: t}
spec: {groups: [{groupName: a}, {groupName: b, replicas: 3}]}
)");
  WorkloadInput input{&thing};
  // `// 1` drops a's null: replicas [3], min and max [null, null].
  auto resolved = ResolveWorkload(*GroupsDefinition(true), testing::TestEngine(), input);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const v1::Component* worker = Child(*resolved, "worker");
  ASSERT_NE(worker, nullptr);
  ASSERT_EQ(worker->instances_size(), 2);
  EXPECT_EQ(worker->instances(0).id(), "a");
  EXPECT_EQ(worker->instances(0).scale().replicas(), 3);  // misattributed, as upstream
  EXPECT_FALSE(worker->instances(1).scale().has_replicas());

  // Without min and max nothing pads: two ids, one replicas result.
  auto partial = ResolveWorkload(*GroupsDefinition(false), testing::TestEngine(), input);
  ASSERT_TRUE(partial.ok()) << partial.status();
  const v1::Component* failed = Child(*partial, "worker");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->error().field_path(),
            "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath");
  EXPECT_THAT(failed->error().message(),
              HasSubstr("instance ids count (2) does not match results count (1)"));
  // Naming the definition fields that disagree.
  EXPECT_THAT(failed->error().message(),
              HasSubstr("spec.structureDefinition.childComponents[0].instanceIdPath yields 2, "
                        "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath "
                        "yields 1"));
}

// A Knative-like revision scaled by annotations of its template.
constexpr char kAnnotationScaleDefinition[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: annotation-scale}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: 'true', expectedResult: 'true'}}]
    childComponents:
    - name: revision
      kind: {group: example.com, version: v1, kind: Revision}
      ownerRef: root
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition:
        minReplicasPath: '.spec.template.metadata.annotations["example.com/min-scale"] // 1 | tonumber'
        maxReplicasPath: '.spec.template.metadata.annotations["example.com/max-scale"] | tonumber?'
)";

// 8. Scale value coercion.
TEST(BehaviourTest, B08ScaleCoercion) {
  auto def = CompileYaml(kAnnotationScaleDefinition, "annotation-scale");
  ASSERT_NE(def, nullptr);
  auto scale_of = [&](const std::string& annotations) {
    Json thing = Yaml(
        "{apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, "
        "spec: {template: {metadata: {annotations: " +
        annotations + "}, spec: {containers: [{image: x}]}}}}");
    WorkloadInput input{&thing};
    auto resolved = ResolveWorkload(*def, testing::TestEngine(), input);
    EXPECT_TRUE(resolved.ok()) << resolved.status();
    return resolved->root().instances(0).children(0).instances(0).scale();
  };
  auto s = scale_of("{example.com/min-scale: '2', example.com/max-scale: abc}");
  EXPECT_EQ(s.min_replicas(), 2);
  EXPECT_FALSE(s.has_max_replicas());
  EXPECT_EQ(scale_of("{}").min_replicas(), 1);
  EXPECT_EQ(ScaleValue(Json("3")).value(), 3);
  EXPECT_FALSE(ScaleValue(Json("x")).ok());
  EXPECT_FALSE(ScaleValue(Json(" 3")).ok());
  EXPECT_FALSE(ScaleValue(Json("3.0")).ok());
  // Upstream takes "-2"; a negative count is refused here (issue 12).
  EXPECT_EQ(ScaleValue(Json("-2")).status().message(),
            "replica count \"-2\" is negative (at least 0)");
  EXPECT_EQ(ScaleValue(Json(-1)).status().message(), "replica count -1 is negative (at least 0)");
  EXPECT_FALSE(ScaleValue(Json(2.5)).ok());
  EXPECT_FALSE(ScaleValue(Json(nullptr)).value().has_value());
}

// 9. A missing array fails instance enumeration: upstream fails the whole
// resolution; we fail that component only (a partial answer).
TEST(BehaviourTest, B09MissingArrayIsAnError) {
  Json thing = Yaml("{apiVersion: example.com/v1, kind: Thing, metadata: {name: t}, spec: {}}");
  WorkloadInput input{&thing};
  auto resolved = ResolveWorkload(*GroupsDefinition(false), testing::TestEngine(), input);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  std::vector<std::string> errors;
  for (const auto& c : resolved->root().instances(0).children()) {
    if (c.has_error()) errors.push_back(c.name() + ": " + c.error().message());
  }
  EXPECT_THAT(errors, ElementsAre(HasSubstr("Cannot iterate over null")));
}

// 10. Type selectors: existence vs string equality.
TEST(BehaviourTest, B10TypeSelectorSemantics) {
  auto def = Ours("leaderworkerset-x-k8s-io-leaderworkerset-v1");
  int leader = def->ComponentIndex("leader"), worker = def->ComponentIndex("worker");
  WithEvaluation(*def, [&](Evaluation& eval) {
    Json follower = Yaml(
        "{metadata: {name: w, annotations: "
        "{leaderworkerset.sigs.k8s.io/leader-name: demo-0}}}");
    auto in = eval.Load(follower);
    EXPECT_TRUE(TypeSelectorAccepts(eval, worker, follower, in).value());
    Json lead = Yaml(
        "{metadata: {name: l, labels: {leaderworkerset.sigs.k8s.io/worker-index: "
        "'0'}}}");
    EXPECT_TRUE(TypeSelectorAccepts(eval, leader, lead, eval.Load(lead)).value());
    Json numeric = Yaml(
        "{metadata: {name: n, labels: {leaderworkerset.sigs.k8s.io/worker-index: "
        "0}}}");
    EXPECT_FALSE(TypeSelectorAccepts(eval, leader, numeric, eval.Load(numeric)).value());
  });
}

// 11. Pod keys must be a single non-empty result.
// Our JobSet definition with one gang per role (the alpha form, keyed by the
// replicated job's name) instead of the catalog's one gang per JobSet.
std::shared_ptr<const definitions::CompiledDefinition> JobSetWithRoleGangs() {
  Json object = Ours("jobset-x-k8s-io-jobset-v1alpha2")->definition->object;
  object["spec"]["optimizationInstructions"]["gangScheduling"] = Yaml(R"(
podGroups:
- name: job
  members:
  - componentName: replicatedjob
    groupByKeyPaths: ['.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]']
)");
  return CompileYaml(object.dump(), "jobset-role-gangs");
}

TEST(BehaviourTest, B11SingleResultRule) {
  auto def = JobSetWithRoleGangs();
  ASSERT_NE(def, nullptr);
  const auto& rj = def->components[def->ComponentIndex("replicatedjob")];
  WithEvaluation(*def, [&](Evaluation& eval) {
    Json unlabelled = Yaml("{metadata: {name: p, labels: {}}}");
    auto id = eval.Single(rj.instance_selector, eval.Load(unlabelled));
    ASSERT_FALSE(id.ok());
    EXPECT_THAT(id.status().message(), HasSubstr("query result is empty"));
    Json labelled = Yaml(
        "{metadata: {name: p, labels: {jobset.sigs.k8s.io/replicatedjob-name: "
        "workers}}}");
    auto in = eval.Load(labelled);
    EXPECT_EQ(eval.Single(rj.instance_selector, in).value(), "workers");
    EXPECT_EQ(eval.Single(def->pod_group_members[0][0].group_by_key_paths[0], in).value(),
              "workers");
  });
}

constexpr char kJobSetWorkers[] = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, uid: U}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template: {spec: {parallelism: 4, template: {spec: {containers: [{name: c}]}}}}
)";

// 12. Gang name and minimum, alpha and current forms.
TEST(BehaviourTest, B12GangNameAndMinimum) {
  Json jobset = Yaml(kJobSetWorkers);
  Json pod =
      Yaml("{metadata: {name: p, labels: {jobset.sigs.k8s.io/replicatedjob-name: workers}}}");
  auto alpha = JobSetWithRoleGangs();
  ASSERT_NE(alpha, nullptr);
  WithEvaluation(*alpha, [&](Evaluation& eval) {
    ComponentNode tree = BuildTree(eval, eval.Load(jobset));
    ASSERT_EQ(FirstFailed(tree), nullptr) << FirstFailed(tree)->error;
    auto gang = GangForPod(eval, tree, jobset, pod, eval.Load(pod));
    ASSERT_TRUE(gang.ok()) << gang.status();
    EXPECT_EQ(gang->group.name(), "pg-U-workers");
    EXPECT_EQ(gang->group.min_member(), 8);
  });
  // The same definition with `podGroup: {name: job}` and no subgroups.
  Json current = alpha->definition->object;
  current["spec"]["optimizationInstructions"]["gangScheduling"] = {{"podGroup", {{"name", "job"}}}};
  auto def = CompileYaml(current.dump(), "current");
  WithEvaluation(*def, [&](Evaluation& eval) {
    ComponentNode tree = BuildTree(eval, eval.Load(jobset));
    ASSERT_EQ(FirstFailed(tree), nullptr) << FirstFailed(tree)->error;
    auto gang = GangForPod(eval, tree, jobset, pod, eval.Load(pod));
    ASSERT_TRUE(gang.ok()) << gang.status();
    EXPECT_EQ(gang->group.name(), "pg-U-job");
    EXPECT_EQ(gang->group.min_member(), 8);
    EXPECT_FALSE(gang->group.has_min_sub_group());
  });
}

// What a workload's pods share is read once (ReadWorkloadGang) and gives
// each pod the gang it gets when read for that pod alone: the owner's
// labels first, then the pod's.
TEST(BehaviourTest, B12SharedWorkloadGangGivesEachPodItsOwnAnswer) {
  Json jobset = Yaml(kJobSetWorkers);
  jobset["metadata"]["labels"]["project"] = "ml";
  jobset["metadata"]["annotations"]["kai.scheduler/topology"] = "zones";
  Json pod = Yaml(
      "{metadata: {name: p, labels: {jobset.sigs.k8s.io/replicatedjob-name: workers, "
      "kai.scheduler/node-pool: a100, priorityClassName: train}}}");
  for (auto def : {JobSetWithRoleGangs(), Ours("jobset-x-k8s-io-jobset-v1alpha2")}) {
    ASSERT_NE(def, nullptr);
    WithEvaluation(*def, [&](Evaluation& eval) {
      ComponentNode tree = BuildTree(eval, eval.Load(jobset));
      ASSERT_EQ(FirstFailed(tree), nullptr) << FirstFailed(tree)->error;
      WorkloadGang shared = ReadWorkloadGang(eval, tree, jobset);
      EXPECT_EQ(shared.hints.project, "ml");
      EXPECT_EQ(shared.hints.topology, "zones");
      auto alone = GangForPod(eval, tree, jobset, pod, eval.Load(pod));
      auto with_shared = GangForPod(eval, tree, jobset, pod, eval.Load(pod), &shared);
      ASSERT_TRUE(alone.ok()) << alone.status();
      ASSERT_TRUE(with_shared.ok()) << with_shared.status();
      EXPECT_EQ(alone->group.queue(), "ml-a100");
      EXPECT_EQ(alone->group.priority_class_name(), "train");
      EXPECT_EQ(alone->group.topology().topology(), "zones");
      EXPECT_EQ(with_shared->group.SerializeAsString(), alone->group.SerializeAsString());
      EXPECT_EQ(with_shared->assignment.SerializeAsString(), alone->assignment.SerializeAsString());
    });
  }
}

// A group the caller already reports is not built for the pod again: the
// answer then carries the assignment alone, the same as with the group, and
// the caller is asked about the group's name, in both forms.
TEST(BehaviourTest, B12GroupNotReportedLeavesTheAssignment) {
  Json jobset = Yaml(kJobSetWorkers);
  Json pod =
      Yaml("{metadata: {name: p, labels: {jobset.sigs.k8s.io/replicatedjob-name: workers}}}");
  for (auto def : {JobSetWithRoleGangs(), Ours("jobset-x-k8s-io-jobset-v1alpha2")}) {
    ASSERT_NE(def, nullptr);
    WithEvaluation(*def, [&](Evaluation& eval) {
      ComponentNode tree = BuildTree(eval, eval.Load(jobset));
      ASSERT_EQ(FirstFailed(tree), nullptr) << FirstFailed(tree)->error;
      auto reported = GangForPod(eval, tree, jobset, pod, eval.Load(pod));
      std::vector<std::string> asked;
      auto known =
          GangForPod(eval, tree, jobset, pod, eval.Load(pod), nullptr, [&](absl::string_view name) {
            asked.emplace_back(name);
            return false;
          });
      ASSERT_TRUE(reported.ok()) << reported.status();
      ASSERT_TRUE(known.ok()) << known.status();
      EXPECT_FALSE(reported->group.name().empty());
      EXPECT_EQ(known->group.SerializeAsString(), "");
      EXPECT_EQ(known->assignment.SerializeAsString(), reported->assignment.SerializeAsString());
      EXPECT_THAT(asked, ElementsAre(reported->group.name()));
    });
  }
}

// 13. Assign-zip mutation.
TEST(BehaviourTest, B13AssignZipMutation) {
  auto def = Ours("jobset-x-k8s-io-jobset-v1alpha2");
  int rj = def->ComponentIndex("replicatedjob");
  Json jobset = Yaml(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - {name: leader, replicas: 1, template: {spec: {template: {spec: {containers: [{name: a}]}}}}}
  - {name: workers, replicas: 1, template: {spec: {template: {spec: {containers: [{name: b}]}}}}}
)");
  Json t1 = {{"metadata", {{"labels", {{"t", "1"}}}}}};
  Json t2 = {{"metadata", {{"labels", {{"t", "2"}}}}}};
  WithEvaluation(*def, [&](Evaluation& eval) {
    auto out = UpdatePodField(eval, jobset, rj, PodField::kPodTemplateSpec,
                              {{"leader", t1}, {"workers", t2}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"], t1);
    EXPECT_EQ((*out)["spec"]["replicatedJobs"][1]["template"]["spec"]["template"], t2);
    EXPECT_EQ(jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                    ["containers"][0]["name"],
              "a");  // the input is untouched
    auto missing = UpdatePodField(eval, jobset, rj, PodField::kPodTemplateSpec, {{"leader", t1}});
    ASSERT_FALSE(missing.ok());
    EXPECT_THAT(missing.status().message(), HasSubstr("value not found for instance id: workers"));
  });
  // A path yielding 3 locations for 2 values.
  Json three = def->definition->object;
  three["spec"]["structureDefinition"]["childComponents"][0]["specDefinition"]
       ["podTemplateSpecPath"] = ".spec.replicatedJobs[].template.spec.template, .spec.extra";
  auto bad = CompileYaml(three.dump(), "three");
  WithEvaluation(*bad, [&](Evaluation& eval) {
    auto out = UpdatePodField(eval, jobset, bad->ComponentIndex("replicatedjob"),
                              PodField::kPodTemplateSpec, {{"leader", t1}, {"workers", t2}});
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("array length mismatch"));
  });
}

constexpr char kBuiltResourcesDefinition[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: built-resources}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Thing}
      specDefinition:
        fragmentedPodSpecDefinition: {resourcesPath: '{requests: .spec.resources}'}
      statusDefinition:
        statusMappings:
          running: [{byExpression: {expression: 'true', expectedResult: 'true'}}]
)";

// 14. Fragmented writes skip all-empty fields and fill the others.
TEST(BehaviourTest, B14FragmentedWriteWithoutNulls) {
  auto def = Ours("nvidia-com-dynamographdeployment-v1alpha1");
  int service = def->ComponentIndex("service");
  Json graph = Yaml(R"(
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  services:
    Frontend: {replicas: 1, labels: {keep: me}}
    Worker: {replicas: 2}
)");
  WithEvaluation(*def, [&](Evaluation& eval) {
    auto out = UpdateFragmentedPodSpec(
        eval, graph, service,
        {{"Frontend", {{"schedulerName", "kai"}}}, {"Worker", {{"schedulerName", "kai"}}}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)["spec"]["services"]["Frontend"]["extraPodSpec"]["schedulerName"], "kai");
    EXPECT_EQ((*out)["spec"]["services"]["Worker"]["extraPodSpec"]["schedulerName"], "kai");
    EXPECT_EQ((*out)["spec"]["services"]["Frontend"]["labels"], Json({{"keep", "me"}}));
    Json patch = JsonPatch(graph, *out);
    EXPECT_EQ(patch.size(), 2u) << patch.dump();

    auto one = UpdateFragmentedPodSpec(
        eval, graph, service,
        {{"Frontend", {{"schedulerName", "kai"}}}, {"Worker", Json::object()}});
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ((*one)["spec"]["services"]["Worker"]["extraPodSpec"]["schedulerName"], "");
  });
  // A resources path that builds an object reads but cannot be written.
  auto built = CompileYaml(kBuiltResourcesDefinition, "built-resources");
  ASSERT_NE(built, nullptr);
  Json cache = Yaml(
      "{apiVersion: example.com/v1, kind: Thing, metadata: {name: c}, "
      "spec: {resources: {cpu: 1}}}");
  WithEvaluation(*built, [&](Evaluation& eval) {
    auto out = UpdateFragmentedPodSpec(eval, cache, 0,
                                       {{"", {{"resources", {{"requests", {{"cpu", "2"}}}}}}}});
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("Invalid path expression"));
  });
}

// 15. Validation messages.
TEST(BehaviourTest, B15Validation) {
  auto validate = [](const std::string& yaml) {
    auto parsed = definitions::ParseDefinition(Yaml(yaml), definitions::Origin::kFile, "t");
    std::string all;
    for (const auto& f : parsed.findings) all += f.ToString() + "\n";
    if (parsed.definition) {
      for (const auto& f : definitions::Validate(*parsed.definition)) all += f.ToString() + "\n";
    }
    return all;
  };
  const std::string head =
      "{apiVersion: run.ai/v1alpha1, kind: Karta, metadata: {name: v}, spec: {structureDefinition: "
      "{rootComponent: {name: r, kind: ";
  const std::string status = ", statusDefinition: {statusMappings: {}}";
  EXPECT_THAT(validate(head + "{group: g, version: v1, kind: K}" + status +
                       "}, childComponents: [{name: x}]}}}"),
              HasSubstr("child component 'x' has no owner ref"));
  EXPECT_THAT(validate(head + "{group: g, version: v1, kind: K}" + status +
                       "}, childComponents: [{name: x, ownerRef: r, instanceIdPath: '.a[]'}]}}}"),
              HasSubstr("has instance id path but no pod component instance selector"));
  EXPECT_THAT(validate(head + "{group: g, version: v1, kind: K}, statusDefinition: "
                              "{statusMappings: {running: [{byExpression: {expression: 'del(.a)', "
                              "expectedResult: x}}]}}}}}}"),
              HasSubstr("del function is not allowed"));
  EXPECT_THAT(
      validate(head + "{group: g, version: v1, kind: K}, instanceIdPath: '..'" + status + "}}}}"),
      HasSubstr("recursive descent"));
  EXPECT_EQ(validate(head + "{group: '', version: v1, kind: Pod}" + status + "}}}}"), "");
  EXPECT_THAT(validate(head + "{group: '', version: v1, kind: Deployment}" + status + "}}}}"),
              HasSubstr("root component must have full kind"));
}

}  // namespace
}  // namespace wm::resolution
