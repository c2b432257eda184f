// EditWorkload: pod template edits and suspension through a definition, for
// each pod shape (template, spec plus metadata, fragmented).

#include "server/resolution/edit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/resolution/test_support.h"

namespace wm::resolution {
namespace {

using testing::CompileYaml;
using ::testing::HasSubstr;
using testing::Ours;
using testing::TestEngine;
using testing::Yaml;

constexpr char kJobSet[] = R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: demo
  namespace: default
  labels: {owner: ml}
spec:
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        parallelism: 1
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: leader
              image: registry.example/trainer:1.0
              resources:
                limits: {nvidia.com/gpu: '4'}
  - name: worker
    replicas: 2
    template:
      spec:
        parallelism: 1
        template:
          metadata:
            labels: {app: trainer}
          spec:
            restartPolicy: Never
            containers:
            - name: worker
              image: registry.example/trainer:1.0
              resources:
                limits: {nvidia.com/gpu: '4'}
                requests: {cpu: '2'}
            - name: sidecar
              image: registry.example/proxy:1.0
status:
  replicatedJobsStatus:
  - {name: leader, ready: 1, active: 1}
  - {name: worker, ready: 2, active: 2}
)";

// The pod template of replicated job `i` of kJobSet.
Json& PodTemplate(Json& jobset, int i) {
  return jobset["spec"]["replicatedJobs"][i]["template"]["spec"]["template"];
}

class JobSetEditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    def_ = Ours("jobset-x-k8s-io-jobset-v1alpha2");
    ASSERT_NE(def_, nullptr);
    jobset_ = Yaml(kJobSet);
  }

  absl::StatusOr<Json> Edit(const WorkloadEdit& edit) {
    return EditWorkload(*def_, TestEngine(), jobset_, edit);
  }
  absl::StatusOr<Json> Edit(const PodTemplateEdit& edit) {
    return Edit(WorkloadEdit{.templates = {edit}});
  }

  std::shared_ptr<const definitions::CompiledDefinition> def_;
  Json jobset_;
};

TEST_F(JobSetEditTest, MergePatchOnEveryComponentSetsEveryTemplate) {
  for (const std::string component : {"", "replicatedjob"}) {
    SCOPED_TRACE("component \"" + component + "\"");
    auto edited = Edit(PodTemplateEdit{
        .component = component, .merge_patch = {{"spec", {{"schedulerName", "kai-scheduler"}}}}});
    ASSERT_TRUE(edited.ok()) << edited.status();
    Json expected = jobset_;
    PodTemplate(expected, 0)["spec"]["schedulerName"] = "kai-scheduler";
    PodTemplate(expected, 1)["spec"]["schedulerName"] = "kai-scheduler";
    EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
  }
}

