// The workloadmap.v1 service end to end: a real in-process gRPC server over
// a WorkloadIndex of a test cluster (or a snapshot), called through a real
// client stub.

#include "server/rpc/service.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/common/json_path.h"
#include "server/common/process_memory.h"
#include "server/common/testing/file_content.h"
#include "server/common/testing/process_memory.h"
#include "server/common/testing/scratch_dir.h"
#include "server/common/yaml_json.h"
#include "server/definitions/registry.h"
#include "server/expressions/jq_engine.h"
#include "server/index/cluster.h"
#include "server/index/snapshot_cluster.h"
#include "server/index/testing/fake_cluster.h"
#include "server/index/workload_index.h"
#include "server/kube/cluster_view.h"
#include "server/kube/object.h"
#include "server/kube/store.h"
#include "server/rpc/testing/nice_noting_engine.h"
#include "server/rpc/testing/service_harness.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::rpc {
namespace {

using ::wm::index::Cluster;
using ::wm::index::CopyTrimmed;
using ::wm::index::SnapshotCluster;
using ::wm::index::WorkloadIndex;
using ::wm::index::testing::FakeCluster;

namespace v1 = workloadmap::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

constexpr char kDemoUid[] = "a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f";
constexpr char kJobSetDefinition[] = "jobset-x-k8s-io-jobset-v1alpha2";

// ---- Shared fixtures -----------------------------------------------------

using testing::NiceNotingEngine;

NiceNotingEngine& Engine() {
  static NiceNotingEngine* engine =
      new NiceNotingEngine(expressions::NewJqEngine({.workers = 2}).value());
  return *engine;
}

std::shared_ptr<definitions::Registry> NewCatalogRegistry() {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  absl::Status s = registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
  EXPECT_TRUE(s.ok()) << s;
  return registry;
}

// One catalog registry for the binary: definitions compile on first use,
// which is slow, so the tests share the compiled ones.
std::shared_ptr<const definitions::Registry> CatalogRegistry() {
  static auto* registry = new std::shared_ptr<const definitions::Registry>(NewCatalogRegistry());
  return *registry;
}

std::string SourcePath(const std::string& relative) {
  return std::string(WM_SOURCE_DIR) + "/" + relative;
}

// The seed: JobSet demo, its Jobs and pods, in file order.
const std::vector<Json>& Seed() {
  static auto* seed = new std::vector<Json>(
      ReadYamlFile(SourcePath("integration_tests/seed/cluster-state.yaml")).value());
  return *seed;
}

const Json& SeedObject(const std::string& kind, const std::string& name) {
  for (const Json& o : Seed()) {
    if (o["kind"] == kind && o["metadata"]["name"] == name) return o;
  }
  ADD_FAILURE() << "no " << kind << " " << name << " in the seed";
  static const Json* null = new Json();
  return *null;
}

std::vector<std::string> SeedJson(const std::string& kind) {
  std::vector<std::string> out;
  for (const Json& o : Seed()) {
    if (o["kind"] == kind) out.push_back(o.dump());
  }
  return out;
}

// A JobSet with one replicated job "worker" (no Jobs or pods yet).
Json NewJobSet(const std::string& name, const std::string& created,
               const std::string& namespace_ = "default",
               const std::map<std::string, std::string>& labels = {}, int replicas = 1) {
  Json jobset = Json::parse(R"json({
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"resourceVersion": "1"},
    "spec": {"replicatedJobs": [{
      "name": "worker",
      "template": {"spec": {"parallelism": 1, "completions": 1, "template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "worker", "image": "registry.example/trainer:1.0",
                        "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}}}]}
  })json");
  jobset["metadata"]["name"] = name;
  jobset["metadata"]["namespace"] = namespace_;
  jobset["metadata"]["uid"] = absl::StrCat("uid-", namespace_, "-", name);
  jobset["metadata"]["creationTimestamp"] = created;
  for (const auto& [k, v] : labels) jobset["metadata"]["labels"][k] = v;
  jobset["spec"]["replicatedJobs"][0]["replicas"] = replicas;
  return jobset;
}

Json ToJson(const google::protobuf::Message& message) {
  std::string text;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &text).ok());
  return Json::parse(text);
}

bool SameMessage(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

// ---- The server ------------------------------------------------------------

// The service over `clusters` on a real gRPC server, with the shared engine.
class Harness : public testing::ServiceHarness {
 public:
  Harness(const std::vector<Cluster*>& clusters, WorkloadMapService::Options options)
      : ServiceHarness(clusters, Engine(), options) {
    EXPECT_TRUE(started());
  }
};

v1::ObjectRef DemoRef() {
  v1::ObjectRef ref;
  ref.set_kind("JobSet");
  ref.set_name("demo");
  ref.set_namespace_("default");
  return ref;
}

// A context whose calls cannot hang the test.
void SetDeadline(grpc::ClientContext& context, int seconds = 60) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }

  // A fresh cluster holding the seed (with `registry`), and a server.
  void Start(WorkloadMapService::Options options,
             std::shared_ptr<const definitions::Registry> registry = CatalogRegistry()) {
    harness_.reset();
    cluster_ = std::make_unique<FakeCluster>(std::move(registry));
    cluster_->SetResource("JobSet", "jobsets");
    cluster_->SetResource("Job", "jobs");
    cluster_->SetResource("Pod", "pods");
    harness_ = std::make_unique<Harness>(std::vector<Cluster*>{cluster_.get()}, options);
    for (const Json& object : Seed()) Apply(kube::EventType::kAdded, object);
    Sync();
  }

  void Apply(kube::EventType type, const Json& object) {
    cluster_->Apply(harness_->index(), type, object);
  }
  void Sync() { harness_->index().WaitForIdle(); }
  v1::WorkloadMap::Stub& stub() { return harness_->stub(); }

  grpc::Status Resolve(const v1::ResolveWorkloadRequest& request,
                       v1::ResolveWorkloadResponse* response) {
    grpc::ClientContext context;
    SetDeadline(context);
    return stub().ResolveWorkload(&context, request, response);
  }
  grpc::Status List(const v1::ListWorkloadsRequest& request, v1::ListWorkloadsResponse* response) {
    grpc::ClientContext context;
    SetDeadline(context);
    return stub().ListWorkloads(&context, request, response);
  }
  grpc::Status Mutate(const v1::MutatePodSpecsRequest& request,
                      v1::MutatePodSpecsResponse* response) {
    grpc::ClientContext context;
    SetDeadline(context);
    return stub().MutatePodSpecs(&context, request, response);
  }
  grpc::Status Gang(const v1::GetGangInstructionsRequest& request,
                    v1::GetGangInstructionsResponse* response) {
    grpc::ClientContext context;
    SetDeadline(context);
    return stub().GetGangInstructions(&context, request, response);
  }

  // The gang of the cached demo JobSet.
  v1::GangInstructions ResolvedGang() {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    v1::ResolveWorkloadResponse response;
    EXPECT_TRUE(Resolve(request, &response).ok());
    return response.workload().gang();
  }

  // Names of the rows of one page of `request`.
  std::vector<std::string> ListNames(v1::ListWorkloadsRequest request) {
    v1::ListWorkloadsResponse response;
    grpc::Status status = List(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<std::string> names;
    for (const auto& row : response.workloads()) names.push_back(row.ref().name());
    return names;
  }

  std::unique_ptr<FakeCluster> cluster_;
  std::unique_ptr<Harness> harness_;  // destroyed before the cluster
};

// The instance `id` of component `name` anywhere in the tree.
const v1::ComponentInstance* FindInstance(const v1::Component& component, const std::string& name,
                                          const std::string& id) {
  for (const v1::ComponentInstance& instance : component.instances()) {
    if (component.name() == name && instance.id() == id) return &instance;
    for (const v1::Component& child : instance.children()) {
      if (const auto* found = FindInstance(child, name, id)) return found;
    }
  }
  return nullptr;
}

int CountPods(const v1::Component& component) {
  int pods = 0;
  for (const v1::ComponentInstance& instance : component.instances()) {
    pods += instance.pods_size();
    for (const v1::Component& child : instance.children()) pods += CountPods(child);
  }
  return pods;
}

std::string Counts(const v1::ReplicaCounts& c) {
  return absl::StrCat(c.desired(), "/", c.current(), "/", c.ready());
}

#define EXPECT_CODE(status, code, substring)                                             \
  do {                                                                                   \
    grpc::Status s_ = (status);                                                          \
    EXPECT_EQ(s_.error_code(), grpc::StatusCode::code) << s_.error_message();            \
    EXPECT_THAT(s_.error_message(), HasSubstr(substring)) << "code " << s_.error_code(); \
  } while (0)

// ---- ResolveWorkload ------------------------------------------------------

// Without pods the answer comes from bytes serialized at publication; it
// must be exactly the answer with pods, less the pods.
TEST_F(ServiceTest, ResolveWithoutPodsIsResolveWithPodsLessThePods) {
  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = DemoRef();
  v1::ResolveWorkloadResponse without_pods, with_pods;
  ASSERT_TRUE(Resolve(request, &without_pods).ok());
  request.set_include_pods(true);
  ASSERT_TRUE(Resolve(request, &with_pods).ok());
  ASSERT_GT(CountPods(with_pods.workload().root()), 0);
  EXPECT_EQ(CountPods(without_pods.workload().root()), 0);
  EXPECT_EQ(without_pods.revision(), with_pods.revision());
  EXPECT_EQ(without_pods.revision(), harness_->index().revision());
  v1::ResolvedWorkload expected;
  CopyTrimmed(with_pods.workload(), false, 0, &expected);
  std::string differences;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differencer.Compare(expected, without_pods.workload())) << differences;
}

TEST_F(ServiceTest, ResolveRejectsBytesThatAreNotARequest) {
  grpc::GenericStub generic(harness_->channel());
  grpc::ClientContext context;
  SetDeadline(context);
  const std::string garbage = "\xff\xff\xff";
  grpc::Slice slice(garbage);
  grpc::ByteBuffer request(&slice, 1), response;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&context, "/workloadmap.v1.WorkloadMap/ResolveWorkload", grpc::StubOptions(),
                    &request, &response, [&](grpc::Status s) { done.set_value(std::move(s)); });
  EXPECT_CODE(done.get_future().get(), INVALID_ARGUMENT,
              "request is not a valid workloadmap.v1.ResolveWorkloadRequest");
}

