// workloadmapd end to end: the real binary against the testbed's real
// kube-apiserver, called through the generated gRPC client. The seed demo
// (integration_tests/seed/create-demo.sh) plays the JobSet and Job
// controllers and the kubelet, which the testbed does not run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration_tests/daemon/daemon_process.h"
#include "integration_tests/kube/testbed_fixture.h"
#include "server/common/testing/file_content.h"
#include "server/common/yaml_json.h"
#include "server/definitions/testing/karta_fixture.h"
#include "server/kube/testing/eventually.h"

namespace wm::testing {
namespace {

namespace v1 = workloadmap::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::wm::kube::testing::Eventually;

constexpr absl::Duration kWait = absl::Seconds(30);

// Runs a shell command; returns its stdout, and its pclose status in
// `*status` (-1 when it could not be started).
std::string RunCommand(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen " << command;
    if (status != nullptr) *status = -1;
    return out;
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  int exit_status = pclose(pipe);
  if (status != nullptr) *status = exit_status;
  return out;
}

// Runs a seed script against the testbed; returns its stdout.
std::string Seed(const std::string& script_and_args) {
  Testbed& tb = Testbed::Get();
  std::string command =
      absl::StrCat("KUBECONFIG=", tb.kubeconfig(), " WM_TESTBED_BIN=", tb.env("WM_TESTBED_BIN"),
                   " ", WM_SOURCE_DIR, "/integration_tests/seed/", script_and_args, " 2>&1");
  int status = 0;
  std::string out = RunCommand(command, &status);
  EXPECT_EQ(status, 0) << command << "\n" << out;
  return out;
}

// The daemon most tests share, watching the testbed with its admin
// kubeconfig; stopped (and its exit checked) after the last test.
DaemonProcess* shared_daemon = nullptr;

DaemonProcess& Daemon() {
  if (shared_daemon == nullptr) {
    shared_daemon = new DaemonProcess({"--kubeconfig", Testbed::Get().kubeconfig()});
    absl::Status started = shared_daemon->Start();
    EXPECT_TRUE(started.ok()) << started;
  }
  return *shared_daemon;
}

class StopSharedDaemon : public ::testing::Environment {
 public:
  void TearDown() override {
    if (shared_daemon == nullptr) return;
    EXPECT_EQ(shared_daemon->Stop(), 0) << shared_daemon->Log();
    delete shared_daemon;
  }
};
const ::testing::Environment* const kStopSharedDaemon =
    ::testing::AddGlobalTestEnvironment(new StopSharedDaemon);

std::unique_ptr<grpc::ClientContext> Context(absl::Duration timeout = absl::Seconds(10)) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  return context;
}

v1::ObjectRef JobSetRef(const std::string& ns, const std::string& name = "demo") {
  v1::ObjectRef ref;
  ref.set_namespace_(ns);
  ref.set_kind("JobSet");
  ref.set_name(name);
  return ref;
}

grpc::Status Resolve(DaemonProcess& daemon, const v1::ObjectRef& ref,
                     v1::ResolveWorkloadResponse* response, bool include_pods = false) {
  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = ref;
  request.set_include_pods(include_pods);
  return daemon.stub().ResolveWorkload(Context().get(), request, response);
}

// Ready pods of the JobSet's instance ("leader", "worker").
int Ready(const v1::ResolvedWorkload& w, const std::string& instance) {
  for (const auto& root_instance : w.root().instances()) {
    for (const auto& child : root_instance.children()) {
      for (const auto& i : child.instances()) {
        if (i.id() == instance) return i.replicas().ready();
      }
    }
  }
  return -1;
}

// The names of the pods in a namespace, sorted.
std::vector<std::string> Pods(const std::string& ns) {
  auto list = Testbed::Get().Call("GET", absl::StrCat("/api/v1/namespaces/", ns, "/pods"));
  EXPECT_TRUE(list.ok()) << list.status();
  std::vector<std::string> names;
  for (const Json& pod : (*list)["items"]) names.push_back(pod["metadata"]["name"]);
  std::sort(names.begin(), names.end());
  return names;
}

// The body and, on the last line, the status of GET `path`, sending
// `authorization` unless empty.
std::string HttpGet(int port, const std::string& path, const std::string& authorization = "") {
  std::string header = authorization.empty() ? "" : " -H 'authorization: " + authorization + "'";
  return RunCommand(
      absl::StrCat("curl -s", header, " -w '\\n%{http_code}' http://127.0.0.1:", port, path));
}

std::string NewDemo(const std::string& prefix) {
  std::string ns = Testbed::Get().NewNamespace(prefix);
  Seed("create-demo.sh --namespace " + ns);
  return ns;
}

// A start that fails (here: the metrics port is taken) while the index is
// still resolving a large snapshot exits with status 1 and its error, not a
// crash (the index's thread used to outlive the clusters it reads).
TEST(DaemonStartTest, AFailedStartExitsWithItsErrorWhileTheIndexResolves) {
  std::string seed = testing::FileContent(std::string(WM_SOURCE_DIR) +
                                          "/integration_tests/seed/cluster-state.yaml");
  ASSERT_FALSE(seed.empty());
  const std::vector<std::string> uids = {
      "a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f", "b1000000-0000-4000-8000-000000000001",
      "b2000000-0000-4000-8000-000000000002", "b3000000-0000-4000-8000-000000000003",
      "c2000000-0000-4000-8000-000000000002", "c3000000-0000-4000-8000-000000000003",
      "c4000000-0000-4000-8000-000000000004"};
  std::string dir = ::testing::TempDir() + "/failed-start-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);  // An earlier run's, under a recycled process id.
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  {
    std::ofstream out(dir + "/objects.yaml");
    for (int i = 0; i < 10000; ++i) {
      std::vector<std::pair<std::string, std::string>> renames = {
          {"namespace: default", absl::StrCat("namespace: copy-", i)}};
      for (const std::string& uid : uids) {
        renames.emplace_back(uid, absl::StrCat(uid.substr(0, 24), absl::Dec(i, absl::kZeroPad12)));
      }
      out << absl::StrReplaceAll(seed, renames) << "\n---\n";
    }
  }
  int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(taken, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  std::string command =
      absl::StrCat(WM_BINARY_DIR, "/bin/workloadmapd --snapshot ", dir,
                   " --listen 127.0.0.1:0 --metrics-address 127.0.0.1:", ntohs(address.sin_port),
                   " 2>", dir, "/log");
  int status = std::system(command.c_str());
  ::close(taken);
  std::string log = testing::FileContent(dir + "/log");
  ASSERT_TRUE(WIFEXITED(status)) << "not an exit (a signal?): status " << status << "\n" << log;
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(log, HasSubstr("metrics did not start"));
  std::filesystem::remove_all(dir);
}

// Start waits for this daemon's "ready", never a stale log's at the same
// path (process ids wrap, and /tmp outlives test runs): the first call after
// it is answered, not refused.
TEST(DaemonStartTest, StartWaitsForItsOwnReadinessNotAStaleLog) {
  std::string dir = ::testing::TempDir() + "/stale-log-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);  // An earlier run's, under a recycled process id.
  ASSERT_TRUE(std::filesystem::create_directories(dir + "/snapshot"));
  std::filesystem::copy_file(
      std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml",
      dir + "/snapshot/cluster-state.yaml");
  const std::string log_path = dir + "/daemon.log";
  std::ofstream(log_path) << "2026-01-01T00:00:00Z INFO ready workloads=0 (an earlier daemon's)\n";
  DaemonProcess daemon({"--snapshot", dir + "/snapshot"}, log_path);
  ASSERT_TRUE(daemon.Start().ok());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListDefinitionsRequest request;
  v1::ListDefinitionsResponse response;
  grpc::Status status = daemon.stub().ListDefinitions(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << daemon.Log();
  EXPECT_GT(response.definitions_size(), 0);
  daemon.Stop();
  std::filesystem::remove_all(dir);
}

TEST(DaemonTest, ResolvesTheSeedDemo) {
  DaemonProcess& daemon = Daemon();
  std::string ns = NewDemo("demo");
  v1::ResolveWorkloadResponse response;
  ASSERT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response, true).ok() &&
               Ready(response.workload(), "worker") == 2;
      },
      kWait))
      << daemon.Log();
  const v1::ResolvedWorkload& w = response.workload();
  EXPECT_EQ(w.ref().uid().empty(), false);
  EXPECT_EQ(w.definition().origin(), "catalog");
  EXPECT_THAT(w.status().matched_statuses(), ::testing::ElementsAre("Running"));
  EXPECT_EQ(w.resources().quantities().at("nvidia.com/gpu"), 12);
  const auto& jobs = w.root().instances(0).children(0);
  ASSERT_EQ(jobs.instances_size(), 2);
  EXPECT_EQ(jobs.instances(0).id(), "leader");
  EXPECT_EQ(jobs.instances(0).replicas().ready(), 1);
  EXPECT_EQ(jobs.instances(0).resources().quantities().at("nvidia.com/gpu"), 4);
  EXPECT_EQ(jobs.instances(1).id(), "worker");
  EXPECT_EQ(jobs.instances(1).replicas().desired(), 2);
  EXPECT_EQ(jobs.instances(1).replicas().ready(), 2);
  EXPECT_EQ(jobs.instances(1).pods_size(), 2);
  EXPECT_EQ(jobs.instances(1).resources().quantities().at("nvidia.com/gpu"), 8);

  // One top-level row: the Jobs and pods are under it.
  v1::ListWorkloadsRequest list;
  list.set_namespace_(ns);
  v1::ListWorkloadsResponse rows;
  ASSERT_TRUE(daemon.stub().ListWorkloads(Context().get(), list, &rows).ok());
  ASSERT_EQ(rows.workloads_size(), 1);
  EXPECT_EQ(rows.workloads(0).ref().kind(), "JobSet");
  EXPECT_EQ(rows.workloads(0).gpus(), 12);
  ASSERT_EQ(rows.workloads(0).components_size(), 2);
  EXPECT_EQ(rows.workloads(0).components(1).instance_id(), "worker");
  EXPECT_EQ(rows.workloads(0).components(1).replicas().ready(), 2);

  // Gang instructions for one worker pod.
  std::string pod;
  for (const std::string& name : Pods(ns)) {
    if (name.find("worker") != std::string::npos) pod = name;
  }
  v1::GetGangInstructionsRequest gang;
  gang.mutable_pod()->set_namespace_(ns);
  gang.mutable_pod()->set_name(pod);
  v1::GetGangInstructionsResponse instructions;
  grpc::Status status = daemon.stub().GetGangInstructions(Context().get(), gang, &instructions);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(instructions.top_owner().name(), "demo");
  EXPECT_EQ(instructions.assignment().pod(), pod);
  ASSERT_EQ(instructions.gang().pod_groups_size(), 1);
  EXPECT_EQ(instructions.assignment().pod_group(), instructions.gang().pod_groups(0).name());
  EXPECT_THAT(instructions.gang().pod_groups(0).name(), HasSubstr(w.ref().uid()));

  // A dry run changes nothing in the cluster; applying does.
  v1::MutatePodSpecsRequest mutate;
  *mutate.mutable_ref() = JobSetRef(ns);
  mutate.add_changes()->set_scheduler_name("kai-scheduler");
  v1::MutatePodSpecsResponse mutated;
  status = daemon.stub().MutatePodSpecs(Context().get(), mutate, &mutated);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(mutated.applied());
  EXPECT_EQ(mutated.result().patch().values_size(), 2);
  const std::string path =
      absl::StrCat("/apis/jobset.x-k8s.io/v1alpha2/namespaces/", ns, "/jobsets/demo");
  auto before = Testbed::Get().Call("GET", path);
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(
      (*before)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"].contains(
          "schedulerName"));
  mutate.set_apply(true);
  status = daemon.stub().MutatePodSpecs(Context().get(), mutate, &mutated);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(mutated.applied());
  auto after = Testbed::Get().Call("GET", path);
  ASSERT_TRUE(after.ok());
  for (const Json& job : (*after)["spec"]["replicatedJobs"]) {
    EXPECT_EQ(job["template"]["spec"]["template"]["spec"]["schedulerName"], "kai-scheduler");
  }
  EXPECT_EQ((*after)["metadata"]["resourceVersion"], mutated.resource_version());
  // The daemon sees its own write.
  EXPECT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).ok() &&
               response.workload().resource_version() == mutated.resource_version();
      },
      kWait));
  Seed("delete-demo.sh --namespace " + ns);
}