TEST_F(JobSetEditTest, InstanceIdSelectsOneReplicatedJob) {
  auto edited = Edit(PodTemplateEdit{.instance_id = "worker",
                                     .merge_patch = {{"spec", {{"schedulerName", "kai"}}}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = jobset_;
  PodTemplate(expected, 1)["spec"]["schedulerName"] = "kai";
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST_F(JobSetEditTest, InputIsNotModified) {
  const Json before = jobset_;
  ASSERT_TRUE(
      Edit(WorkloadEdit{.templates = {{.merge_patch = {{"spec", {{"x", 1}}}}}}, .suspend = true})
          .ok());
  EXPECT_EQ(jobset_, before);
}

TEST_F(JobSetEditTest, LabelsMergeKeepingExistingOnes) {
  auto edited = Edit(
      PodTemplateEdit{.merge_patch = {{"metadata", {{"labels", {{"kai.scheduler/queue", "q"}}}}}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = jobset_;
  PodTemplate(expected, 0)["metadata"]["labels"] = {{"kai.scheduler/queue", "q"}};
  PodTemplate(expected, 1)["metadata"]["labels"] = {{"app", "trainer"},
                                                    {"kai.scheduler/queue", "q"}};
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST_F(JobSetEditTest, MergePatchNullDeletesAField) {
  auto edited = Edit(PodTemplateEdit{.instance_id = "worker",
                                     .merge_patch = {{"metadata", {{"labels", {{"app", nullptr}}}}},
                                                     {"spec", {{"restartPolicy", nullptr}}}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = jobset_;
  PodTemplate(expected, 1)["metadata"]["labels"] = Json::object();
  PodTemplate(expected, 1)["spec"].erase("restartPolicy");
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST_F(JobSetEditTest, ContainerResourcesMergeIntoTheNamedContainer) {
  auto edited = Edit(
      PodTemplateEdit{.instance_id = "worker",
                      .container_resources = {{"worker", Yaml("{limits: {nvidia.com/gpu: '8'}, "
                                                              "requests: {memory: 16Gi}}")},
                                              {"sidecar", Yaml("{requests: {cpu: 100m}}")}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = jobset_;
  Json& containers = PodTemplate(expected, 1)["spec"]["containers"];
  containers[0]["resources"] = Yaml(
      "{limits: {nvidia.com/gpu: '8'}, "
      "requests: {cpu: '2', memory: 16Gi}}");
  containers[1]["resources"] = Yaml("{requests: {cpu: 100m}}");
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST_F(JobSetEditTest, ContainerResourcesForAnUnknownContainerNamesIt) {
  auto edited = Edit(PodTemplateEdit{
      .instance_id = "worker",
      .container_resources = {{"trainer-main", Yaml("{limits: {nvidia.com/gpu: '8'}}")}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(), HasSubstr("trainer-main"));
  EXPECT_THAT(edited.status().message(), HasSubstr("worker"));
  // Every instance is edited when none is named: the leader has no
  // "worker" container.
  edited = Edit(PodTemplateEdit{.container_resources = {{"worker", Yaml("{limits: {cpu: '1'}}")}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(), HasSubstr("leader"));
}

// What only the merged template shows is checked there, and the error
// names the request field the edit came from.
TEST_F(JobSetEditTest, MergedContainerResourcesMustBeValidTogether) {
  // The worker container has a limit of 4 GPUs; requests of cpu 2.
  auto edited = Edit(PodTemplateEdit{
      .instance_id = "worker",
      .container_resources = {{"worker", Yaml("{requests: {nvidia.com/gpu: '4', cpu: '3'}}")}},
      .field = "changes[0]"});
  ASSERT_TRUE(edited.ok()) << edited.status();
  edited = Edit(PodTemplateEdit{
      .instance_id = "worker",
      .container_resources = {{"worker", Yaml("{requests: {nvidia.com/gpu: '2'}}")}},
      .field = "changes[0]"});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(),
              HasSubstr("changes[0].container_resources[\"worker\"].requests[\"nvidia.com/gpu\"]: "
                        "2 must be equal to the \"nvidia.com/gpu\" limit 4 (merged with the "
                        "container's resources)"));
  edited = Edit(PodTemplateEdit{.instance_id = "worker",
                                .container_resources = {{"worker", Yaml("{limits: {cpu: '1'}}")}},
                                .field = "changes[1]"});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(),
              HasSubstr("changes[1].container_resources[\"worker\"].requests[\"cpu\"]: 2 must be "
                        "at most the \"cpu\" limit 1"));
}

TEST_F(JobSetEditTest, MergedAnnotationsMustFitTheirTotal) {
  PodTemplate(jobset_, 1)["metadata"]["annotations"] = {{"existing", std::string(200 << 10, 'x')}};
  Json added = {{"metadata", {{"annotations", {{"added", std::string(50 << 10, 'y')}}}}}};
  auto edited = Edit(PodTemplateEdit{.merge_patch = added, .field = "changes[0]"});
  ASSERT_TRUE(edited.ok()) << edited.status();
  added["metadata"]["annotations"]["added"] = std::string(60 << 10, 'y');
  edited = Edit(PodTemplateEdit{.merge_patch = added, .field = "changes[0]"});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(),
              HasSubstr("changes[0].annotations: annotations total 266253 bytes (keys and "
                        "values), more than the 262144 Kubernetes allows (merged with the "
                        "template's annotations)"));
}

TEST_F(JobSetEditTest, ReplacementTemplateThenPatch) {
  Json replacement = Yaml(R"(
metadata: {labels: {role: new}}
spec:
  containers: [{name: main, image: registry.example/other:2.0}]
)");
  auto edited = Edit(PodTemplateEdit{.component = "replicatedjob",
                                     .instance_id = "leader",
                                     .merge_patch = {{"spec", {{"schedulerName", "kai"}}}},
                                     .replacement = replacement});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = jobset_;
  PodTemplate(expected, 0) = replacement;
  PodTemplate(expected, 0)["spec"]["schedulerName"] = "kai";
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST_F(JobSetEditTest, EditsApplyInOrder) {
  auto edited = Edit(WorkloadEdit{
      .templates = {
          {.merge_patch = {{"spec", {{"schedulerName", "a"}}}}},
          {.instance_id = "worker", .merge_patch = {{"spec", {{"schedulerName", "b"}}}}},
      }});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = jobset_;
  PodTemplate(expected, 0)["spec"]["schedulerName"] = "a";
  PodTemplate(expected, 1)["spec"]["schedulerName"] = "b";
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST_F(JobSetEditTest, UnknownComponentIsInvalidArgumentNamingIt) {
  auto edited = Edit(PodTemplateEdit{.component = "launcher",
                                     .merge_patch = {{"spec", {{"schedulerName", "kai"}}}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(), HasSubstr("\"launcher\""));
}

// The root component has no pod definition: an edit of it would select
// nothing, which the contract makes an error rather than a silent no-op.
TEST_F(JobSetEditTest, ComponentWithoutPodsIsInvalidArgument) {
  auto edited = Edit(PodTemplateEdit{.component = "jobset",
                                     .merge_patch = {{"spec", {{"schedulerName", "kai"}}}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(), HasSubstr("jobset"));
}

TEST_F(JobSetEditTest, UnknownInstanceIsInvalidArgumentNamingIt) {
  auto edited = Edit(PodTemplateEdit{.component = "replicatedjob",
                                     .instance_id = "coordinator",
                                     .merge_patch = {{"spec", {{"schedulerName", "kai"}}}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(edited.status().message(), HasSubstr("\"coordinator\""));
}

TEST_F(JobSetEditTest, SuspendAndResume) {
  auto suspended = Edit(WorkloadEdit{.suspend = true});
  ASSERT_TRUE(suspended.ok()) << suspended.status();
  Json expected = jobset_;
  expected["spec"]["suspend"] = true;
  EXPECT_EQ(*suspended, expected) << Json::diff(expected, *suspended);

  jobset_ = *suspended;
  auto resumed = Edit(WorkloadEdit{.suspend = false});
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  expected["spec"]["suspend"] = false;
  EXPECT_EQ(*resumed, expected) << Json::diff(expected, *resumed);
}

TEST_F(JobSetEditTest, SuspendTogetherWithATemplateEdit) {
  auto edited = Edit(WorkloadEdit{
      .templates = {{.merge_patch = {{"spec", {{"schedulerName", "kai"}}}}}}, .suspend = true});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = jobset_;
  expected["spec"]["suspend"] = true;
  PodTemplate(expected, 0)["spec"]["schedulerName"] = "kai";
  PodTemplate(expected, 1)["spec"]["schedulerName"] = "kai";
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST_F(JobSetEditTest, EmptyEditChangesNothing) {
  auto edited = Edit(WorkloadEdit{});
  ASSERT_TRUE(edited.ok()) << edited.status();
  EXPECT_EQ(*edited, jobset_);
}

// A root with a bare pod spec and its metadata elsewhere; no suspend.
constexpr char kSpecAndMetadata[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: example-com-server-v1}
spec:
  structureDefinition:
    rootComponent:
      name: server
      kind: {group: example.com, version: v1, kind: Server}
      specDefinition:
        podSpecPath: .spec.podSpec
        metadataPath: .spec.podMetadata
      scaleDefinition:
        replicasPath: .spec.replicas
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings: {running: [{byPhase: Running}]}
)";

constexpr char kServer[] = R"(
apiVersion: example.com/v1
kind: Server
metadata: {name: s, namespace: default}
spec:
  replicas: 2
  podMetadata:
    labels: {app: server}
    annotations: {note: kept}
  podSpec:
    containers:
    - name: main
      image: registry.example/server:1.0
      resources: {requests: {cpu: '1'}}
)";

TEST(EditWorkloadTest, PodSpecAndMetadataPathsAreBothWritten) {
  auto def = CompileYaml(kSpecAndMetadata, "spec-and-metadata");
  ASSERT_NE(def, nullptr);
  Json server = Yaml(kServer);
  auto edited = EditWorkload(
      *def, TestEngine(), server,
      WorkloadEdit{
          .templates = {{.merge_patch = Yaml(R"(
metadata: {labels: {kai.scheduler/queue: q}}
spec: {schedulerName: kai, nodeSelector: {pool: gpu}}
)"),
                         .container_resources = {{"main", Yaml("{limits: {cpu: '2'}}")}}}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = server;
  expected["spec"]["podMetadata"]["labels"]["kai.scheduler/queue"] = "q";
  expected["spec"]["podSpec"]["schedulerName"] = "kai";
  expected["spec"]["podSpec"]["nodeSelector"] = {{"pool", "gpu"}};
  expected["spec"]["podSpec"]["containers"][0]["resources"]["limits"] = {{"cpu", "2"}};
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

// A spec edit leaves metadata alone, even where the object has none.
TEST(EditWorkloadTest, SpecEditDoesNotWriteMetadata) {
  auto def = CompileYaml(kSpecAndMetadata, "spec-and-metadata");
  ASSERT_NE(def, nullptr);
  Json server = Yaml(kServer);
  server["spec"].erase("podMetadata");
  auto edited = EditWorkload(
      *def, TestEngine(), server,
      WorkloadEdit{.templates = {{.merge_patch = Yaml("{spec: {schedulerName: kai}}")}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = server;
  expected["spec"]["podSpec"]["schedulerName"] = "kai";
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
  // Labels then create it.
  edited = EditWorkload(
      *def, TestEngine(), server,
      WorkloadEdit{.templates = {{.merge_patch = Yaml("{metadata: {labels: {a: b}}}")}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  expected = server;
  expected["spec"]["podMetadata"] = {{"labels", {{"a", "b"}}}};
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST(EditWorkloadTest, DefinitionWithoutSuspendIsFailedPrecondition) {
  auto def = CompileYaml(kSpecAndMetadata, "spec-and-metadata");
  ASSERT_NE(def, nullptr);
  for (bool suspend : {true, false}) {
    auto edited = EditWorkload(*def, TestEngine(), Yaml(kServer), WorkloadEdit{.suspend = suspend});
    EXPECT_EQ(edited.status().code(), absl::StatusCode::kFailedPrecondition) << edited.status();
    EXPECT_THAT(edited.status().message(), HasSubstr("example-com-server-v1"));
  }
}

// Without metadataPath, metadata cannot be written: the edit fails rather
// than dropping the labels silently.
TEST(EditWorkloadTest, MetadataWithoutMetadataPathIsInvalidArgument) {
  std::string yaml = kSpecAndMetadata;
  yaml.erase(yaml.find("        metadataPath"),
             std::string("        metadataPath: .spec.podMetadata\n").size());
  auto def = CompileYaml(yaml, "spec-only");
  ASSERT_NE(def, nullptr);
  Json server = Yaml(kServer);
  auto edited = EditWorkload(
      *def, TestEngine(), server,
      WorkloadEdit{.templates = {{.merge_patch = Yaml("{metadata: {labels: {a: b}}}")}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument) << edited.status();
  EXPECT_THAT(edited.status().message(), HasSubstr("metadata"));
  // The spec alone is fine.
  edited =
      EditWorkload(*def, TestEngine(), server,
                   WorkloadEdit{.templates = {{.merge_patch = Yaml("{spec: {priority: 1}}")}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = server;
  expected["spec"]["podSpec"]["priority"] = 1;
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

// Pod fields scattered over the object, one instance per role.
constexpr char kFragmented[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: example-com-app-v1}
spec:
  structureDefinition:
    rootComponent:
      name: app
      kind: {group: example.com, version: v1, kind: App}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings: {running: [{byPhase: Running}]}
    childComponents:
    - name: role
      ownerRef: app
      instanceIdPath: .spec.roles[].name
      specDefinition:
        fragmentedPodSpecDefinition:
          schedulerNamePath: .spec.roles[].scheduler
          labelsPath: .spec.roles[].podLabels
      scaleDefinition:
        replicasPath: .spec.roles[].replicas
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["role"]'}
        componentInstanceSelector: {idPath: '.metadata.labels["role"]'}
)";

constexpr char kApp[] = R"(
apiVersion: example.com/v1
kind: App
metadata: {name: a, namespace: default}
spec:
  roles:
  - name: server
    replicas: 2
    scheduler: default-scheduler
    podLabels: {tier: front}
    image: registry.example/server:1.0
  - name: db
    replicas: 1
    scheduler: default-scheduler
    podLabels: {tier: back}
)";

TEST(EditWorkloadTest, FragmentedSchedulerNameAndLabelsGoThroughTheirPaths) {
  auto def = CompileYaml(kFragmented, "fragmented");
  ASSERT_NE(def, nullptr);
  Json app = Yaml(kApp);
  auto edited = EditWorkload(
      *def, TestEngine(), app,
      WorkloadEdit{
          .templates = {{.component = "role", .instance_id = "server", .merge_patch = Yaml(R"(
metadata: {labels: {kai.scheduler/queue: q}}
spec: {schedulerName: kai}
)")}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  Json expected = app;
  expected["spec"]["roles"][0]["scheduler"] = "kai";
  expected["spec"]["roles"][0]["podLabels"]["kai.scheduler/queue"] = "q";
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);

  // Every instance.
  edited = EditWorkload(
      *def, TestEngine(), app,
      WorkloadEdit{.templates = {{.merge_patch = Yaml("{spec: {schedulerName: kai}}")}}});
  ASSERT_TRUE(edited.ok()) << edited.status();
  expected = app;
  expected["spec"]["roles"][0]["scheduler"] = "kai";
  expected["spec"]["roles"][1]["scheduler"] = "kai";
  EXPECT_EQ(*edited, expected) << Json::diff(expected, *edited);
}

TEST(EditWorkloadTest, FragmentedFieldWithoutPathIsInvalidArgument) {
  auto def = CompileYaml(kFragmented, "fragmented");
  ASSERT_NE(def, nullptr);
  auto edited = EditWorkload(
      *def, TestEngine(), Yaml(kApp),
      WorkloadEdit{.templates = {{.merge_patch = Yaml("{spec: {nodeSelector: {pool: gpu}}}")}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument) << edited.status();
  EXPECT_THAT(edited.status().message(), HasSubstr("nodeSelector"));
  EXPECT_THAT(edited.status().message(), HasSubstr("role"));
  // Containers have no path either.
  edited = EditWorkload(
      *def, TestEngine(), Yaml(kApp),
      WorkloadEdit{.templates = {{.instance_id = "db",
                                  .merge_patch = Yaml("{spec: {containers: [{name: x}]}}")}}});
  EXPECT_EQ(edited.status().code(), absl::StatusCode::kInvalidArgument) << edited.status();
}

}  // namespace
}  // namespace wm::resolution