// Sends `bytes` as the request of `method` (a unary call to a streaming
// method too: the answers looked at here are errors that end the call).
grpc::Status CallWithBytes(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                           const std::string& bytes) {
  grpc::GenericStub generic(channel);
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&context, "/workloadmap.v1.WorkloadMap/" + method, grpc::StubOptions(),
                    &request, &response, [&](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// Every method, not only the raw ResolveWorkload, says that bytes which are
// not its request message are not one, and why, rather than gRPC's
// UNIMPLEMENTED without a message (the method exists).
TEST_F(ServiceTest, EveryMethodRejectsBytesThatAreNotItsRequest) {
  struct Method {
    std::string name;
    // A string field holding "\xc3\x28" (not UTF-8), and its path; none
    // for a request without string fields.
    std::string invalid_utf8;
    std::string field;
  };
  const std::string kNotUtf8 = "\x02\xc3\x28";  // length, then the bytes
  const std::vector<Method> methods = {
      {"ResolveWorkload", "\x12\x04\x0a" + kNotUtf8, "inline.object_json"},
      {"ListWorkloads", "\x0a" + kNotUtf8, "cluster"},
      {"MutatePodSpecs", "\x1a\x04\x0a" + kNotUtf8, "changes[0].component"},
      {"GetGangInstructions", "\x1a\x04\x0a" + kNotUtf8, "inline_pod.pod_json"},
      {"WatchWorkloads", "\x0a" + kNotUtf8, "cluster"},
      {"ListDefinitions", "", ""},
      {"ValidateDefinition", "\x0a" + kNotUtf8, "definition_yaml"},
  };
  for (const Method& m : methods) {
    SCOPED_TRACE(m.name);
    const std::string named =
        absl::StrCat("request is not a valid workloadmap.v1.", m.name, "Request: ");
    EXPECT_CODE(CallWithBytes(harness_->channel(), m.name, "\xff\xff\xff\xff"), INVALID_ARGUMENT,
                named);
    // Field 1 announces 127 bytes and 3 follow.
    EXPECT_CODE(CallWithBytes(harness_->channel(), m.name,
                              "\x0a\x7f"
                              "abc"),
                INVALID_ARGUMENT, named + "the field at byte 0 is truncated or malformed");
    if (!m.invalid_utf8.empty()) {
      EXPECT_CODE(CallWithBytes(harness_->channel(), m.name, m.invalid_utf8), INVALID_ARGUMENT,
                  named + m.field + " is not valid UTF-8");
    }
  }
  // The server still answers.
  grpc::ClientContext context;
  SetDeadline(context);
  v1::ListDefinitionsResponse definitions;
  EXPECT_TRUE(stub().ListDefinitions(&context, {}, &definitions).ok());
  EXPECT_THAT(definitions.definitions(), Not(IsEmpty()));
}

// Past protobuf's nesting bound the reason says so, and stays short however
// long the path to it (it travels in the trailers).
TEST_F(ServiceTest, RequestNestedTooDeepIsRefusedWithAShortReason) {
  v1::MutatePodSpecsRequest request;
  google::protobuf::Struct* level = request.add_changes()->mutable_pod_template();
  for (int i = 0; i < 150; ++i) {
    level = (*level->mutable_fields())["spec"].mutable_struct_value();
  }
  grpc::Status status =
      CallWithBytes(harness_->channel(), "MutatePodSpecs", request.SerializeAsString());
  EXPECT_CODE(status, INVALID_ARGUMENT,
              "request is not a valid workloadmap.v1.MutatePodSpecsRequest: "
              "changes[0].pod_template.fields[0].value.struct_value.");
  EXPECT_THAT(status.error_message(), HasSubstr("nests messages more than 100 levels deep"));
  EXPECT_LT(status.error_message().size(), 500u);
}

TEST_F(ServiceTest, ResolveByRef) {
  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = DemoRef();
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::ResolvedWorkload& w = response.workload();

  EXPECT_EQ(w.ref().cluster(), "test");
  EXPECT_EQ(w.ref().namespace_(), "default");
  EXPECT_EQ(w.ref().group(), "jobset.x-k8s.io");
  EXPECT_EQ(w.ref().version(), "v1alpha2");
  EXPECT_EQ(w.ref().kind(), "JobSet");
  EXPECT_EQ(w.ref().name(), "demo");
  EXPECT_EQ(w.ref().uid(), kDemoUid);
  EXPECT_EQ(w.definition().name(), kJobSetDefinition);
  EXPECT_EQ(w.definition().origin(), "catalog");
  EXPECT_THAT(w.status().matched_statuses(), ElementsAre("Running"));
  EXPECT_EQ(w.creation_timestamp(), "2026-11-30T12:00:00Z");
  EXPECT_EQ(w.resource_version(), "1000");
  EXPECT_EQ(w.resources().quantities().at("nvidia.com/gpu"), 12);
  EXPECT_THAT(w.nodes(), UnorderedElementsAre("gpu-node-1", "gpu-node-2", "gpu-node-3"));

  // The root "jobset" with one instance holding the replicated jobs.
  EXPECT_EQ(w.root().name(), "jobset");
  ASSERT_EQ(w.root().instances_size(), 1);
  ASSERT_EQ(w.root().instances(0).children_size(), 1);
  const v1::Component& jobs = w.root().instances(0).children(0);
  EXPECT_EQ(jobs.name(), "replicatedjob");
  EXPECT_TRUE(jobs.has_pod_definition());
  EXPECT_EQ(jobs.kind().kind(), "Job");
  ASSERT_EQ(jobs.instances_size(), 2);
  EXPECT_EQ(jobs.instances(0).id(), "leader");
  EXPECT_EQ(jobs.instances(1).id(), "worker");
  EXPECT_EQ(Counts(jobs.instances(0).replicas()), "1/1/1");
  EXPECT_EQ(Counts(jobs.instances(1).replicas()), "2/2/2");
  EXPECT_EQ(Counts(jobs.replicas()), "3/3/3");
  EXPECT_EQ(jobs.instances(0).resources().quantities().at("nvidia.com/gpu"), 4);
  EXPECT_EQ(jobs.instances(1).resources().quantities().at("nvidia.com/gpu"), 8);
  EXPECT_EQ(jobs.instances(1).pod_resources().quantities().at("nvidia.com/gpu"), 4);

  // include_pods is false: counts but no pods.
  EXPECT_EQ(CountPods(w.root()), 0);

  // The revision is that of the published view.
  auto view = harness_->index().Get(
      {"test", {"jobset.x-k8s.io", "v1alpha2", "JobSet"}, kube::ObjectKey("default", "demo")});
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(response.revision(), view->revision);
  EXPECT_GT(response.revision(), 0u);
}

TEST_F(ServiceTest, ResolveWithPods) {
  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = DemoRef();
  request.set_include_pods(true);
  v1::ResolveWorkloadResponse response;
  ASSERT_TRUE(Resolve(request, &response).ok());
  const auto* leader = FindInstance(response.workload().root(), "replicatedjob", "leader");
  const auto* worker = FindInstance(response.workload().root(), "replicatedjob", "worker");
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(worker, nullptr);
  ASSERT_EQ(leader->pods_size(), 1);
  EXPECT_EQ(leader->pods(0).name(), "demo-leader-0-0-x0l");
  EXPECT_EQ(leader->pods(0).node(), "gpu-node-1");
  EXPECT_EQ(leader->pods(0).phase(), "Running");
  EXPECT_TRUE(leader->pods(0).ready());
  EXPECT_EQ(leader->pods(0).resources().quantities().at("nvidia.com/gpu"), 4);
  std::vector<std::string> workers;
  for (const auto& pod : worker->pods()) workers.push_back(pod.name());
  EXPECT_THAT(workers, UnorderedElementsAre("demo-worker-0-0-x0w", "demo-worker-1-0-x1w"));

  // pod_limit 1: at most one pod per instance; the counts still cover all.
  request.set_pod_limit(1);
  ASSERT_TRUE(Resolve(request, &response).ok());
  leader = FindInstance(response.workload().root(), "replicatedjob", "leader");
  worker = FindInstance(response.workload().root(), "replicatedjob", "worker");
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(leader->pods_size(), 1);
  EXPECT_EQ(worker->pods_size(), 1);
  EXPECT_EQ(Counts(worker->replicas()), "2/2/2");
  EXPECT_EQ(CountPods(response.workload().root()), 2);

  // The limit keeps the unhealthy pod: the second worker, once not ready.
  Json sick = SeedObject("Pod", "demo-worker-1-0-x1w");
  for (Json& condition : sick["status"]["conditions"]) {
    if (condition["type"] == "Ready") condition["status"] = "False";
  }
  sick["metadata"]["resourceVersion"] = "9999";
  Apply(kube::EventType::kModified, sick);
  Sync();
  ASSERT_TRUE(Resolve(request, &response).ok());
  worker = FindInstance(response.workload().root(), "replicatedjob", "worker");
  ASSERT_NE(worker, nullptr);
  ASSERT_EQ(worker->pods_size(), 1);
  EXPECT_EQ(worker->pods(0).name(), "demo-worker-1-0-x1w");
  EXPECT_FALSE(worker->pods(0).ready());
}

TEST_F(ServiceTest, ResolveByResource) {
  v1::ResolveWorkloadRequest request;
  request.mutable_ref()->set_resource("jobsets");
  request.mutable_ref()->set_name("demo");
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.workload().ref().kind(), "JobSet");
  EXPECT_EQ(response.workload().ref().uid(), kDemoUid);
  EXPECT_EQ(response.workload().resources().quantities().at("nvidia.com/gpu"), 12);

  // With the group as well.
  request.mutable_ref()->set_group("jobset.x-k8s.io");
  ASSERT_TRUE(Resolve(request, &response).ok());
  EXPECT_EQ(response.workload().ref().name(), "demo");
}

TEST_F(ServiceTest, ResolveTopOwner) {
  v1::ResolveWorkloadRequest request;
  request.mutable_ref()->set_kind("Pod");
  request.mutable_ref()->set_name("demo-worker-0-0-x0w");

  // Without top_owner the pod is resolved as itself (the catalog's Pod).
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.workload().ref().kind(), "Pod");
  EXPECT_EQ(response.workload().definition().name(), "core-pod-v1");

  request.set_top_owner(true);
  status = Resolve(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.workload().ref().kind(), "JobSet");
  EXPECT_EQ(response.workload().ref().name(), "demo");
  EXPECT_EQ(response.workload().ref().uid(), kDemoUid);
  EXPECT_EQ(response.workload().definition().name(), kJobSetDefinition);

  // From a Job of the JobSet too. Two definitions cover a kind "Job"
  // (batch and Volcano's), so the group is needed.
  request.mutable_ref()->set_kind("Job");
  request.mutable_ref()->set_name("demo-worker-1");
  EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
              "ref: kind \"Job\" is in groups batch, batch.volcano.sh; set group");
  request.mutable_ref()->set_group("batch");
  status = Resolve(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.workload().ref().kind(), "JobSet");
  EXPECT_EQ(response.workload().ref().name(), "demo");
}

TEST_F(ServiceTest, ResolveInline) {
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
  for (const std::string& pod : SeedJson("Pod")) request.mutable_inline_()->add_pod_json(pod);
  for (const std::string& job : SeedJson("Job")) request.mutable_inline_()->add_owner_json(job);
  request.set_include_pods(true);
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::ResolvedWorkload& w = response.workload();
  EXPECT_EQ(response.revision(), 0u);
  EXPECT_EQ(w.ref().kind(), "JobSet");
  EXPECT_EQ(w.ref().name(), "demo");
  EXPECT_EQ(w.ref().cluster(), "test");
  EXPECT_THAT(w.status().matched_statuses(), ElementsAre("Running"));
  EXPECT_EQ(w.resources().quantities().at("nvidia.com/gpu"), 12);
  const auto* leader = FindInstance(w.root(), "replicatedjob", "leader");
  const auto* worker = FindInstance(w.root(), "replicatedjob", "worker");
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(Counts(leader->replicas()), "1/1/1");
  EXPECT_EQ(Counts(worker->replicas()), "2/2/2");
  EXPECT_EQ(CountPods(w.root()), 3);

  // The same as the cached view by reference.
  v1::ResolveWorkloadRequest by_ref;
  *by_ref.mutable_ref() = DemoRef();
  by_ref.set_include_pods(true);
  v1::ResolveWorkloadResponse cached;
  ASSERT_TRUE(Resolve(by_ref, &cached).ok());
  EXPECT_TRUE(SameMessage(cached.workload().root(), w.root()));
  EXPECT_TRUE(SameMessage(cached.workload().gang(), w.gang()));

  // The answer is trimmed where it was built (on the call's arena): at
  // most one pod per instance, the counts still cover all; or no pods.
  request.set_pod_limit(1);
  ASSERT_TRUE(Resolve(request, &response).ok());
  worker = FindInstance(response.workload().root(), "replicatedjob", "worker");
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->pods_size(), 1);
  EXPECT_EQ(Counts(worker->replicas()), "2/2/2");
  request.set_include_pods(false);
  ASSERT_TRUE(Resolve(request, &response).ok());
  EXPECT_EQ(CountPods(response.workload().root()), 0);
  EXPECT_EQ(response.workload().resources().quantities().at("nvidia.com/gpu"), 12);

  // Without pods or owners, the spec still gives the desired scale.
  v1::ResolveWorkloadRequest bare;
  bare.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
  ASSERT_TRUE(Resolve(bare, &response).ok());
  worker = FindInstance(response.workload().root(), "replicatedjob", "worker");
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(Counts(worker->replicas()), "2/0/0");
}