TEST(DaemonTest, AnswersEachErrorWithItsCode) {
  DaemonProcess& daemon = Daemon();
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(daemon, JobSetRef("default", "no-such-jobset"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("no-such-jobset"));

  v1::ObjectRef config_map = JobSetRef("default", "x");
  config_map.set_kind("ConfigMap");
  status = Resolve(daemon, config_map, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("no definition covers"));

  v1::ObjectRef nameless = JobSetRef("default", "");
  status = Resolve(daemon, nameless, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("ref: name is required"));

  v1::ObjectRef elsewhere = JobSetRef("default", "demo");
  elsewhere.set_cluster("no-such-cluster");
  status = Resolve(daemon, elsewhere, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);

  v1::ResolveWorkloadRequest inline_request;
  inline_request.mutable_inline_()->set_object_json("[1, 2]");
  status = daemon.stub().ResolveWorkload(Context().get(), inline_request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("inline.object_json"));

  v1::WatchWorkloadsRequest watch;
  watch.set_resume_revision(1);
  auto context = Context();
  auto stream = daemon.stub().WatchWorkloads(context.get(), watch);
  v1::WorkloadEvent event;
  EXPECT_FALSE(stream->Read(&event));
  status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OUT_OF_RANGE);

  v1::ListWorkloadsRequest list;
  list.add_statuses("Sleeping");
  v1::ListWorkloadsResponse rows;
  status = daemon.stub().ListWorkloads(Context().get(), list, &rows);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("Sleeping"));

  // A call whose deadline passes before it is served.
  grpc::ClientContext expired;
  expired.set_deadline(std::chrono::system_clock::now() - std::chrono::seconds(1));
  status = daemon.stub().ResolveWorkload(&expired, inline_request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST(DaemonTest, ExportsMetricsAndReadiness) {
  DaemonProcess& daemon = Daemon();
  v1::ResolveWorkloadResponse response;
  (void)Resolve(daemon, JobSetRef("default", "no-such-jobset"), &response);
  EXPECT_THAT(HttpGet(daemon.metrics_port(), "/readyz"), ::testing::EndsWith("200"));
  std::string metrics = HttpGet(daemon.metrics_port(), "/metrics");
  EXPECT_THAT(metrics, HasSubstr("workloadmap_ready 1\n"));
  EXPECT_THAT(
      metrics,
      HasSubstr("workloadmap_rpc_requests_total{method=\"ResolveWorkload\",code=\"NOT_FOUND\"}"));
  EXPECT_THAT(metrics,
              HasSubstr("workloadmap_rpc_duration_seconds_bucket{method=\"ResolveWorkload\""));
  EXPECT_THAT(metrics,
              HasSubstr("workloadmap_cache_synced{cluster=\"testbed\",kind=\"v1/Pod\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("workloadmap_cache_objects{cluster=\"testbed\",kind=\"jobset.x-"
                                 "k8s.io/v1alpha2/JobSet\"}"));
  EXPECT_THAT(metrics, HasSubstr("workloadmap_definition_errors{cluster=\"testbed\"}"));
}

// Reads events until `done` accepts one; fails on the stream's end.
bool ReadUntil(grpc::ClientReader<v1::WorkloadEvent>& stream, v1::WorkloadEvent* event,
               const std::function<bool(const v1::WorkloadEvent&)>& done) {
  while (stream.Read(event)) {
    if (done(*event)) return true;
  }
  return false;
}

TEST(DaemonTest, WatchSeesReadinessAndDeletionAndResumes) {
  DaemonProcess& daemon = Daemon();
  std::string ns = NewDemo("watch");
  v1::ResolveWorkloadResponse response;
  ASSERT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).ok() &&
               Ready(response.workload(), "worker") == 2;
      },
      kWait));
  v1::WatchWorkloadsRequest request;
  request.set_namespace_(ns);
  auto context = Context(absl::Seconds(60));
  auto stream = daemon.stub().WatchWorkloads(context.get(), request);
  v1::WorkloadEvent event;
  ASSERT_TRUE(stream->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::ADDED);
  EXPECT_EQ(event.workload().ref().name(), "demo");
  ASSERT_TRUE(stream->Read(&event));
  EXPECT_EQ(event.type(), v1::WorkloadEvent::SYNCED);

  std::string worker;
  for (const std::string& name : Pods(ns)) {
    if (name.find("worker-1") != std::string::npos) worker = name;
  }
  Seed(absl::StrCat("set-pod-ready.sh --namespace ", ns, " ", worker, " false"));
  ASSERT_TRUE(ReadUntil(*stream, &event, [](const v1::WorkloadEvent& e) {
    return e.type() == v1::WorkloadEvent::MODIFIED && Ready(e.workload(), "worker") == 1;
  }));
  const uint64_t seen = event.revision();
  context->TryCancel();
  stream->Finish();

  // While nobody watches: ready again, then gone.
  Seed(absl::StrCat("set-pod-ready.sh --namespace ", ns, " ", worker, " true"));
  ASSERT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).ok() &&
               Ready(response.workload(), "worker") == 2;
      },
      kWait));
  Seed("delete-demo.sh --namespace " + ns);
  ASSERT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).error_code() ==
               grpc::StatusCode::NOT_FOUND;
      },
      kWait));

  // Resuming gives each workload's latest change after `seen`: the demo's
  // deletion (its states in between are skipped), then SYNCED.
  request.set_resume_revision(seen);
  auto resumed_context = Context(absl::Seconds(60));
  auto resumed = daemon.stub().WatchWorkloads(resumed_context.get(), request);
  std::vector<std::string> events;
  std::vector<uint64_t> revisions;
  ASSERT_TRUE(ReadUntil(*resumed, &event, [&](const v1::WorkloadEvent& e) {
    events.push_back(
        absl::StrCat(v1::WorkloadEvent::Type_Name(e.type()), " ", e.workload().ref().name()));
    revisions.push_back(e.revision());
    return e.type() == v1::WorkloadEvent::SYNCED;
  }));
  EXPECT_THAT(events, ElementsAre("DELETED demo", "SYNCED "));
  ASSERT_EQ(revisions.size(), 2u);
  EXPECT_GT(revisions[0], seen);
  EXPECT_GE(revisions[1], revisions[0]);
  resumed_context->TryCancel();
  resumed->Finish();
}