// Each inline object costs the daemon working memory while the call runs:
// past the bound (10,000 by default) the call is refused before parsing.
TEST_F(ServiceTest, ResolveInlineBoundsItsObjects) {
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
  for (int i = 0; i < 9999; ++i) request.mutable_inline_()->add_pod_json("{}");
  request.mutable_inline_()->add_owner_json(SeedObject("Job", "demo-leader-0").dump());
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  request.mutable_inline_()->add_pod_json("{}");
  status = Resolve(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "inline.pod_json and inline.owner_json: 10000 pods and 1 owners, more than the 10000 "
            "objects one call may send inline");
  // The bound is the service's option (--max-inline-objects).
  Start({.max_inline_objects = 3});
  request.mutable_inline_()->clear_pod_json();
  request.mutable_inline_()->add_pod_json("{}");
  request.mutable_inline_()->add_pod_json("{}");
  EXPECT_TRUE(Resolve(request, &response).ok());
  request.mutable_inline_()->add_pod_json("{}");
  status = Resolve(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("more than the 3 objects"));
}

// A small inline call is resolved on gRPC's calling thread; a large one,
// or any when small_inline_bytes is 0 (the default, and libjq's), is handed
// to the work pool, whose threads run at pool_nice.
TEST_F(ServiceTest, SmallInlineCallsSkipTheHandOffToThePool) {
  const int own_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  if (own_nice > 12) GTEST_SKIP() << "the test runs at nice " << own_nice;
  const int pool_nice = own_nice + 7;
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
  for (const std::string& pod : SeedJson("Pod")) request.mutable_inline_()->add_pod_json(pod);
  for (const std::string& job : SeedJson("Job")) request.mutable_inline_()->add_owner_json(job);
  auto nice_of_resolution = [&] {
    v1::ResolveWorkloadResponse response;
    grpc::Status status = Resolve(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.workload().ref().name(), "demo");
    return Engine().last_run_nice();
  };

  Start({.pool_nice = pool_nice});
  EXPECT_EQ(nice_of_resolution(), pool_nice);
  Start({.pool_nice = pool_nice, .small_inline_bytes = 32 << 10});
  EXPECT_EQ(nice_of_resolution(), own_nice);
  // Past kSmallInlineMaxObjects pods and owners, or past the bytes, the
  // pool again.
  auto objects = [&] {
    return request.inline_().pod_json_size() + request.inline_().owner_json_size();
  };
  while (objects() < WorkloadMapService::kSmallInlineMaxObjects) {
    request.mutable_inline_()->add_pod_json("{}");
  }
  EXPECT_EQ(nice_of_resolution(), own_nice);
  request.mutable_inline_()->add_pod_json("{}");
  EXPECT_EQ(nice_of_resolution(), pool_nice);
  request.mutable_inline_()->clear_pod_json();
  Start({.pool_nice = pool_nice, .small_inline_bytes = 1000});
  EXPECT_EQ(nice_of_resolution(), pool_nice);
}

// So are GetGangInstructions' inline_pod and MutatePodSpecs' inline dry
// run, within the same bounds.
TEST_F(ServiceTest, SmallInlineGangAndDryRunCallsSkipTheHandOffToThePool) {
  const int own_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  if (own_nice > 12) GTEST_SKIP() << "the test runs at nice " << own_nice;
  const int pool_nice = own_nice + 7;
  v1::GetGangInstructionsRequest gang;
  gang.mutable_inline_pod()->set_pod_json(SeedObject("Pod", "demo-leader-0-0-x0l").dump());
  gang.mutable_inline_pod()->set_top_owner_json(SeedObject("JobSet", "demo").dump());
  auto nice_of_gang = [&] {
    v1::GetGangInstructionsResponse response;
    grpc::Status status = Gang(gang, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.assignment().pod(), "demo-leader-0-0-x0l");
    return Engine().last_run_nice();
  };
  v1::MutatePodSpecsRequest dry_run;
  dry_run.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
  dry_run.add_changes()->set_scheduler_name("kai-scheduler");
  auto nice_of_dry_run = [&] {
    v1::MutatePodSpecsResponse response;
    grpc::Status status = Mutate(dry_run, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.applied());
    return Engine().last_run_nice();
  };

  Start({.pool_nice = pool_nice});
  EXPECT_EQ(nice_of_gang(), pool_nice);
  EXPECT_EQ(nice_of_dry_run(), pool_nice);
  Start({.pool_nice = pool_nice, .small_inline_bytes = 32 << 10});
  EXPECT_EQ(nice_of_gang(), own_nice);
  EXPECT_EQ(nice_of_dry_run(), own_nice);
  // Past the bytes, the pool again.
  ASSERT_GT(gang.ByteSizeLong(), 100u);
  ASSERT_GT(dry_run.ByteSizeLong(), 100u);
  Start({.pool_nice = pool_nice, .small_inline_bytes = 100});
  EXPECT_EQ(nice_of_gang(), pool_nice);
  EXPECT_EQ(nice_of_dry_run(), pool_nice);
}

// The working memory of large inline requests goes back to the system
// when they end (glibc would keep it in its arenas, one per thread): six
// requests of 4,000 pods, two at a time.
TEST_F(ServiceTest, LargeInlineRequestsGiveTheirMemoryBack) {
  if (wm::testing::kSanitizedBuild) GTEST_SKIP() << "sanitizer allocators keep freed memory";
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
  request.mutable_inline_()->add_owner_json(SeedObject("Job", "demo-worker-0").dump());
  Json pod = SeedObject("Pod", "demo-worker-0-0-x0w");
  for (int i = 0; i < 4000; ++i) {
    pod["metadata"]["name"] = absl::StrCat("demo-worker-0-0-", i);
    pod["metadata"]["uid"] = absl::StrCat("uid-", i);
    request.mutable_inline_()->add_pod_json(pod.dump());
  }
  request.set_include_pods(true);
  ASSERT_LT(request.ByteSizeLong(), size_t{4} << 20);  // gRPC's default limit
  auto resolve_twice_at_once = [&] {
    std::vector<std::future<grpc::Status>> calls;
    for (int i = 0; i < 2; ++i) {
      calls.push_back(std::async(std::launch::async, [&] {
        v1::ResolveWorkloadResponse response;
        return Resolve(request, &response);
      }));
    }
    for (auto& call : calls) {
      grpc::Status status = call.get();
      EXPECT_TRUE(status.ok()) << status.error_message();
    }
  };
  const int64_t before = static_cast<int64_t>(ResidentBytes());
  for (int round = 0; round < 3; ++round) resolve_twice_at_once();
  const int64_t after = static_cast<int64_t>(ResidentBytes());
  // Measured: 100-110 MiB stay without the trim, 11-21 MiB with it (gRPC's
  // and the test's own buffers).
  EXPECT_LT(after - before, int64_t{48} << 20)
      << "resident before " << (before >> 20) << " MiB, after " << (after >> 20) << " MiB";
}

TEST_F(ServiceTest, ResolveErrors) {
  v1::ResolveWorkloadResponse response;
  {
    // A kind whose watch has not delivered its first list: retry later.
    cluster_->SetSyncing("RayCluster");
    v1::ResolveWorkloadRequest request;
    request.mutable_ref()->set_kind("RayCluster");
    request.mutable_ref()->set_name("ray");
    EXPECT_CODE(Resolve(request, &response), UNAVAILABLE, "not yet synced; retry");
  }
  {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    request.mutable_ref()->set_name("nope");
    EXPECT_CODE(Resolve(request, &response), NOT_FOUND, "JobSet default/nope not found");
  }
  {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    request.mutable_ref()->set_cluster("elsewhere");
    EXPECT_CODE(Resolve(request, &response), NOT_FOUND, "cluster \"elsewhere\" is not served");
  }
  {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    request.mutable_ref()->set_kind("ConfigMap");
    EXPECT_CODE(Resolve(request, &response), FAILED_PRECONDITION,
                "ref: no definition covers kind \"ConfigMap\"");
  }
  {
    v1::ResolveWorkloadRequest request;
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT, "ref or inline is required");
  }
  {
    v1::ResolveWorkloadRequest request;
    request.mutable_ref()->set_kind("JobSet");
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT, "ref: name is required");
  }
  {
    v1::ResolveWorkloadRequest request;
    request.mutable_ref()->set_name("demo");
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT, "ref: kind or resource is required");
  }
  {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    request.set_include_pods(true);
    request.set_pod_limit(-1);
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT, "pod_limit is negative");
  }
  {
    v1::ResolveWorkloadRequest request;
    request.mutable_inline_()->set_object_json("[1, 2]");
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
                "inline.object_json is not a JSON object");
    request.mutable_inline_()->set_object_json("{not json");
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
                "inline.object_json: invalid JSON at byte 2");
    request.mutable_inline_()->set_object_json(R"({"kind": "JobSet"})");
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
                "inline.object_json: apiVersion and kind are required");
  }
  {
    v1::ResolveWorkloadRequest request;
    request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
    request.mutable_inline_()->add_pod_json(SeedJson("Pod")[0]);
    request.mutable_inline_()->add_pod_json("\"a string\"");
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
                "inline.pod_json[1] is not a JSON object");
  }
  {
    v1::ResolveWorkloadRequest request;
    request.mutable_inline_()->set_object_json(
        R"({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})");
    EXPECT_CODE(Resolve(request, &response), FAILED_PRECONDITION,
                "no definition covers v1/ConfigMap");
  }

  // The observer saw each call with its code.
  std::vector<Harness::Call> calls = harness_->calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front().method, "ResolveWorkload");
  EXPECT_EQ(calls.front().code, grpc::StatusCode::UNAVAILABLE);
}

// Two file definitions for the JobSet kind make it ambiguous.
TEST_F(ServiceTest, TwoDefinitionsForOneKind) {
  auto registry = NewCatalogRegistry();
  Json definition =
      ReadYamlFile(SourcePath("catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml")).value().at(0);
  std::vector<std::pair<std::string, std::string>> docs;
  for (const std::string name : {"jobset-copy-a", "jobset-copy-b"}) {
    definition["metadata"]["name"] = name;
    docs.emplace_back(name + ".yaml", definition.dump());
  }
  ASSERT_TRUE(registry->AddDocuments(docs, definitions::Origin::kFile).ok());
  Start({}, registry);

  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = DemoRef();
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("ambiguous: 2 file definitions cover"));
  EXPECT_THAT(status.error_message(), HasSubstr("jobset-copy-a"));
  EXPECT_THAT(status.error_message(), HasSubstr("jobset-copy-b"));

  // Inline objects of the kind too.
  v1::ResolveWorkloadRequest inline_request;
  inline_request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
  EXPECT_CODE(Resolve(inline_request, &response), FAILED_PRECONDITION, "ambiguous");

  // The workload is still listed, with the error.
  v1::ListWorkloadsResponse list;
  ASSERT_TRUE(List({}, &list).ok());
  ASSERT_EQ(list.workloads_size(), 1);
  EXPECT_EQ(list.workloads(0).ref().name(), "demo");
  EXPECT_THAT(list.workloads(0).error(), HasSubstr("ambiguous"));
}

// ---- ListWorkloads ----------------------------------------------------------

TEST_F(ServiceTest, ListOnlyTopLevel) {
  v1::ListWorkloadsResponse response;
  grpc::Status status = List({}, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Jobs and Pods are covered kinds, but they belong to the JobSet.
  ASSERT_EQ(response.workloads_size(), 1);
  const v1::WorkloadSummary& row = response.workloads(0);
  EXPECT_EQ(row.ref().kind(), "JobSet");
  EXPECT_EQ(row.ref().name(), "demo");
  EXPECT_EQ(row.ref().uid(), kDemoUid);
  EXPECT_EQ(row.definition(), kJobSetDefinition);
  EXPECT_THAT(row.matched_statuses(), ElementsAre("Running"));
  EXPECT_EQ(row.gpus(), 12);
  EXPECT_EQ(row.creation_timestamp(), "2026-11-30T12:00:00Z");
  EXPECT_TRUE(row.error().empty());
  ASSERT_EQ(row.components_size(), 2);
  EXPECT_EQ(row.components(0).name(), "replicatedjob");
  EXPECT_EQ(row.components(0).instance_id(), "leader");
  EXPECT_EQ(Counts(row.components(0).replicas()), "1/1/1");
  EXPECT_EQ(row.components(0).gpus(), 4);
  EXPECT_EQ(row.components(1).name(), "replicatedjob");
  EXPECT_EQ(row.components(1).instance_id(), "worker");
  EXPECT_EQ(Counts(row.components(1).replicas()), "2/2/2");
  EXPECT_EQ(row.components(1).gpus(), 8);
  EXPECT_TRUE(response.next_page_token().empty());
  EXPECT_EQ(response.revision(), harness_->index().revision());

  // The Jobs and Pods are covered kinds, but inside the JobSet: the index
  // keeps no view of them, yet each resolves on request (on the pool).
  EXPECT_THAT(harness_->index().List(), SizeIs(1));
  v1::ResolveWorkloadRequest job;
  job.mutable_ref()->set_kind("Job");
  job.mutable_ref()->set_group("batch");
  job.mutable_ref()->set_name("demo-worker-0");
  v1::ResolveWorkloadResponse resolved_job;
  grpc::Status job_status = Resolve(job, &resolved_job);
  ASSERT_TRUE(job_status.ok()) << job_status.error_message();
  EXPECT_EQ(resolved_job.workload().ref().kind(), "Job");
  EXPECT_EQ(resolved_job.revision(), harness_->index().revision());

  // A Job or Pod filter lists nothing; a standalone Pod is a row of its own.
  v1::ListWorkloadsRequest request;
  request.add_kinds("Job");
  request.add_kinds("pods");
  EXPECT_THAT(ListNames(request), IsEmpty());
  Json pod = SeedObject("Pod", "demo-worker-0-0-x0w");
  pod["metadata"]["name"] = "standalone";
  pod["metadata"]["uid"] = "uid-standalone";
  pod["metadata"].erase("ownerReferences");
  Apply(kube::EventType::kAdded, pod);
  Sync();
  EXPECT_THAT(ListNames(request), ElementsAre("standalone"));
}

class ListTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    AddJobSets();
  }
  void AddJobSets() {
    // With demo (2026-11-30): five workloads, newest first
    // e, d, c, b, demo.
    Apply(kube::EventType::kAdded,
          NewJobSet("b", "2026-12-01T00:00:00Z", "default", {{"team", "a"}}));
    Apply(kube::EventType::kAdded,
          NewJobSet("c", "2026-12-02T00:00:00Z", "team-a", {{"team", "a"}, {"tier", "gold"}}));
    Apply(kube::EventType::kAdded,
          NewJobSet("d", "2026-12-03T00:00:00Z", "team-b", {{"team", "b"}}));
    Apply(kube::EventType::kAdded, NewJobSet("e", "2026-12-04T00:00:00Z", "default", {}, 3));
    Sync();
  }
};

TEST_F(ListTest, NewestFirst) {
  v1::ListWorkloadsResponse response;
  ASSERT_TRUE(List({}, &response).ok());
  std::vector<std::string> names;
  for (const auto& row : response.workloads()) names.push_back(row.ref().name());
  EXPECT_THAT(names, ElementsAre("e", "d", "c", "b", "demo"));
  EXPECT_TRUE(response.next_page_token().empty());
  // e: 3 worker replicas of 2 GPUs, no pods yet.
  const v1::WorkloadSummary& e = response.workloads(0);
  EXPECT_EQ(e.gpus(), 6);
  EXPECT_THAT(e.matched_statuses(), ElementsAre("Initializing"));
  ASSERT_EQ(e.components_size(), 1);
  EXPECT_EQ(e.components(0).instance_id(), "worker");
  EXPECT_EQ(Counts(e.components(0).replicas()), "3/0/0");
  EXPECT_GT(response.workloads(4).age_seconds(), 0);
}

TEST_F(ListTest, Filters) {
  v1::ListWorkloadsRequest request;
  request.set_namespace_("team-a");
  EXPECT_THAT(ListNames(request), ElementsAre("c"));

  for (const std::string kind : {"JobSet", "jobset.x-k8s.io/JobSet", "jobsets"}) {
    request = {};
    request.add_kinds(kind);
    EXPECT_THAT(ListNames(request), ElementsAre("e", "d", "c", "b", "demo")) << kind;
  }
  request = {};
  request.add_kinds("Deployment");
  request.add_kinds("batch/Job");
  EXPECT_THAT(ListNames(request), IsEmpty());

  request = {};
  request.add_statuses("Running");
  EXPECT_THAT(ListNames(request), ElementsAre("demo"));
  request.add_statuses("Initializing");
  EXPECT_THAT(ListNames(request), ElementsAre("e", "d", "c", "b", "demo"));
  request = {};
  request.add_statuses("Failed");
  EXPECT_THAT(ListNames(request), IsEmpty());

  request = {};
  request.set_label_selector("team=a");
  EXPECT_THAT(ListNames(request), ElementsAre("c", "b"));
  request.set_label_selector("team in (a,b),tier!=gold");
  EXPECT_THAT(ListNames(request), ElementsAre("d", "b"));
  request.set_label_selector("!team");
  EXPECT_THAT(ListNames(request), ElementsAre("e", "demo"));

  // Filters combine.
  request = {};
  request.set_namespace_("default");
  request.add_kinds("jobsets");
  request.set_label_selector("team");
  EXPECT_THAT(ListNames(request), ElementsAre("b"));

  request = {};
  request.set_cluster("test");
  EXPECT_THAT(ListNames(request), ElementsAre("e", "d", "c", "b", "demo"));
}

TEST_F(ListTest, Errors) {
  v1::ListWorkloadsResponse response;
  v1::ListWorkloadsRequest request;
  request.set_label_selector("team in (a");
  EXPECT_CODE(List(request, &response), INVALID_ARGUMENT, "label_selector");
  request = {};
  request.add_statuses("Sleeping");
  EXPECT_CODE(List(request, &response), INVALID_ARGUMENT, "statuses: unknown status \"Sleeping\"");
  request = {};
  request.set_page_token("not a token!");
  EXPECT_CODE(List(request, &response), INVALID_ARGUMENT, "page_token");
  request = {};
  request.set_page_size(-1);
  EXPECT_CODE(List(request, &response), INVALID_ARGUMENT, "page_size");
  request = {};
  request.set_cluster("elsewhere");
  EXPECT_CODE(List(request, &response), NOT_FOUND, "cluster \"elsewhere\"");
}

// Only tokens this server issued are accepted: a guessed, altered or
// oversized one is refused instead of listing from some position.
TEST_F(ListTest, PageTokensThisServerDidNotIssueAreRefused) {
  v1::ListWorkloadsRequest request;
  request.set_page_size(2);
  v1::ListWorkloadsResponse response;
  ASSERT_TRUE(List(request, &response).ok());
  const std::string issued = response.next_page_token();
  ASSERT_FALSE(issued.empty());
  std::string altered = issued;
  altered[4] = altered[4] == 'A' ? 'B' : 'A';
  for (const std::string& token :
       {std::string("-1"), std::string("9999999999999999999999"), std::string(400, 'A'),
        std::string(1 << 20, 'A'), altered, issued.substr(0, issued.size() - 1), "v1.." + issued,
        // A bare base64 sort key, as earlier versions issued.
        issued.substr(3, issued.rfind('.') - 3)}) {
    request.set_page_token(token);
    grpc::Status status = List(request, &response);
    EXPECT_CODE(status, INVALID_ARGUMENT, "page_token is not one this server issued");
    EXPECT_LT(status.error_message().size(), 512u);
  }
  request.set_page_token(issued);
  EXPECT_TRUE(List(request, &response).ok());
}

TEST_F(ListTest, SelectorKeysAndLengthAreCheckedAsKubernetesDoes) {
  v1::ListWorkloadsRequest request;
  v1::ListWorkloadsResponse response;
  request.set_label_selector(std::string(1 << 20, 'k') + "=v");
  EXPECT_CODE(List(request, &response), INVALID_ARGUMENT,
              "label_selector: 1048578 bytes, more than the 16384 a selector may have");
  request.set_label_selector(std::string(100, 'k') + "=v");
  EXPECT_CODE(List(request, &response), INVALID_ARGUMENT,
              "name part must be no more than 63 characters (it has 100)");
  request.set_label_selector("team=" + std::string(64, 'v'));
  EXPECT_CODE(List(request, &response), INVALID_ARGUMENT, "must be no more than 63 characters");
  request.set_label_selector(std::string(63, 'k') + "=" + std::string(63, 'v'));
  EXPECT_TRUE(List(request, &response).ok());
}

// No error echoes a caller's text whole: gRPC sends the message in the
// trailers, and one past their limit reaches the client as another error.
TEST_F(ListTest, ErrorsQuoteAShortPrefixOfWhatWasSent) {
  v1::ListWorkloadsResponse response;
  auto check = [&](const v1::ListWorkloadsRequest& request, grpc::StatusCode code,
                   const std::string& expected) {
    grpc::Status status = List(request, &response);
    EXPECT_EQ(status.error_code(), code) << status.error_message().substr(0, 200);
    EXPECT_THAT(status.error_message(), HasSubstr(expected));
    EXPECT_LT(status.error_message().size(), 512u);
  };
  v1::ListWorkloadsRequest request;
  request.set_label_selector("team in (" + std::string(12 << 10, 'x') + ", -bad)");
  check(request, grpc::StatusCode::INVALID_ARGUMENT, "label_selector: \"team in (xxxx");
  request = {};
  request.add_statuses(std::string(200 << 10, 'S'));
  check(request, grpc::StatusCode::INVALID_ARGUMENT, "(204800 bytes)");
  request = {};
  request.set_cluster(std::string(200 << 10, 'c'));
  check(request, grpc::StatusCode::NOT_FOUND, "cluster \"cccc");
}