TEST(DaemonTest, ClusterKartaOverridesTheCatalogAndAnInvalidOneIsReported) {
  DaemonProcess& daemon = Daemon();
  Testbed& tb = Testbed::Get();
  std::string ns = NewDemo("karta");
  const std::string text = testing::FileContent(std::string(WM_SOURCE_DIR) +
                                                "/catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml");
  auto docs = ParseYamlDocuments(text);
  ASSERT_TRUE(docs.ok());
  Json karta = (*docs)[0];
  karta["metadata"] = {{"name", "e2e-jobset-override"}};
  const std::string kartas = "/apis/run.ai/v1alpha1/kartas";
  ASSERT_TRUE(tb.Call("POST", kartas, karta).ok());
  Json broken = karta;
  broken["metadata"]["name"] = "e2e-broken";
  broken["spec"]["structureDefinition"]["rootComponent"].erase("kind");
  ASSERT_TRUE(tb.Call("POST", kartas, broken).ok());

  v1::ResolveWorkloadResponse response;
  // Eventually's bound catches a hang; how fast the override arrives is
  // not asserted (a timed check failed under ASan on a loaded machine).
  EXPECT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).ok() &&
               response.workload().definition().origin() == "cluster";
      },
      kWait))
      << response.DebugString();
  EXPECT_EQ(response.workload().definition().name(), "e2e-jobset-override");
  EXPECT_EQ(Ready(response.workload(), "worker"), 2);

  v1::ListDefinitionsResponse definitions;
  ASSERT_TRUE(daemon.stub()
                  .ListDefinitions(Context().get(), v1::ListDefinitionsRequest(), &definitions)
                  .ok());
  bool reported = false;
  for (const auto& r : definitions.rejected()) {
    if (r.name() == "e2e-broken") {
      reported = true;
      ASSERT_FALSE(r.findings().empty());
      EXPECT_THAT(r.findings(0).path(), HasSubstr("rootComponent"));
    }
  }
  EXPECT_TRUE(reported);

  // The same checks before a definition is applied.
  v1::ValidateDefinitionRequest validate;
  validate.set_definition_yaml(broken.dump());
  v1::ValidateDefinitionResponse verdict;
  ASSERT_TRUE(daemon.stub().ValidateDefinition(Context().get(), validate, &verdict).ok());
  EXPECT_FALSE(verdict.valid());
  ASSERT_FALSE(verdict.findings().empty());
  EXPECT_THAT(verdict.findings(0).path(), HasSubstr("rootComponent"));
  validate.set_definition_yaml(text);
  ASSERT_TRUE(daemon.stub().ValidateDefinition(Context().get(), validate, &verdict).ok());
  EXPECT_TRUE(verdict.valid());

  ASSERT_TRUE(tb.Call("DELETE", kartas + "/e2e-jobset-override").ok());
  ASSERT_TRUE(tb.Call("DELETE", kartas + "/e2e-broken").ok());
  EXPECT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).ok() &&
               response.workload().definition().origin() == "catalog";
      },
      kWait));
  Seed("delete-demo.sh --namespace " + ns);
}