TEST_F(ServiceTest, RefErrorsDoNotEchoLongNames) {
  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = DemoRef();
  request.mutable_ref()->set_name(std::string(200 << 10, 'n'));
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  EXPECT_CODE(status, INVALID_ARGUMENT,
              "ref.name: 204800 characters, more than the 253 of a Kubernetes name");
  EXPECT_LT(status.error_message().size(), 512u);
  request.mutable_ref()->set_name("demo");
  request.mutable_ref()->set_kind(std::string(200 << 10, 'K'));
  status = Resolve(request, &response);
  EXPECT_CODE(status, FAILED_PRECONDITION, "ref: no definition covers kind \"KKKK");
  EXPECT_LT(status.error_message().size(), 512u);
}

TEST_F(ListTest, Paging) {
  v1::ListWorkloadsRequest request;
  request.set_page_size(2);
  std::vector<std::string> names;
  std::vector<int> page_sizes;
  for (int page = 0; page < 10; ++page) {
    v1::ListWorkloadsResponse response;
    grpc::Status status = List(request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    page_sizes.push_back(response.workloads_size());
    for (const auto& row : response.workloads()) names.push_back(row.ref().name());
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
  }
  EXPECT_THAT(page_sizes, ElementsAre(2, 2, 1));
  EXPECT_THAT(names, ElementsAre("e", "d", "c", "b", "demo"));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 5u);

  // A page of exactly the remaining rows is the last one.
  request = {};
  request.set_page_size(5);
  v1::ListWorkloadsResponse response;
  ASSERT_TRUE(List(request, &response).ok());
  EXPECT_EQ(response.workloads_size(), 5);
  EXPECT_TRUE(response.next_page_token().empty());

  // Paging with a filter pages the filtered rows.
  request = {};
  request.set_page_size(1);
  request.set_label_selector("team");
  names.clear();
  for (int page = 0; page < 10; ++page) {
    ASSERT_TRUE(List(request, &response).ok());
    for (const auto& row : response.workloads()) names.push_back(row.ref().name());
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
  }
  EXPECT_THAT(names, ElementsAre("d", "c", "b"));
}

TEST_F(ListTest, PageSizeIsClamped) {
  Start({.max_page_size = 3});
  AddJobSets();
  v1::ListWorkloadsRequest request;
  request.set_page_size(100);
  v1::ListWorkloadsResponse response;
  ASSERT_TRUE(List(request, &response).ok());
  EXPECT_EQ(response.workloads_size(), 3);
  EXPECT_FALSE(response.next_page_token().empty());
  // 0 is the default of 100, clamped as well.
  request.set_page_size(0);
  ASSERT_TRUE(List(request, &response).ok());
  EXPECT_EQ(response.workloads_size(), 3);
  request.set_page_token(response.next_page_token());
  ASSERT_TRUE(List(request, &response).ok());
  ASSERT_EQ(response.workloads_size(), 2);
  EXPECT_EQ(response.workloads(0).ref().name(), "b");
  EXPECT_EQ(response.workloads(1).ref().name(), "demo");
  EXPECT_TRUE(response.next_page_token().empty());
}

// ---- MutatePodSpecs ---------------------------------------------------------

TEST_F(ServiceTest, MutateSchedulerNameDryRun) {
  v1::MutatePodSpecsRequest request;
  *request.mutable_ref() = DemoRef();
  request.add_changes()->set_scheduler_name("kai-scheduler");
  v1::MutatePodSpecsResponse response;
  grpc::Status status = Mutate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(response.applied());
  EXPECT_TRUE(response.resource_version().empty());

  Json object = ToJson(response.result().object());
  ASSERT_EQ(object["spec"]["replicatedJobs"].size(), 2u);
  for (const Json& job : object["spec"]["replicatedJobs"]) {
    EXPECT_EQ(job["template"]["spec"]["template"]["spec"]["schedulerName"], "kai-scheduler")
        << job.dump();
    // The rest of the template is kept.
    EXPECT_EQ(job["template"]["spec"]["template"]["spec"]["restartPolicy"], "Never");
  }
  EXPECT_EQ(object["metadata"]["name"], "demo");

  Json patch = ToJson(response.result().patch());
  ASSERT_EQ(patch.size(), 2u) << patch.dump();
  std::set<std::string> paths;
  for (const Json& op : patch) {
    EXPECT_TRUE(op["op"] == "add" || op["op"] == "replace") << op.dump();
    EXPECT_EQ(op["value"], "kai-scheduler");
    paths.insert(op["path"].get<std::string>());
  }
  EXPECT_THAT(paths, UnorderedElementsAre(
                         "/spec/replicatedJobs/0/template/spec/template/spec/schedulerName",
                         "/spec/replicatedJobs/1/template/spec/template/spec/schedulerName"));

  // A dry run: nothing was patched, the cached object is unchanged.
  EXPECT_THAT(cluster_->patches(), IsEmpty());
  auto cached = cluster_->view()
                    .StoreFor({"jobset.x-k8s.io", "v1alpha2", "JobSet"})
                    ->Get(kube::ObjectKey("default", "demo"));
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(
      Find(*cached->Document(), {"spec", "replicatedJobs"})->at(0).dump().find("schedulerName"),
      std::string::npos);
}

TEST_F(ServiceTest, MutateLabelsMerge) {
  Json jobset = SeedObject("JobSet", "demo");
  jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["labels"] = {
      {"existing", "1"}};
  v1::MutatePodSpecsRequest request;
  request.mutable_inline_()->set_object_json(jobset.dump());
  v1::PodTemplateChange* change = request.add_changes();
  change->set_component("replicatedjob");
  change->set_instance_id("leader");
  (*change->mutable_labels())["team"] = "a";
  (*change->mutable_node_selector())["pool"] = "h100";
  v1::MutatePodSpecsResponse response;
  grpc::Status status = Mutate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  Json object = ToJson(response.result().object());
  const Json& leader = object["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
  const Json& worker = object["spec"]["replicatedJobs"][1]["template"]["spec"]["template"];
  EXPECT_EQ(leader["metadata"]["labels"], Json({{"existing", "1"}, {"team", "a"}}));
  EXPECT_EQ(leader["spec"]["nodeSelector"], Json({{"pool", "h100"}}));
  // Only the leader instance was selected.
  EXPECT_FALSE(worker.contains("metadata")) << worker.dump();
  EXPECT_FALSE(worker["spec"].contains("nodeSelector"));
  Json patch = ToJson(response.result().patch());
  for (const Json& op : patch) {
    EXPECT_TRUE(absl::StartsWith(op["path"].get<std::string>(), "/spec/replicatedJobs/0/"))
        << op.dump();
  }
}

TEST_F(ServiceTest, MutateSuspend) {
  v1::MutatePodSpecsRequest request;
  *request.mutable_ref() = DemoRef();
  request.set_suspend(v1::MutatePodSpecsRequest::SUSPEND);
  v1::MutatePodSpecsResponse response;
  grpc::Status status = Mutate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  Json object = ToJson(response.result().object());
  EXPECT_EQ(object["spec"]["suspend"], true);
  Json patch = ToJson(response.result().patch());
  EXPECT_EQ(patch, Json::parse(R"([{"op": "add", "path": "/spec/suspend", "value": true}])"));

  // Resume sets it back to false.
  Json suspended = SeedObject("JobSet", "demo");
  suspended["spec"]["suspend"] = true;
  request.mutable_inline_()->set_object_json(suspended.dump());
  request.set_suspend(v1::MutatePodSpecsRequest::RESUME);
  ASSERT_TRUE(Mutate(request, &response).ok());
  EXPECT_EQ(ToJson(response.result().object())["spec"]["suspend"], false);
}

TEST_F(ServiceTest, MutateApply) {
  v1::MutatePodSpecsRequest request;
  *request.mutable_ref() = DemoRef();
  request.add_changes()->set_priority_class_name("high");
  request.set_apply(true);
  v1::MutatePodSpecsResponse response;
  grpc::Status status = Mutate(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(response.applied());
  EXPECT_EQ(response.resource_version(), "1001");
  auto patches = cluster_->patches();
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].gvk.kind, "JobSet");
  EXPECT_EQ(patches[0].namespace_, "default");
  EXPECT_EQ(patches[0].name, "demo");
  EXPECT_EQ(patches[0].as_user, "");  // calls are not authenticated: as the daemon
  // Guarded by the resourceVersion it was computed from, then the patch.
  ASSERT_EQ(patches[0].patch.size(), 3u) << patches[0].patch.dump();
  EXPECT_EQ(patches[0].patch[0],
            Json::parse(R"({"op": "test", "path": "/metadata/resourceVersion", "value": "1000"})"));
  EXPECT_EQ(patches[0].patch[1]["value"], "high");
}

TEST_F(ServiceTest, MutateErrors) {
  v1::MutatePodSpecsResponse response;
  {
    v1::MutatePodSpecsRequest request;
    *request.mutable_ref() = DemoRef();
    v1::PodTemplateChange* change = request.add_changes();
    change->set_component("nope");
    change->set_scheduler_name("kai-scheduler");
    EXPECT_CODE(Mutate(request, &response), INVALID_ARGUMENT, "no component \"nope\"");
  }
  {
    v1::MutatePodSpecsRequest request;
    *request.mutable_ref() = DemoRef();
    EXPECT_CODE(Mutate(request, &response), INVALID_ARGUMENT, "changes: nothing to change");
    request.add_changes()->set_component("replicatedjob");
    EXPECT_CODE(Mutate(request, &response), INVALID_ARGUMENT, "changes[0]: changes nothing");
  }
  {
    v1::MutatePodSpecsRequest request;
    request.add_changes()->set_scheduler_name("kai-scheduler");
    EXPECT_CODE(Mutate(request, &response), INVALID_ARGUMENT, "ref or inline is required");
    request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
    request.set_apply(true);
    EXPECT_CODE(Mutate(request, &response), INVALID_ARGUMENT, "apply: only a ref target");
  }
  {
    v1::MutatePodSpecsRequest request;
    *request.mutable_ref() = DemoRef();
    request.mutable_ref()->set_name("nope");
    request.add_changes()->set_scheduler_name("kai-scheduler");
    EXPECT_CODE(Mutate(request, &response), NOT_FOUND, "JobSet default/nope not found");
  }
  EXPECT_THAT(cluster_->patches(), IsEmpty());
}

template <typename Message>
Message FromYaml(const std::string& yaml) {
  Message message;
  auto status = google::protobuf::util::JsonStringToMessage(
      ParseYamlDocuments(yaml).value().at(0).dump(), &message);
  EXPECT_TRUE(status.ok()) << status;
  return message;
}

// A dry run refuses what the apiserver would refuse, naming the request
// field, and puts nothing in a patch.
TEST_F(ServiceTest, MutateRefusesValuesTheApiserverWould) {
  v1::MutatePodSpecsResponse response;
  auto mutate = [&](const std::function<void(v1::PodTemplateChange*)>& fill) {
    v1::MutatePodSpecsRequest request;
    *request.mutable_ref() = DemoRef();
    request.add_changes()->set_scheduler_name("kai-scheduler");
    fill(request.add_changes());
    response.Clear();
    return Mutate(request, &response);
  };
  EXPECT_CODE(mutate([](auto* c) {
                c->mutable_tolerations()->CopyFrom(FromYaml<google::protobuf::ListValue>(
                    "[{key: a, operator: Exists}, {key: b, operator: Maybe}]"));
              }),
              INVALID_ARGUMENT,
              "changes[1].tolerations[1].operator: \"Maybe\" is not one of Exists, Equal");
  EXPECT_FALSE(response.has_result());
  EXPECT_CODE(mutate([](auto* c) {
                (*c->mutable_container_resources())["worker"] =
                    FromYaml<google::protobuf::Struct>("{requests: {cpu: lots}}");
              }),
              INVALID_ARGUMENT,
              "changes[1].container_resources[\"worker\"].requests[\"cpu\"]: \"lots\" is not a "
              "quantity");
  EXPECT_CODE(mutate([](auto* c) {
                (*c->mutable_container_resources())["worker"] =
                    FromYaml<google::protobuf::Struct>("{limits: {memory: '-3'}}");
              }),
              INVALID_ARGUMENT, "must be greater than or equal to 0");
  EXPECT_CODE(mutate([](auto* c) {
                (*c->mutable_container_resources())["worker"] =
                    FromYaml<google::protobuf::Struct>("{requests: 5}");
              }),
              INVALID_ARGUMENT,
              "changes[1].container_resources[\"worker\"].requests: must be a map of resource "
              "names to quantities");
  EXPECT_CODE(mutate([](auto* c) { (*c->mutable_labels())["bad key"] = "v"; }), INVALID_ARGUMENT,
              "changes[1].labels key: \"bad key\"");
  EXPECT_CODE(mutate([](auto* c) { (*c->mutable_labels())["team"] = std::string(64, 'v'); }),
              INVALID_ARGUMENT, "changes[1].labels[\"team\"]");
  EXPECT_CODE(mutate([](auto* c) { (*c->mutable_annotations())["a/b/c"] = "v"; }), INVALID_ARGUMENT,
              "changes[1].annotations key: \"a/b/c\"");
  EXPECT_CODE(mutate([](auto* c) { (*c->mutable_node_selector())["pool"] = "g p u"; }),
              INVALID_ARGUMENT, "changes[1].node_selector[\"pool\"]");
  EXPECT_CODE(mutate([](auto* c) {
                c->mutable_affinity()->CopyFrom(FromYaml<google::protobuf::Struct>(
                    "{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                    "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near}]}]}}}"));
              }),
              INVALID_ARGUMENT,
              "changes[1].affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
              "nodeSelectorTerms[0].matchExpressions[0].operator");
  EXPECT_CODE(mutate([](auto* c) { c->set_priority_class_name("High Priority"); }),
              INVALID_ARGUMENT, "changes[1].priority_class_name: \"High Priority\"");
  EXPECT_CODE(mutate([](auto* c) {
                c->mutable_pod_template()->CopyFrom(FromYaml<google::protobuf::Struct>(
                    "{spec: {tolerations: [{key: a, operator: Exists, value: v}]}}"));
              }),
              INVALID_ARGUMENT,
              "changes[1].pod_template.spec.tolerations[0].value: must be empty when operator "
              "is Exists");
  // A request that is valid alone but not with the container's limit.
  EXPECT_CODE(mutate([](auto* c) {
                c->set_instance_id("worker");
                (*c->mutable_container_resources())["worker"] =
                    FromYaml<google::protobuf::Struct>("{requests: {nvidia.com/gpu: '2'}}");
              }),
              INVALID_ARGUMENT,
              "changes[1].container_resources[\"worker\"].requests[\"nvidia.com/gpu\"]: 2 must be "
              "equal to the \"nvidia.com/gpu\" limit 4");
  // The same values, valid, go through.
  grpc::Status ok = mutate([](auto* c) {
    c->set_instance_id("worker");
    c->mutable_tolerations()->CopyFrom(FromYaml<google::protobuf::ListValue>(
        "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"));
    (*c->mutable_labels())["example.com/team"] = "ml";
    (*c->mutable_container_resources())["worker"] =
        FromYaml<google::protobuf::Struct>("{requests: {cpu: 500m, nvidia.com/gpu: '4'}}");
  });
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_THAT(cluster_->patches(), IsEmpty());
}