// --authentication=kubernetes: a caller is served with a ServiceAccount
// token the apiserver accepts for the daemon's audience, and refused
// without one or with one minted for another audience; a call on a workload
// needs RBAC's get on it. Health stays open.
TEST(DaemonTest, AuthenticatesAndAuthorizesCallersAsTheClusterDoes) {
  Testbed& tb = Testbed::Get();
  std::string ns = NewDemo("authn");
  ASSERT_TRUE(tb.CreateServiceAccount(ns, "scheduler").ok());
  ASSERT_TRUE(tb.CreateServiceAccount(ns, "intern").ok());
  ASSERT_TRUE(
      tb.BindRole(
            ns, "scheduler",
            {{{"apiGroups", {"jobset.x-k8s.io"}}, {"resources", {"jobsets"}}, {"verbs", {"get"}}}})
          .ok());
  absl::StatusOr<std::string> scheduler = tb.ServiceAccountToken(ns, "scheduler", "workloadmap");
  absl::StatusOr<std::string> intern = tb.ServiceAccountToken(ns, "intern", "workloadmap");
  absl::StatusOr<std::string> foreign = tb.ServiceAccountToken(ns, "scheduler", "vault");
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  ASSERT_TRUE(intern.ok()) << intern.status();
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  DaemonProcess daemon({"--kubeconfig", tb.kubeconfig(), "--authentication=kubernetes",
                        "--token-audiences=workloadmap"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();  // health answered without a token
  EXPECT_THAT(daemon.Log(), HasSubstr("callers are authenticated and authorized"));

  auto resolve = [&](const std::string& authorization) {
    auto context = Context();
    if (!authorization.empty()) context->AddMetadata("authorization", authorization);
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = JobSetRef(ns);
    v1::ResolveWorkloadResponse response;
    grpc::Status status = daemon.stub().ResolveWorkload(context.get(), request, &response);
    if (status.ok()) {
      EXPECT_EQ(response.workload().ref().name(), "demo");
    }
    return status;
  };
  // Eventually: the daemon's cache and RBAC's informers catch up.
  EXPECT_TRUE(Eventually([&] { return resolve("Bearer " + *scheduler).ok(); }, kWait))
      << resolve("Bearer " + *scheduler).error_message();
  grpc::Status denied = resolve("Bearer " + *intern);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  EXPECT_THAT(denied.error_message(), HasSubstr("system:serviceaccount:" + ns +
                                                ":intern\" may not get "
                                                "jobsets.jobset.x-k8s.io \"demo\" in namespace \"" +
                                                ns + "\""));
  grpc::Status none = resolve("");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED) << none.error_message();
  grpc::Status wrong_audience = resolve("Bearer " + *foreign);
  EXPECT_EQ(wrong_audience.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(wrong_audience.error_message(), HasSubstr("rejected"));
  // The denial is in the audit log: who, what, the decision.
  EXPECT_TRUE(Eventually(
      [&] {
        return absl::StrContains(daemon.Log(),
                                 "INFO audit method=ResolveWorkload user=system:"
                                 "serviceaccount:" +
                                     ns + ":intern");
      },
      absl::Seconds(5)))
      << daemon.Log();
  EXPECT_THAT(daemon.Log(), HasSubstr("decision=denied code=PERMISSION_DENIED"));

  // HTTP: the probes are open; /metrics needs a token and RBAC's get on the
  // non-resource URL /metrics, as a Prometheus scraper's ClusterRole grants.
  EXPECT_THAT(HttpGet(daemon.metrics_port(), "/healthz"), ::testing::EndsWith("200"));
  EXPECT_THAT(HttpGet(daemon.metrics_port(), "/readyz"), ::testing::EndsWith("200"));
  EXPECT_THAT(HttpGet(daemon.metrics_port(), "/metrics"),
              ::testing::EndsWith("no credentials: send \"Authorization: Bearer <token>\"\n\n401"));
  EXPECT_THAT(HttpGet(daemon.metrics_port(), "/metrics", "Bearer " + *intern),
              ::testing::EndsWith("403"));
  ASSERT_TRUE(
      tb.BindClusterRole(ns, "scheduler", {{{"nonResourceURLs", {"/metrics"}}, {"verbs", {"get"}}}})
          .ok());
  std::string metrics;
  EXPECT_TRUE(Eventually(
      [&] {
        metrics = HttpGet(daemon.metrics_port(), "/metrics", "Bearer " + *scheduler);
        return absl::EndsWith(metrics, "\n200");
      },
      kWait))
      << metrics;
  // Decisions are counted, by code and by where they came from.
  EXPECT_THAT(metrics, HasSubstr("workloadmap_authentications_total{code=\"UNAUTHENTICATED\""));
  EXPECT_THAT(metrics,
              HasSubstr("workloadmap_authorizations_total{code=\"PERMISSION_DENIED\",source="));
  EXPECT_THAT(metrics,
              HasSubstr("workloadmap_access_cache_lookups_total{cache=\"access\",result=\"hit\"}"));
  // /debug/cache is another URL: the grant for /metrics does not cover it.
  EXPECT_THAT(HttpGet(daemon.metrics_port(), "/debug/cache", "Bearer " + *scheduler),
              ::testing::EndsWith("403"));
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
  // The shared daemon runs with authentication off, and says so.
  EXPECT_THAT(Daemon().Log(), HasSubstr("authentication is off"));
  Seed("delete-demo.sh --namespace " + ns);
}

// A sidecar's scheduler over the daemon's Unix socket: named by its uid
// (SO_PEERCRED) through --unix-peer-identity, with no token, and then
// authorized by the cluster's RBAC like any caller; over TCP the same
// process, sending no token, is nobody.
TEST(DaemonTest, NamesUnixSocketPeersByUidAndRbacDecides) {
  Testbed& tb = Testbed::Get();
  std::string ns = NewDemo("unixpeer");
  ASSERT_TRUE(tb.CreateServiceAccount(ns, "scheduler").ok());
  ASSERT_TRUE(
      tb.BindRole(
            ns, "scheduler",
            {{{"apiGroups", {"jobset.x-k8s.io"}}, {"resources", {"jobsets"}}, {"verbs", {"get"}}}})
          .ok());
  char directory[] = "/tmp/wm-unixpeer-XXXXXX";
  ASSERT_NE(::mkdtemp(directory), nullptr);
  const std::string socket = std::string(directory) + "/workloadmapd.sock";
  const std::string user = "system:serviceaccount:" + ns + ":scheduler";
  DaemonProcess daemon({"--kubeconfig", tb.kubeconfig(), "--authentication=kubernetes", "--listen",
                        "unix:" + socket, "--unix-socket-mode=0600", "--unix-peer-identity",
                        absl::StrCat("uid:", ::getuid(), "=", user)});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  auto unix_stub = v1::WorkloadMap::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  auto resolve = [&](v1::WorkloadMap::Stub& stub, const std::string& namespace_) {
    auto context = Context();
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = JobSetRef(namespace_);
    v1::ResolveWorkloadResponse response;
    return stub.ResolveWorkload(context.get(), request, &response);
  };
  EXPECT_TRUE(Eventually([&] { return resolve(*unix_stub, ns).ok(); }, kWait))
      << resolve(*unix_stub, ns).error_message() << "\n"
      << daemon.Log();
  // The socket has the mode asked for.
  struct stat info {};
  ASSERT_EQ(::stat(socket.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  // RBAC decides: the Role is in its own namespace only.
  std::string other = NewDemo("unixpeer-other");
  grpc::Status elsewhere;
  EXPECT_TRUE(Eventually(
      [&] {
        elsewhere = resolve(*unix_stub, other);
        return elsewhere.error_code() == grpc::StatusCode::PERMISSION_DENIED;
      },
      kWait))
      << elsewhere.error_message();
  EXPECT_THAT(elsewhere.error_message(), HasSubstr("\"" + user + "\" may not get"));
  // Over TCP, without a token, the same process is unauthenticated.
  grpc::Status tcp = resolve(daemon.stub(), ns);
  EXPECT_EQ(tcp.error_code(), grpc::StatusCode::UNAUTHENTICATED) << tcp.error_message();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
  EXPECT_NE(::stat(socket.c_str(), &info), 0);  // the daemon removed its socket
  ::rmdir(directory);
  Seed("delete-demo.sh --namespace " + ns);
  Seed("delete-demo.sh --namespace " + other);
}

// The acceptance of listing under authorization: a ServiceAccount with
// cluster-wide read, one with read in one namespace, one with nothing, and
// a revoked RoleBinding taking effect within the (short) cache TTL.
TEST(DaemonTest, ListsAndWatchesOnlyTheNamespacesTheCallerMayList) {
  Testbed& tb = Testbed::Get();
  std::string team_a = NewDemo("team-a");
  std::string team_b = NewDemo("team-b");
  const Json read = {{{"apiGroups", {"jobset.x-k8s.io"}},
                      {"resources", {"jobsets"}},
                      {"verbs", {"get", "list", "watch"}}}};
  for (const char* name : {"reader", "member", "nobody"}) {
    ASSERT_TRUE(tb.CreateServiceAccount(team_a, name).ok());
  }
  ASSERT_TRUE(tb.BindClusterRole(team_a, "reader", read).ok());
  ASSERT_TRUE(tb.BindRole(team_a, "member", read).ok());
  std::map<std::string, std::string> tokens;
  for (const char* name : {"reader", "member", "nobody"}) {
    absl::StatusOr<std::string> token = tb.ServiceAccountToken(team_a, name, "workloadmap");
    ASSERT_TRUE(token.ok()) << token.status();
    tokens[name] = "Bearer " + *token;
  }
  DaemonProcess daemon({"--kubeconfig", tb.kubeconfig(), "--authentication=kubernetes",
                        "--token-audiences=workloadmap", "--authorization-allowed-ttl=1s",
                        "--authorization-denied-ttl=1s"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();

  // The namespaces among {team_a, team_b} that `who` lists JobSets in.
  auto listed = [&](const std::string& who, bool* filtered) {
    auto context = Context();
    context->AddMetadata("authorization", tokens[who]);
    v1::ListWorkloadsRequest request;
    request.add_kinds("JobSet");
    v1::ListWorkloadsResponse response;
    grpc::Status status = daemon.stub().ListWorkloads(context.get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    *filtered = response.filtered();
    std::set<std::string> namespaces;
    for (const auto& row : response.workloads()) {
      if (row.ref().namespace_() == team_a || row.ref().namespace_() == team_b) {
        namespaces.insert(row.ref().namespace_());
      }
    }
    return namespaces;
  };
  bool filtered = false;
  // Eventually: RBAC's informers catch up with the new bindings.
  EXPECT_TRUE(Eventually(
      [&] {
        return listed("reader", &filtered) == std::set<std::string>{team_a, team_b};
      },
      kWait));
  EXPECT_FALSE(filtered);
  EXPECT_TRUE(Eventually(
      [&] { return listed("member", &filtered) == std::set<std::string>{team_a}; }, kWait));
  EXPECT_TRUE(filtered);
  EXPECT_EQ(listed("nobody", &filtered), std::set<std::string>{});
  EXPECT_TRUE(filtered);
  // wmctl sends the token of --token-file, and says what is missing without.
  {
    std::string file = ::testing::TempDir() + "/member.token";
    std::ofstream(file) << tokens["member"].substr(std::string("Bearer ").size()) << "\n";
    std::string wmctl = absl::StrCat(WM_BINARY_DIR "/bin/wmctl get jobsets -A -o json --address ",
                                     daemon.address());
    int status = 0;
    std::string rows = RunCommand(wmctl + " --token-file " + file + " 2>&1", &status);
    EXPECT_EQ(status, 0) << rows;
    EXPECT_THAT(rows, HasSubstr("\"" + team_a + "\""));
    EXPECT_THAT(rows, Not(HasSubstr("\"" + team_b + "\"")));
    std::string refused = RunCommand(wmctl + " 2>&1", &status);
    EXPECT_NE(status, 0);
    EXPECT_THAT(refused, HasSubstr("did not accept the caller"));
    EXPECT_THAT(refused, HasSubstr("--token-file"));
  }
  // Resolving team-b's JobSet is denied to the member, as get is.
  {
    auto context = Context();
    context->AddMetadata("authorization", tokens["member"]);
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = JobSetRef(team_b);
    v1::ResolveWorkloadResponse response;
    grpc::Status status = daemon.stub().ResolveWorkload(context.get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  }

  // The member's watch shows team-a only, and loses it when the RoleBinding
  // goes, though the JobSet does not change.
  auto context = Context(absl::Seconds(60));
  context->AddMetadata("authorization", tokens["member"]);
  v1::WatchWorkloadsRequest request;
  request.add_kinds("JobSet");
  auto stream = daemon.stub().WatchWorkloads(context.get(), request);
  std::set<std::string> added;
  v1::WorkloadEvent event;
  ASSERT_TRUE(ReadUntil(*stream, &event, [&](const v1::WorkloadEvent& e) {
    if (e.type() == v1::WorkloadEvent::ADDED) added.insert(e.workload().ref().namespace_());
    return e.type() == v1::WorkloadEvent::SYNCED;
  }));
  EXPECT_TRUE(event.filtered());
  EXPECT_TRUE(added.contains(team_a));
  EXPECT_FALSE(added.contains(team_b));
  ASSERT_TRUE(tb.Call("DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/" + team_a +
                                    "/rolebindings/member")
                  .ok());
  ASSERT_TRUE(ReadUntil(*stream, &event, [&](const v1::WorkloadEvent& e) {
    return e.type() == v1::WorkloadEvent::DELETED && e.workload().ref().namespace_() == team_a;
  })) << daemon.Log();
  context->TryCancel();
  while (stream->Read(&event)) {
  }
  stream->Finish().IgnoreError();
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
  Seed("delete-demo.sh --namespace " + team_a);
  Seed("delete-demo.sh --namespace " + team_b);
}

TEST(DaemonTest, ServesSeveralClustersByContext) {
  Testbed& tb = Testbed::Get();
  std::string ns = NewDemo("multi");
  // Two contexts for the one testbed: the daemon treats them as two clusters.
  Json config = ParseYamlDocuments(testing::FileContent(tb.kubeconfig())).value()[0];
  Json context = config["contexts"][0];
  config["contexts"] = Json::array();
  for (const char* name : {"east", "west"}) {
    context["name"] = name;
    config["contexts"].push_back(context);
  }
  std::string path = ::testing::TempDir() + "/two-contexts.kubeconfig";
  std::ofstream(path) << config.dump();
  DaemonProcess daemon({"--kubeconfig", path, "--context", "east", "--context", "west"});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();

  v1::ListWorkloadsRequest list;
  list.set_namespace_(ns);
  v1::ListWorkloadsResponse rows;
  ASSERT_TRUE(daemon.stub().ListWorkloads(Context().get(), list, &rows).ok());
  ASSERT_EQ(rows.workloads_size(), 2);
  std::set<std::string> clusters;
  for (const auto& row : rows.workloads()) clusters.insert(row.ref().cluster());
  EXPECT_EQ(clusters, (std::set<std::string>{"east", "west"}));

  v1::ObjectRef ref = JobSetRef(ns);
  ref.set_cluster("west");
  v1::ResolveWorkloadResponse response;
  ASSERT_TRUE(Resolve(daemon, ref, &response).ok());
  EXPECT_EQ(response.workload().ref().cluster(), "west");
  list.set_cluster("east");
  ASSERT_TRUE(daemon.stub().ListWorkloads(Context().get(), list, &rows).ok());
  EXPECT_EQ(rows.workloads_size(), 1);
  EXPECT_EQ(daemon.Stop(), 0);
  Seed("delete-demo.sh --namespace " + ns);
}

// What /debug/leader of `daemon` says: {leading, leader, identity}.
Json LeaderOf(DaemonProcess& daemon) {
  std::string answer = HttpGet(daemon.metrics_port(), "/debug/leader");
  answer = answer.substr(0, answer.rfind('\n'));  // the status line curl appends
  Json parsed = Json::parse(answer, nullptr, false);
  return parsed.is_discarded() ? Json::object() : parsed;
}

// Two replicas with --leader-elect: one leads (and says so on /debug/leader
// and in its metrics); kill -9 of the leader hands over within the lease
// duration; SIGTERM of a leader gives the Lease up, and the other leads at
// its next try. Short durations: 4 s lease, 3 s renewal, 0.5 s retries.
TEST(DaemonTest, ReplicasElectOneLeaderAndHandOverWhenItDies) {
  const std::string ns = Testbed::Get().NewNamespace("leader");
  auto replica = [&](const std::string& name) {
    return std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--kubeconfig", Testbed::Get().kubeconfig(), "--leader-elect",
        "--leader-election-namespace", ns, "--leader-election-identity", name,
        "--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s",
        "--leader-election-retry-period=500ms"});
  };
  auto a = replica("replica-a");
  auto b = replica("replica-b");
  ASSERT_TRUE(a->Start().ok()) << a->Log();
  ASSERT_TRUE(b->Start().ok()) << b->Log();
  auto leading = [](DaemonProcess& d) { return LeaderOf(d).value("leading", false); };
  ASSERT_TRUE(Eventually([&] { return leading(*a) != leading(*b); }, absl::Seconds(15)))
      << LeaderOf(*a).dump() << LeaderOf(*b).dump();
  DaemonProcess& first = leading(*a) ? *a : *b;
  DaemonProcess& second = leading(*a) ? *b : *a;
  const std::string first_name = LeaderOf(first)["identity"];
  EXPECT_EQ(LeaderOf(second).value("leader", ""), first_name);
  EXPECT_THAT(HttpGet(first.metrics_port(), "/metrics"),
              HasSubstr(absl::StrCat("workloadmap_leader{lease=\"", ns,
                                     "/workloadmapd\",identity=\"", first_name, "\"} 1")));
  // Every replica serves reads, leading or not.
  EXPECT_THAT(HttpGet(second.metrics_port(), "/readyz"), ::testing::EndsWith("200"));

  // kill -9: no release; the other waits out the lease, then leads.
  absl::Time killed = absl::Now();
  ASSERT_EQ(::kill(first.pid(), SIGKILL), 0);
  ASSERT_TRUE(Eventually([&] { return leading(second); }, absl::Seconds(10)))
      << LeaderOf(second).dump();
  absl::Duration handover = absl::Now() - killed;
  EXPECT_LE(handover, absl::Seconds(4) + absl::Seconds(3)) << "beyond the lease and two retries";
  EXPECT_GE(handover, absl::Seconds(2)) << "taken before the lease ran out";

  // A restarted replica is a new candidate; SIGTERM of the leader hands
  // the Lease over at once.
  auto c = replica("replica-c");
  ASSERT_TRUE(c->Start().ok()) << c->Log();
  absl::SleepFor(absl::Seconds(1));
  EXPECT_FALSE(leading(*c));
  absl::Time stopped = absl::Now();
  EXPECT_EQ(second.Stop(), 0) << second.Log();
  ASSERT_TRUE(Eventually([&] { return leading(*c); }, absl::Seconds(10))) << LeaderOf(*c).dump();
  EXPECT_LT(absl::Now() - stopped, absl::Seconds(3)) << "waited as if the leader had died";
  EXPECT_EQ(c->Stop(), 0);
}

// A Karta the checks refuse, for a kind no test serves.
Json InvalidKarta(const std::string& name) {
  return definitions::testing::KartaFixture(name, Gvk{"handover.test.run.ai", "v1", "Widget"},
                                            definitions::testing::kRefusedPodTemplatePath);
}

// The Karta operator's writes across a leader's death: each finding gets
// one event from whichever replica leads when it appears (none lost while
// no one leads, none repeated by the new leader), and a Karta that already
// says the truth is not written again.
TEST(DaemonTest, TheKartaOperatorWritesEachFindingOnceAcrossAHandOver) {
  Testbed& tb = Testbed::Get();
  const std::string ns = tb.NewNamespace("karta-handover");
  const std::string before = ns + "-before", after = ns + "-after";
  const std::string kartas = "/apis/run.ai/v1alpha1/kartas";
  auto replica = [&](const std::string& name) {
    return std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--kubeconfig", tb.kubeconfig(), "--leader-elect", "--leader-election-namespace", ns,
        "--leader-election-identity", name, "--leader-election-lease-duration=4s",
        "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms"});
  };
  auto validated = [&](const std::string& name) {
    absl::StatusOr<Json> karta = tb.Call("GET", kartas + "/" + name);
    if (!karta.ok()) return std::string();
    for (const Json& c :
         karta->value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") == "Validated") return c.value("status", "");
    }
    return std::string();
  };
  auto events = [&](const std::string& name) {
    absl::StatusOr<Json> list = tb.Call(
        "GET", "/api/v1/namespaces/default/events?fieldSelector=" +
                   kube::QueryEscape("involvedObject.kind=Karta,involvedObject.name=" + name));
    return list.ok() ? (*list)["items"].size() : size_t{0};
  };
  auto a = replica("karta-a");
  auto b = replica("karta-b");
  ASSERT_TRUE(a->Start().ok()) << a->Log();
  ASSERT_TRUE(b->Start().ok()) << b->Log();
  auto leading = [](DaemonProcess& d) { return LeaderOf(d).value("leading", false); };
  ASSERT_TRUE(Eventually([&] { return leading(*a) != leading(*b); }, absl::Seconds(15)));
  DaemonProcess& first = leading(*a) ? *a : *b;
  DaemonProcess& second = leading(*a) ? *b : *a;

  ASSERT_TRUE(tb.Call("POST", kartas, InvalidKarta(before)).ok());
  ASSERT_TRUE(Eventually([&] { return validated(before) == "False" && events(before) == 1; },
                         absl::Seconds(15)))
      << first.Log();
  const std::string version =
      (*tb.Call("GET", kartas + "/" + before))["metadata"]["resourceVersion"];

  // The leader dies; a Karta appears while no one leads.
  ASSERT_EQ(::kill(first.pid(), SIGKILL), 0);
  ASSERT_TRUE(tb.Call("POST", kartas, InvalidKarta(after)).ok());
  ASSERT_TRUE(Eventually([&] { return leading(second); }, absl::Seconds(10)));
  ASSERT_TRUE(Eventually([&] { return validated(after) == "False" && events(after) == 1; },
                         absl::Seconds(15)))
      << second.Log();
  // The new leader looked at every Karta when it started leading: give it
  // time to (wrongly) write again, then count.
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(events(before), 1u);
  EXPECT_EQ(events(after), 1u);
  EXPECT_EQ((*tb.Call("GET", kartas + "/" + before))["metadata"]["resourceVersion"], version);
  EXPECT_THAT(HttpGet(second.metrics_port(), "/metrics"),
              HasSubstr("workloadmap_karta_operator_writes_total{cluster="));
  EXPECT_EQ(second.Stop(), 0);
  ASSERT_TRUE(tb.Call("DELETE", kartas + "/" + before).ok());
  ASSERT_TRUE(tb.Call("DELETE", kartas + "/" + after).ok());
}

TEST(DaemonTest, RestartsCleanlyAndOldRevisionsAreRefused) {
  std::string ns = NewDemo("restart");
  DaemonProcess daemon({"--kubeconfig", Testbed::Get().kubeconfig()});
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  v1::WatchWorkloadsRequest request;
  request.set_namespace_(ns);
  auto context = Context();
  auto stream = daemon.stub().WatchWorkloads(context.get(), request);
  v1::WorkloadEvent event;
  ASSERT_TRUE(ReadUntil(*stream, &event, [](const v1::WorkloadEvent& e) {
    return e.type() == v1::WorkloadEvent::SYNCED;
  }));
  const uint64_t revision = event.revision();
  // SIGTERM ends the open stream and the process exits 0.
  EXPECT_EQ(daemon.Stop(), 0) << daemon.Log();
  EXPECT_THAT(daemon.Log(), HasSubstr("shutting down"));
  EXPECT_FALSE(stream->Read(&event));
  stream->Finish();

  ASSERT_TRUE(daemon.Start().ok()) << daemon.Log();
  v1::ResolveWorkloadResponse response;
  ASSERT_TRUE(Resolve(daemon, JobSetRef(ns), &response).ok());
  EXPECT_EQ(Ready(response.workload(), "worker"), 2);
  // A revision of the earlier process is not replayed: watch afresh.
  request.set_resume_revision(revision);
  auto resume_context = Context();
  auto resumed = daemon.stub().WatchWorkloads(resume_context.get(), request);
  EXPECT_FALSE(resumed->Read(&event));
  EXPECT_EQ(resumed->Finish().error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(daemon.Stop(), 0);
  Seed("delete-demo.sh --namespace " + ns);
}

// Last: it restarts the apiserver under everything else.
TEST(DaemonTest, KeepsServingWhileTheApiserverRestarts) {
  DaemonProcess& daemon = Daemon();
  Testbed& tb = Testbed::Get();
  std::string ns = NewDemo("outage");
  v1::ResolveWorkloadResponse response;
  ASSERT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).ok() &&
               Ready(response.workload(), "worker") == 2;
      },
      kWait));
  std::atomic<bool> stop = false;
  std::atomic<int> ok = 0, failed = 0;
  std::string last_error;
  std::thread caller([&] {
    while (!stop) {
      v1::ResolveWorkloadResponse r;
      grpc::Status s = Resolve(daemon, JobSetRef(ns), &r);
      if (s.ok()) {
        ++ok;
      } else {
        ++failed;
        last_error = s.error_message();
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  tb.Script("kill-apiserver");
  int before = ok;
  absl::SleepFor(absl::Seconds(3));
  EXPECT_GT(ok.load(), before + 50) << "calls stalled while the apiserver was down";
  tb.Script("start-apiserver");
  std::string worker;
  for (const std::string& name : Pods(ns)) {
    if (name.find("worker-0") != std::string::npos) worker = name;
  }
  Seed(absl::StrCat("set-pod-ready.sh --namespace ", ns, " ", worker, " false"));
  EXPECT_TRUE(Eventually(
      [&] {
        return Resolve(daemon, JobSetRef(ns), &response).ok() &&
               Ready(response.workload(), "worker") == 1;
      },
      absl::Seconds(60)))
      << "the daemon did not follow changes after the apiserver came back";
  stop = true;
  caller.join();
  EXPECT_EQ(failed.load(), 0) << last_error;
  Seed("delete-demo.sh --namespace " + ns);
}

}  // namespace
}  // namespace wm::testing