// An answer larger than a message may be is refused with the reason, and
// nothing is applied, rather than failing to be sent.
TEST_F(ServiceTest, MutateAnswerOverTheMessageLimitIsRefused) {
  Start({.max_message_bytes = 1 << 20});
  v1::MutatePodSpecsRequest request;
  *request.mutable_ref() = DemoRef();
  request.set_apply(true);
  // 300 KB of arguments in each of the two templates: the object and the
  // patch hold it twice each.
  Json pod_template = {
      {"spec",
       {{"containers", Json::array({{{"name", "worker"},
                                     {"args", Json::array({std::string(300 << 10, 'a')})}}})}}}};
  google::protobuf::Struct replacement;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(pod_template.dump(), &replacement).ok());
  *request.add_changes()->mutable_pod_template() = replacement;
  v1::MutatePodSpecsResponse response;
  grpc::Status status = Mutate(request, &response);
  EXPECT_CODE(status, RESOURCE_EXHAUSTED, "more than the 1048576 a message may have");
  EXPECT_THAT(status.error_message(), HasSubstr("nothing was applied"));
  EXPECT_THAT(cluster_->patches(), IsEmpty());
  // Half of it fits.
  (*request.mutable_changes(0)) = {};
  pod_template["spec"]["containers"][0]["args"][0] = std::string(100 << 10, 'a');
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(pod_template.dump(), &replacement).ok());
  *request.mutable_changes(0)->mutable_pod_template() = replacement;
  request.set_apply(false);
  status = Mutate(request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST(SnapshotServiceTest, MutateApplyIsReadOnly) {
  // The seed's running state alone (the seed directory also holds the
  // unstarted JobSet of the same name).
  wm::testing::ScratchDir dir("rpc_service_test_snapshot");
  std::filesystem::copy_file(SourcePath("integration_tests/seed/cluster-state.yaml"),
                             dir.path() + "/cluster-state.yaml");
  auto snapshot = SnapshotCluster::Load(dir.path(), CatalogRegistry());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->size(), 7u);
  Harness harness({snapshot->get()}, {});
  (*snapshot)->Feed(harness.index());
  harness.index().WaitForIdle();

  // Reads work as over the live cluster.
  {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    v1::ResolveWorkloadResponse response;
    grpc::ClientContext context;
    SetDeadline(context);
    grpc::Status status = harness.stub().ResolveWorkload(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.workload().ref().cluster(), "snapshot");
    EXPECT_EQ(response.workload().resources().quantities().at("nvidia.com/gpu"), 12);
  }
  {
    v1::ListWorkloadsRequest request;
    request.add_kinds("jobsets");  // the snapshot derives resources from kinds
    v1::ListWorkloadsResponse response;
    grpc::ClientContext context;
    SetDeadline(context);
    ASSERT_TRUE(harness.stub().ListWorkloads(&context, request, &response).ok());
    ASSERT_EQ(response.workloads_size(), 1);
    EXPECT_EQ(response.workloads(0).ref().name(), "demo");
  }

  v1::MutatePodSpecsRequest request;
  *request.mutable_ref() = DemoRef();
  request.add_changes()->set_scheduler_name("kai-scheduler");
  v1::MutatePodSpecsResponse response;
  {
    // A dry run works.
    grpc::ClientContext context;
    SetDeadline(context);
    grpc::Status status = harness.stub().MutatePodSpecs(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(ToJson(response.result().patch()).size(), 2u);
  }
  request.set_apply(true);
  grpc::ClientContext context;
  SetDeadline(context);
  EXPECT_CODE(harness.stub().MutatePodSpecs(&context, request, &response), FAILED_PRECONDITION,
              "read-only");
}

// ---- GetGangInstructions ----------------------------------------------------

constexpr char kDemoPodGroup[] = "pg-a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f-jobset";

// JobSet's gang: one podGroup "jobset" for every pod, no subgroups; its
// minimum is the JobSet's replicas at desired scale (1 leader + 2 workers).
void ExpectDemoPodGroup(const v1::GangInstructions& gang) {
  ASSERT_EQ(gang.pod_groups_size(), 1);
  const v1::PodGroup& group = gang.pod_groups(0);
  EXPECT_EQ(group.name(), kDemoPodGroup);
  EXPECT_EQ(group.form(), "podGroup");
  ASSERT_TRUE(group.has_min_member());
  EXPECT_EQ(group.min_member(), 3);
  EXPECT_FALSE(group.has_min_sub_group());
  EXPECT_EQ(group.sub_groups_size(), 0);
}

TEST_F(ServiceTest, GangForPodRef) {
  v1::GetGangInstructionsRequest request;
  request.mutable_pod()->set_name("demo-worker-1-0-x1w");  // kind defaults to Pod
  v1::GetGangInstructionsResponse response;
  grpc::Status status = Gang(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectDemoPodGroup(response.gang());
  EXPECT_EQ(response.top_owner().kind(), "JobSet");
  EXPECT_EQ(response.top_owner().name(), "demo");
  EXPECT_EQ(response.top_owner().uid(), kDemoUid);
  const v1::PodGangAssignment& a = response.assignment();
  EXPECT_EQ(a.pod(), "demo-worker-1-0-x1w");
  EXPECT_EQ(a.pod_group(), kDemoPodGroup);
  EXPECT_EQ(a.sub_group(), "");
  EXPECT_EQ(a.component(), "replicatedjob");
  EXPECT_EQ(a.error(), "");

  // What the resolved workload says of that pod.
  v1::GangInstructions resolved = ResolvedGang();
  EXPECT_TRUE(SameMessage(resolved, response.gang()));
  bool found = false;
  for (const auto& assignment : resolved.assignments()) {
    if (assignment.pod() != a.pod()) continue;
    found = true;
    EXPECT_TRUE(SameMessage(assignment, a));
  }
  EXPECT_TRUE(found);
}

TEST_F(ServiceTest, GangForWorkloadRef) {
  v1::GetGangInstructionsRequest request;
  *request.mutable_workload() = DemoRef();
  v1::GetGangInstructionsResponse response;
  grpc::Status status = Gang(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectDemoPodGroup(response.gang());
  EXPECT_FALSE(response.has_assignment());
  EXPECT_EQ(response.top_owner().name(), "demo");
  std::vector<std::string> pods;
  for (const auto& a : response.gang().assignments()) {
    pods.push_back(a.pod());
    EXPECT_EQ(a.pod_group(), kDemoPodGroup);
    EXPECT_EQ(a.sub_group(), "");
    EXPECT_EQ(a.component(), "replicatedjob");
  }
  EXPECT_THAT(pods, UnorderedElementsAre("demo-leader-0-0-x0l", "demo-worker-0-0-x0w",
                                         "demo-worker-1-0-x1w"));
  EXPECT_TRUE(SameMessage(ResolvedGang(), response.gang()));
}

TEST_F(ServiceTest, GangForInlinePod) {
  v1::GetGangInstructionsRequest request;
  request.mutable_inline_pod()->set_pod_json(SeedObject("Pod", "demo-leader-0-0-x0l").dump());
  request.mutable_inline_pod()->set_top_owner_json(SeedObject("JobSet", "demo").dump());
  v1::GetGangInstructionsResponse response;
  grpc::Status status = Gang(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectDemoPodGroup(response.gang());
  EXPECT_EQ(response.top_owner().kind(), "JobSet");
  EXPECT_EQ(response.top_owner().uid(), kDemoUid);
  EXPECT_EQ(response.assignment().pod(), "demo-leader-0-0-x0l");
  EXPECT_EQ(response.assignment().pod_group(), kDemoPodGroup);
  EXPECT_EQ(response.assignment().sub_group(), "");
  EXPECT_EQ(response.assignment().component(), "replicatedjob");

  // The same group and assignment as for the cached pod.
  v1::GetGangInstructionsRequest by_ref;
  by_ref.mutable_pod()->set_name("demo-leader-0-0-x0l");
  v1::GetGangInstructionsResponse cached;
  ASSERT_TRUE(Gang(by_ref, &cached).ok());
  EXPECT_TRUE(SameMessage(cached.gang().pod_groups(0), response.gang().pod_groups(0)));
  EXPECT_TRUE(SameMessage(cached.assignment(), response.assignment()));
}

// Queue, priority and topology as KAI's default grouper decides them
// (pkg/podgrouper/podgrouper/plugins/defaultgrouper), from the top owner's
// and the pod's labels and the top owner's annotations.
TEST_F(ServiceTest, GangHintsFollowKaisDefaultGrouper) {
  auto gang_of = [&](const Json& pod, const Json& top_owner) {
    v1::GetGangInstructionsRequest request;
    request.mutable_inline_pod()->set_pod_json(pod.dump());
    request.mutable_inline_pod()->set_top_owner_json(top_owner.dump());
    v1::GetGangInstructionsResponse response;
    grpc::Status status = Gang(request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.gang().pod_groups_size() == 1 ? response.gang().pod_groups(0) : v1::PodGroup();
  };
  Json pod = SeedObject("Pod", "demo-leader-0-0-x0l");
  Json jobset = SeedObject("JobSet", "demo");
  v1::PodGroup group = gang_of(pod, jobset);
  EXPECT_EQ(group.queue(), "default-queue");
  EXPECT_EQ(group.priority_class_name(), "");
  EXPECT_FALSE(group.has_topology());

  Json with_project = jobset;
  with_project["metadata"]["labels"]["project"] = "ml";
  EXPECT_EQ(gang_of(pod, with_project).queue(), "ml");
  Json queued_owner = with_project;
  queued_owner["metadata"]["labels"]["kai.scheduler/queue"] = "team-a";
  queued_owner["metadata"]["labels"]["priorityClassName"] = "train";
  EXPECT_EQ(gang_of(pod, queued_owner).queue(), "team-a");
  EXPECT_EQ(gang_of(pod, queued_owner).priority_class_name(), "train");
  // The podGroup form's group is the workload's, one answer for all its
  // pods: a label on one pod does not change it (the alpha form's groups
  // are per pod and read the pod's labels too).
  Json labelled_pod = pod;
  labelled_pod["metadata"]["labels"]["kai.scheduler/queue"] = "pod-queue";
  labelled_pod["metadata"]["labels"]["kai.scheduler/node-pool"] = "a100";
  EXPECT_EQ(gang_of(labelled_pod, with_project).queue(), "ml");

  // The definition gives the JobSet's group no topology: the top owner's
  // annotations do.
  Json placed = jobset;
  placed["metadata"]["annotations"]["kai.scheduler/topology"] = "cluster-topology";
  placed["metadata"]["annotations"]["kai.scheduler/topology-required-placement"] = "rack";
  placed["metadata"]["annotations"]["kai.scheduler/topology-preferred-placement"] = "host";
  group = gang_of(pod, placed);
  ASSERT_TRUE(group.has_topology());
  EXPECT_EQ(group.topology().topology(), "cluster-topology");
  EXPECT_EQ(group.topology().required_topology_level(), "rack");
  EXPECT_EQ(group.topology().preferred_topology_level(), "host");
}

TEST_F(ServiceTest, GangErrors) {
  v1::GetGangInstructionsResponse response;
  v1::GetGangInstructionsRequest request;
  EXPECT_CODE(Gang(request, &response), INVALID_ARGUMENT,
              "pod, workload or inline_pod is required");
  request.mutable_pod()->set_name("nope");
  EXPECT_CODE(Gang(request, &response), NOT_FOUND, "Pod default/nope not found");
  request.mutable_inline_pod()->set_pod_json("{}");
  request.mutable_inline_pod()->set_top_owner_json("");
  EXPECT_CODE(Gang(request, &response), INVALID_ARGUMENT, "inline_pod.top_owner_json is empty");
}

// ---- Hostile JSON -------------------------------------------------------------

// The seed JobSet with `depth` levels of arrays under spec.x: about 200 KB
// for 100,000 levels, which used to crash the daemon once parsed (dumping
// the tree recursed off the stack).
std::string DeeplyNested(const Json& object, size_t depth) {
  std::string text = object.dump();
  size_t spec = text.find("\"spec\":{") + 8;
  return text.substr(0, spec) + "\"x\":" + std::string(depth, '[') + std::string(depth, ']') + "," +
         text.substr(spec);
}

TEST_F(ServiceTest, DeeplyNestedInlineJsonIsRefusedAndTheServerLives) {
  const std::string deep_jobset = DeeplyNested(SeedObject("JobSet", "demo"), 100000);
  const std::string deep_pod = DeeplyNested(SeedObject("Pod", "demo-leader-0-0-x0l"), 100000);
  constexpr char kBound[] = "nesting deeper than 100 levels at byte ";
  {
    v1::ResolveWorkloadRequest request;
    request.mutable_inline_()->set_object_json(deep_jobset);
    v1::ResolveWorkloadResponse response;
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
                absl::StrCat("inline.object_json: ", kBound));
    request.mutable_inline_()->set_object_json(SeedObject("JobSet", "demo").dump());
    request.mutable_inline_()->add_pod_json(deep_pod);
    EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
                absl::StrCat("inline.pod_json[0]: ", kBound));
  }
  {
    v1::MutatePodSpecsRequest request;
    request.mutable_inline_()->set_object_json(deep_jobset);
    request.add_changes()->set_scheduler_name("kai-scheduler");
    v1::MutatePodSpecsResponse response;
    EXPECT_CODE(Mutate(request, &response), INVALID_ARGUMENT,
                absl::StrCat("inline.object_json: ", kBound));
  }
  {
    v1::GetGangInstructionsRequest request;
    request.mutable_inline_pod()->set_pod_json(SeedObject("Pod", "demo-leader-0-0-x0l").dump());
    request.mutable_inline_pod()->set_top_owner_json(deep_jobset);
    v1::GetGangInstructionsResponse response;
    EXPECT_CODE(Gang(request, &response), INVALID_ARGUMENT,
                absl::StrCat("inline_pod.top_owner_json: ", kBound));
    request.mutable_inline_pod()->set_pod_json(deep_pod);
    request.mutable_inline_pod()->set_top_owner_json(SeedObject("JobSet", "demo").dump());
    EXPECT_CODE(Gang(request, &response), INVALID_ARGUMENT,
                absl::StrCat("inline_pod.pod_json: ", kBound));
  }
  // Still serving.
  EXPECT_EQ(ResolvedGang().pod_groups_size(), 1);
}

TEST_F(ServiceTest, InlineJsonAtTheDepthBoundResolves) {
  // 100 levels in all: the object, spec, and 98 arrays under x.
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(DeeplyNested(SeedObject("JobSet", "demo"), 98));
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  request.mutable_inline_()->set_object_json(DeeplyNested(SeedObject("JobSet", "demo"), 99));
  EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
              "inline.object_json: nesting deeper than 100 levels at byte ");
  // MutatePodSpecs returns the object as a google.protobuf.Struct, which
  // holds less: a clear error naming the field rather than INTERNAL.
  v1::MutatePodSpecsRequest mutate;
  mutate.mutable_inline_()->set_object_json(DeeplyNested(SeedObject("JobSet", "demo"), 98));
  mutate.add_changes()->set_scheduler_name("kai-scheduler");
  v1::MutatePodSpecsResponse mutated;
  EXPECT_CODE(Mutate(mutate, &mutated), INVALID_ARGUMENT,
              "result.object: nests too deeply to be returned as a google.protobuf.Struct");
}

TEST_F(ServiceTest, InlineNumberOutOfRangeNamesTheField) {
  std::string text = SeedObject("JobSet", "demo").dump();
  size_t spec = text.find("\"spec\":{") + 8;
  text = text.substr(0, spec) + "\"x\":1e400," + text.substr(spec);
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(text);
  v1::ResolveWorkloadResponse response;
  EXPECT_CODE(
      Resolve(request, &response), INVALID_ARGUMENT,
      absl::StrCat("inline.object_json: number out of range at byte ", spec + 4, ": 1e400"));
  request.mutable_inline_()->set_object_json("{not json");
  EXPECT_CODE(Resolve(request, &response), INVALID_ARGUMENT,
              "inline.object_json: invalid JSON at byte 2: syntax error");
}

// ---- WatchWorkloads -----------------------------------------------------------

std::string Describe(const v1::WorkloadEvent& e) {
  return absl::StrCat(v1::WorkloadEvent::Type_Name(e.type()), " ", e.workload().ref().kind(), " ",
                      e.workload().ref().name(), " @", e.revision());
}

TEST_F(ServiceTest, Watch) {
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = stub().WatchWorkloads(&context, {});
  v1::WorkloadEvent event;

  // The snapshot: the top-level workloads only, then SYNCED.
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED) << Describe(event);
  EXPECT_EQ(event.workload().ref().kind(), "JobSet");
  EXPECT_EQ(event.workload().ref().name(), "demo");
  EXPECT_EQ(event.workload().resources().quantities().at("nvidia.com/gpu"), 12);
  EXPECT_EQ(CountPods(event.workload().root()), 0);  // include_pods false
  uint64_t demo_revision = event.revision();
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::SYNCED) << Describe(event);
  uint64_t synced = event.revision();
  EXPECT_EQ(synced, harness_->index().revision());
  EXPECT_GE(synced, demo_revision);

  // Live changes, each resolved before the next.
  Json extra = NewJobSet("extra", "2026-12-01T00:00:00Z");
  Apply(kube::EventType::kAdded, extra);
  Sync();
  extra["spec"]["replicatedJobs"][0]["replicas"] = 4;
  extra["metadata"]["resourceVersion"] = "2";
  Apply(kube::EventType::kModified, extra);
  Sync();
  Apply(kube::EventType::kDeleted, extra);
  Sync();

  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED) << Describe(event);
  EXPECT_EQ(event.workload().ref().name(), "extra");
  EXPECT_EQ(event.workload().resources().quantities().at("nvidia.com/gpu"), 2);
  uint64_t added = event.revision();
  EXPECT_GT(added, synced);
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::MODIFIED) << Describe(event);
  EXPECT_EQ(event.workload().ref().name(), "extra");
  EXPECT_EQ(event.workload().resources().quantities().at("nvidia.com/gpu"), 8);
  uint64_t modified = event.revision();
  EXPECT_GT(modified, added);
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::DELETED) << Describe(event);
  EXPECT_EQ(event.workload().ref().name(), "extra");
  // The last resolved state.
  EXPECT_EQ(event.workload().resources().quantities().at("nvidia.com/gpu"), 8);
  uint64_t deleted = event.revision();
  EXPECT_GT(deleted, modified);
  EXPECT_EQ(deleted, harness_->index().revision());

  context.TryCancel();
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);

  // Resuming after the ADDED event: the workload's latest change since (its
  // deletion; the modification before it is skipped), then SYNCED, and no
  // snapshot.
  grpc::ClientContext resumed_context;
  SetDeadline(resumed_context);
  v1::WatchWorkloadsRequest resume;
  resume.set_resume_revision(added);
  auto resumed = stub().WatchWorkloads(&resumed_context, resume);
  std::vector<std::string> events;
  std::vector<uint64_t> revisions;
  while (resumed->Read(&event)) {
    events.push_back(absl::StrCat(v1::WorkloadEvent::Type_Name(event.type()), " ",
                                  event.workload().ref().name()));
    revisions.push_back(event.revision());
    if (event.type() == v1::WorkloadEvent::SYNCED) break;
  }
  EXPECT_THAT(events, ElementsAre("DELETED extra", "SYNCED "));
  EXPECT_THAT(revisions, ElementsAre(deleted, deleted));
  resumed_context.TryCancel();
  resumed->Finish();
}

TEST_F(ServiceTest, WatchFilters) {
  Apply(kube::EventType::kAdded, NewJobSet("other", "2026-12-01T00:00:00Z", "team-a"));
  Sync();
  grpc::ClientContext context;
  SetDeadline(context);
  v1::WatchWorkloadsRequest request;
  request.set_namespace_("team-a");
  request.set_include_pods(true);
  auto reader = stub().WatchWorkloads(&context, request);
  v1::WorkloadEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED) << Describe(event);
  EXPECT_EQ(event.workload().ref().name(), "other");
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::SYNCED);

  // A change outside the namespace is not sent; one inside is.
  Apply(kube::EventType::kAdded, NewJobSet("skipped", "2026-12-02T00:00:00Z"));
  Sync();
  Apply(kube::EventType::kAdded, NewJobSet("seen", "2026-12-03T00:00:00Z", "team-a"));
  Sync();
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED);
  EXPECT_EQ(event.workload().ref().name(), "seen");
  context.TryCancel();
  reader->Finish();

  // A bad selector ends the watch at once.
  grpc::ClientContext bad_context;
  SetDeadline(bad_context);
  request.set_label_selector("a in (b");
  auto bad = stub().WatchWorkloads(&bad_context, request);
  EXPECT_FALSE(bad->Read(&event));
  EXPECT_CODE(bad->Finish(), INVALID_ARGUMENT, "label_selector");
}

// Before the daemon is ready a list or a snapshot would be partial: both
// are refused; calls on one object are not.
TEST_F(ServiceTest, ListAndWatchWaitForReadiness) {
  harness_->service().SetReady(false);
  v1::ListWorkloadsResponse listed;
  EXPECT_CODE(List({}, &listed), UNAVAILABLE, "still syncing");
  {
    grpc::ClientContext context;
    SetDeadline(context);
    auto reader = stub().WatchWorkloads(&context, {});
    v1::WorkloadEvent event;
    EXPECT_FALSE(reader->Read(&event)) << Describe(event);
    EXPECT_CODE(reader->Finish(), UNAVAILABLE, "still syncing");
  }
  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = DemoRef();
  v1::ResolveWorkloadResponse resolved;
  EXPECT_TRUE(Resolve(request, &resolved).ok());

  harness_->service().SetReady(true);
  EXPECT_THAT(ListNames({}), ElementsAre("demo"));
  grpc::ClientContext context;
  SetDeadline(context);
  auto reader = stub().WatchWorkloads(&context, {});
  v1::WorkloadEvent event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED) << Describe(event);
  context.TryCancel();
  while (reader->Read(&event)) {
  }
  reader->Finish();
}

TEST_F(ServiceTest, WatchResumeOutOfRange) {
  for (uint64_t revision : {uint64_t{1}, harness_->index().revision() + 1000}) {
    grpc::ClientContext context;
    SetDeadline(context);
    v1::WatchWorkloadsRequest request;
    request.set_resume_revision(revision);
    auto reader = stub().WatchWorkloads(&context, request);
    v1::WorkloadEvent event;
    EXPECT_FALSE(reader->Read(&event)) << Describe(event);
    EXPECT_CODE(reader->Finish(), OUT_OF_RANGE, absl::StrCat("revision ", revision));
  }
}

TEST_F(ServiceTest, WatchResumeFromTheFutureSaysSo) {
  const uint64_t current = harness_->index().revision();
  grpc::ClientContext context;
  SetDeadline(context);
  v1::WatchWorkloadsRequest request;
  request.set_resume_revision(current + 1000);
  auto reader = stub().WatchWorkloads(&context, request);
  v1::WorkloadEvent event;
  EXPECT_FALSE(reader->Read(&event)) << Describe(event);
  grpc::Status status = reader->Finish();
  EXPECT_CODE(status, OUT_OF_RANGE,
              absl::StrCat("revision ", current + 1000,
                           " is ahead of the daemon's current revision ", current));
  EXPECT_THAT(status.error_message(), Not(HasSubstr("no longer in")));
}

// A client that does not read while events pile up is cut off with
// RESOURCE_EXHAUSTED. gRPC completes writes as long as its flow-control
// windows have room, so the events are made big (a 1 MiB condition message
// each) for the writes to stall.
TEST_F(ServiceTest, WatchSlowConsumer) {
  Start({.watch_queue_size = 1});
  grpc::ClientContext context;
  SetDeadline(context, 120);
  auto reader = stub().WatchWorkloads(&context, {});
  v1::WorkloadEvent event;
  ASSERT_TRUE(reader->Read(&event));
  ASSERT_TRUE(reader->Read(&event));
  ASSERT_EQ(event.type(), v1::WorkloadEvent::SYNCED);
  uint64_t synced = event.revision();

  const std::string big(1 << 20, 'x');
  constexpr int kBurst = 24;
  for (int i = 0; i < kBurst; ++i) {
    Json jobset = NewJobSet(absl::StrCat("big-", i), "2026-12-01T00:00:00Z");
    jobset["status"]["conditions"] = Json::array(
        {{{"type", "Progress"}, {"status", "True"}, {"message", absl::StrCat(i, big)}}});
    Apply(kube::EventType::kAdded, jobset);
  }
  Sync();

  // The client reads now: some of the burst, then the end of the stream.
  int live = 0;
  uint64_t last = synced;
  while (reader->Read(&event)) {
    EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED) << Describe(event);
    EXPECT_GT(event.revision(), last);
    last = event.revision();
    ++live;
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_LT(live, kBurst);
  EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("resume_revision ", last)));
  auto trailer = context.GetServerTrailingMetadata().find("wm-resume-revision");
  ASSERT_NE(trailer, context.GetServerTrailingMetadata().end());
  EXPECT_EQ(std::string(trailer->second.data(), trailer->second.size()), std::to_string(last));

  // Resuming from there delivers the rest of the burst.
  grpc::ClientContext resumed_context;
  SetDeadline(resumed_context, 120);
  v1::WatchWorkloadsRequest resume;
  resume.set_resume_revision(last);
  auto resumed = stub().WatchWorkloads(&resumed_context, resume);
  int rest = 0;
  while (resumed->Read(&event) && event.type() != v1::WorkloadEvent::SYNCED) {
    EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED) << Describe(event);
    ++rest;
  }
  EXPECT_EQ(event.type(), v1::WorkloadEvent::SYNCED);
  EXPECT_EQ(live + rest, kBurst);
  resumed_context.TryCancel();
  resumed->Finish();
}

// ---- Definitions --------------------------------------------------------------

TEST_F(ServiceTest, ListDefinitions) {
  grpc::ClientContext context;
  SetDeadline(context);
  v1::ListDefinitionsResponse response;
  grpc::Status status = stub().ListDefinitions(&context, {}, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(static_cast<size_t>(response.definitions_size()), BuiltinCatalog().size());
  EXPECT_EQ(response.rejected_size(), 0);
  const v1::DefinitionInfo* jobset = nullptr;
  for (const auto& info : response.definitions()) {
    EXPECT_EQ(info.origin(), "catalog") << info.name();
    if (info.name() == kJobSetDefinition) jobset = &info;
  }
  ASSERT_NE(jobset, nullptr);
  EXPECT_EQ(jobset->root_kind().group(), "jobset.x-k8s.io");
  EXPECT_EQ(jobset->root_kind().version(), "v1alpha2");
  EXPECT_EQ(jobset->root_kind().kind(), "JobSet");
  EXPECT_THAT(jobset->components(), ElementsAre("jobset", "replicatedjob"));
  EXPECT_TRUE(jobset->gang_scheduling());
  EXPECT_TRUE(jobset->synced());
}

TEST_F(ServiceTest, ValidateDefinition) {
  std::string yaml =
      wm::testing::FileContent(SourcePath("catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml"));
  ASSERT_FALSE(yaml.empty());
  {
    grpc::ClientContext context;
    SetDeadline(context);
    v1::ValidateDefinitionRequest request;
    request.set_definition_yaml(yaml);
    v1::ValidateDefinitionResponse response;
    grpc::Status status = stub().ValidateDefinition(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(response.valid());
    for (const auto& f : response.findings()) EXPECT_NE(f.severity(), "error") << f.message();
    EXPECT_THAT(response.names(), ElementsAre(kJobSetDefinition));
  }
  {
    // The root component without its kind.
    Json broken = ParseYamlDocuments(yaml).value().at(0);
    broken["spec"]["structureDefinition"]["rootComponent"].erase("kind");
    grpc::ClientContext context;
    SetDeadline(context);
    v1::ValidateDefinitionRequest request;
    request.set_definition_yaml(broken.dump());
    v1::ValidateDefinitionResponse response;
    grpc::Status status = stub().ValidateDefinition(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.valid());
    bool named = false;
    for (const auto& f : response.findings()) {
      if (f.severity() == "error" &&
          absl::StrContains(f.path(), "spec.structureDefinition.rootComponent.kind")) {
        named = true;
      }
    }
    EXPECT_TRUE(named) << response.DebugString();
  }
  {
    grpc::ClientContext context;
    SetDeadline(context);
    v1::ValidateDefinitionResponse response;
    EXPECT_CODE(stub().ValidateDefinition(&context, {}, &response), INVALID_ARGUMENT,
                "definition_yaml is empty");
  }
}

// ---- Deadlines ------------------------------------------------------------------

TEST_F(ServiceTest, DeadlineAlreadyPassed) {
  auto past = std::chrono::system_clock::now() - std::chrono::seconds(1);
  {
    grpc::ClientContext context;
    context.set_deadline(past);
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    v1::ResolveWorkloadResponse response;
    EXPECT_EQ(stub().ResolveWorkload(&context, request, &response).error_code(),
              grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  {
    grpc::ClientContext context;
    context.set_deadline(past);
    v1::ValidateDefinitionRequest request;
    request.set_definition_yaml("kind: Karta");
    v1::ValidateDefinitionResponse response;
    EXPECT_EQ(stub().ValidateDefinition(&context, request, &response).error_code(),
              grpc::StatusCode::DEADLINE_EXCEEDED);
  }
}

}  // namespace
}  // namespace wm::rpc
