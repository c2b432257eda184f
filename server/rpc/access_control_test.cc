// Every method of the service authenticates its caller before it serves,
// and methods on one workload authorize it: over a real gRPC server, with
// tokens and access reviewed by a scripted apiserver.
// The daemon against the real apiserver is tested in
// integration_tests/daemon.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/caller_limits.h"
#include "server/access/testing/review_server.h"
#include "server/access/token_reviewer.h"
#include "server/common/yaml_json.h"
#include "server/expressions/jq_engine.h"
#include "server/index/testing/fake_cluster.h"
#include "server/kube/testing/eventually.h"
#include "server/rpc/testing/service_harness.h"

namespace wm::rpc {
namespace {

namespace v1 = ::workloadmap::v1;
using ::testing::HasSubstr;
using ::wm::index::testing::FakeCluster;
using ::wm::kube::testing::Eventually;

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 1}).value().release();
  return *engine;
}

// The catalog, and two Karta objects of the cluster: one for a kind of its
// own, one that is rejected.
std::shared_ptr<const definitions::Registry> Catalog() {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  EXPECT_TRUE(registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok());
  EXPECT_TRUE(
      registry
          ->AddDocuments({{"cluster:karta/widgets", R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: widgets}
spec:
  structureDefinition:
    rootComponent:
      name: widget
      kind: {group: example.com, version: v1, kind: Widget}
      specDefinition: {podTemplateSpecPath: .spec.template}
)"},
                          {"cluster:karta/broken", "apiVersion: run.ai/v1alpha1\nkind: Karta\n"}},
                         definitions::Origin::kCluster)
          .ok());
  return registry;
}

// Whether user "kai" may list jobsets in namespace team-b (the tests of
// RBAC changes turn it on and off).
std::atomic<bool> kai_reads_team_b = false;

// An apiserver that knows three tokens: "admin-token" of user "admin", who
// may do anything anywhere; "scheduler-token" of user "kai", who may get and
// list jobsets in namespace default; and "intern-token" of user "intern",
// who may do nothing.
Json Decide(const std::string& path, const Json& review, int*) {
  if (path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
    const Json& spec = review["spec"];
    const Json& what = spec["resourceAttributes"];
    std::string ns = what.value("namespace", "");
    bool kai = spec["user"] == "kai" && (what["verb"] == "get" || what["verb"] == "list") &&
               what["resource"] == "jobsets" && what["group"] == "jobset.x-k8s.io" &&
               (ns == "default" || (ns == "team-b" && kai_reads_team_b));
    return {{"allowed", kai || spec["user"] == "admin"}};
  }
  const Json& token = review["spec"]["token"];
  if (token == "admin-token") return {{"authenticated", true}, {"user", {{"username", "admin"}}}};
  if (token == "scheduler-token") return {{"authenticated", true}, {"user", {{"username", "kai"}}}};
  if (token == "intern-token") return {{"authenticated", true}, {"user", {{"username", "intern"}}}};
  return {{"authenticated", false}, {"error", "invalid bearer token"}};
}

class AccessControlTest : public ::testing::Test {
 protected:
  AccessControlTest()
      : apiserver_(Decide),
        client_(apiserver_.Connection()),
        tokens_(client_, {}),
        authenticator_({.client_certificates = true, .tokens = &tokens_}),
        cluster_(Catalog()) {
    kai_reads_team_b = false;
    cluster_.SetResource("JobSet", "jobsets");
    Start({}, absl::Seconds(30));
  }

  // Serves with access decisions cached as `options` says and watches
  // asking again every `recheck`: the seed's JobSet "demo" in namespace
  // default, and one more in team-b.
  void Start(access::AccessReviewer::Options options, absl::Duration recheck,
             access::CallerLimits::Options limits = {},
             std::optional<access::ResourceAttributes> inline_permission = std::nullopt) {
    harness_.reset();
    access_ = std::make_unique<access::AccessReviewer>(client_, options);
    limits_ = std::make_unique<access::CallerLimits>(limits);
    WorkloadMapService::Options service_options;
    service_options.authenticator = &authenticator_;
    service_options.access_reviewers[cluster_.name()] = access_.get();
    service_options.watch_access_recheck = recheck;
    service_options.limits = limits_.get();
    service_options.inline_permission = inline_permission;
    service_options.audit = [this](const AuditEvent& event) {
      std::lock_guard lock(audit_mu_);
      audited_.push_back(absl::StrCat(event.method, " ", event.who ? event.who->user : "?", " ",
                                      event.what ? event.what->Describe() : "-", " ",
                                      absl::StatusCodeToString(event.status.code()),
                                      event.cached ? " cached" : ""));
    };
    harness_ = std::make_unique<testing::ServiceHarness>(std::vector<index::Cluster*>{&cluster_},
                                                         Engine(), service_options);
    EXPECT_TRUE(harness_->started());
    absl::Status seeded = index::testing::PutSeed(cluster_, harness_->index(), {"team-b"});
    EXPECT_TRUE(seeded.ok()) << seeded;
  }

  // The namespaces of the workloads `token` lists, and whether the answer
  // says it was filtered.
  std::pair<std::vector<std::string>, bool> ListNamespaces(const std::string& token) {
    v1::ListWorkloadsResponse response;
    grpc::Status status = harness_->stub().ListWorkloads(Context("Bearer " + token).get(),
                                                         v1::ListWorkloadsRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<std::string> namespaces;
    for (const auto& w : response.workloads()) namespaces.push_back(w.ref().namespace_());
    std::sort(namespaces.begin(), namespaces.end());
    return {namespaces, response.filtered()};
  }

  // A context that sends `authorization` (none when empty).
  static std::unique_ptr<grpc::ClientContext> Context(const std::string& authorization) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!authorization.empty()) context->AddMetadata("authorization", authorization);
    return context;
  }

  grpc::Status Resolve(const std::string& authorization) {
    v1::ResolveWorkloadRequest request;
    request.mutable_ref()->set_kind("JobSet");
    request.mutable_ref()->set_name("demo");
    request.mutable_ref()->set_namespace_("default");
    v1::ResolveWorkloadResponse response;
    return harness_->stub().ResolveWorkload(Context(authorization).get(), request, &response);
  }

  // The first message of a watch, or its status when it ends without one.
  grpc::Status Watch(const std::string& authorization, v1::WorkloadEvent* first) {
    auto context = Context(authorization);
    auto reader = harness_->stub().WatchWorkloads(context.get(), v1::WatchWorkloadsRequest());
    if (reader->Read(first)) {
      context->TryCancel();
      while (reader->Read(first)) {
      }
      reader->Finish().IgnoreError();
      return grpc::Status::OK;
    }
    return reader->Finish();
  }

  access::testing::ReviewServer apiserver_;
  kube::ApiClient client_;
  access::TokenReviewer tokens_;
  access::Authenticator authenticator_;
  std::unique_ptr<access::AccessReviewer> access_;
  std::unique_ptr<access::CallerLimits> limits_;
  std::mutex audit_mu_;
  std::vector<std::string> audited_;  // "method user what CODE [cached]"
  FakeCluster cluster_;
  std::unique_ptr<testing::ServiceHarness> harness_;
};

TEST_F(AccessControlTest, EveryMethodRefusesACallerWithoutCredentials) {
  std::vector<grpc::Status> statuses;
  statuses.push_back(Resolve(""));
  {
    v1::ListWorkloadsResponse response;
    statuses.push_back(
        harness_->stub().ListWorkloads(Context("").get(), v1::ListWorkloadsRequest(), &response));
  }
  {
    v1::MutatePodSpecsResponse response;
    statuses.push_back(
        harness_->stub().MutatePodSpecs(Context("").get(), v1::MutatePodSpecsRequest(), &response));
  }
  {
    v1::GetGangInstructionsResponse response;
    statuses.push_back(harness_->stub().GetGangInstructions(
        Context("").get(), v1::GetGangInstructionsRequest(), &response));
  }
  {
    v1::ListDefinitionsResponse response;
    statuses.push_back(harness_->stub().ListDefinitions(Context("").get(),
                                                        v1::ListDefinitionsRequest(), &response));
  }
  {
    v1::ValidateDefinitionResponse response;
    statuses.push_back(harness_->stub().ValidateDefinition(
        Context("").get(), v1::ValidateDefinitionRequest(), &response));
  }
  v1::WorkloadEvent event;
  statuses.push_back(Watch("", &event));
  for (const grpc::Status& status : statuses) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("no credentials"));
  }
  EXPECT_EQ(apiserver_.reviews(), 0);  // nothing to review
}

TEST_F(AccessControlTest, AReviewedTokenIsServedAndRememberedAndABadOneIsNot) {
  EXPECT_TRUE(Resolve("Bearer scheduler-token").ok());  // reviewed on the pool
  EXPECT_TRUE(Resolve("Bearer scheduler-token").ok());  // from the cache
  EXPECT_EQ(apiserver_.reviews(), 2);                   // one TokenReview, one SubjectAccessReview

  grpc::Status rejected = Resolve("Bearer stolen-token");
  EXPECT_EQ(rejected.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(rejected.error_message(), HasSubstr("invalid bearer token"));
  EXPECT_THAT(rejected.error_message(), ::testing::Not(HasSubstr("stolen-token")));

  grpc::Status malformed = Resolve("Basic a2FpOnB3");
  EXPECT_EQ(malformed.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(malformed.error_message(), HasSubstr("expected \"Bearer <token>\""));
}

TEST_F(AccessControlTest, AWatchStartsOnceItsTokenIsReviewed) {
  v1::WorkloadEvent event;
  grpc::Status status = Watch("Bearer scheduler-token", &event);  // reviewed on the pool
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_NE(event.type(), v1::WorkloadEvent::TYPE_UNSPECIFIED);
  status = Watch("Bearer scheduler-token", &event);  // from the cache
  ASSERT_TRUE(status.ok()) << status.error_message();
  status = Watch("Bearer stolen-token", &event);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AccessControlTest, ACallOnAWorkloadNeedsGetOnItsResourceInItsNamespace) {
  grpc::Status denied = Resolve("Bearer intern-token");  // reviewed on the pool
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(denied.error_message(),
            "user \"intern\" may not get jobsets.jobset.x-k8s.io \"demo\" in namespace "
            "\"default\"");
  denied = Resolve("Bearer intern-token");  // the denial, from the cache
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(apiserver_.reviews(), 2);

  // GetGangInstructions of a pod asks about its top owner, the JobSet.
  for (const std::string token : {"scheduler-token", "intern-token"}) {
    v1::GetGangInstructionsRequest request;
    request.mutable_pod()->set_name("demo-worker-0-0-x0w");
    request.mutable_pod()->set_namespace_("default");
    v1::GetGangInstructionsResponse response;
    grpc::Status status =
        harness_->stub().GetGangInstructions(Context("Bearer " + token).get(), request, &response);
    if (token == "scheduler-token") {
      EXPECT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(response.top_owner().name(), "demo");
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
    }
  }
}

TEST_F(AccessControlTest, AListShowsTheNamespacesWhereTheCallerMayListAndSaysItWasFiltered) {
  using ::testing::ElementsAre;
  EXPECT_EQ(ListNamespaces("admin-token"),
            std::make_pair(std::vector<std::string>{"default", "team-b"}, false));
  EXPECT_EQ(ListNamespaces("scheduler-token"),
            std::make_pair(std::vector<std::string>{"default"}, true));
  EXPECT_EQ(ListNamespaces("intern-token"), std::make_pair(std::vector<std::string>{}, true));
  int reviews = apiserver_.reviews();
  // Decided from the cache: on the calling thread, nothing asked.
  EXPECT_EQ(ListNamespaces("scheduler-token"),
            std::make_pair(std::vector<std::string>{"default"}, true));
  EXPECT_EQ(apiserver_.reviews(), reviews);
  // Once granted (and the denial expired), team-b shows too.
  Start({.allowed_ttl = absl::Milliseconds(50), .denied_ttl = absl::Milliseconds(50)},
        absl::Seconds(30));
  kai_reads_team_b = true;
  EXPECT_EQ(ListNamespaces("scheduler-token"),
            std::make_pair(std::vector<std::string>{"default", "team-b"}, true));
}

// The events of a watch until `until` holds of one, or 10 s pass.
class WatchStream {
 public:
  WatchStream(v1::WorkloadMap::Stub& stub, const std::string& token, uint64_t resume = 0) {
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    context_.AddMetadata("authorization", "Bearer " + token);
    v1::WatchWorkloadsRequest request;
    request.set_resume_revision(resume);
    reader_ = stub.WatchWorkloads(&context_, request);
  }
  ~WatchStream() {
    context_.TryCancel();
    v1::WorkloadEvent ignored;
    while (reader_->Read(&ignored)) {
    }
    reader_->Finish().IgnoreError();
  }
  // "TYPE namespace" of each event up to and including the first for which
  // `until` holds.
  std::vector<std::string> ReadUntil(std::function<bool(const v1::WorkloadEvent&)> until) {
    std::vector<std::string> seen;
    v1::WorkloadEvent event;
    while (reader_->Read(&event)) {
      seen.push_back(absl::StrCat(v1::WorkloadEvent::Type_Name(event.type()), " ",
                                  event.workload().ref().namespace_()));
      if (event.type() == v1::WorkloadEvent::SYNCED) {
        filtered_ = event.filtered();
        synced_revision_ = event.revision();
      }
      if (until(event)) break;
    }
    return seen;
  }
  bool filtered() const { return filtered_; }
  uint64_t synced_revision() const { return synced_revision_; }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::WorkloadEvent>> reader_;
  bool filtered_ = false;
  uint64_t synced_revision_ = 0;
};

bool IsSynced(const v1::WorkloadEvent& e) { return e.type() == v1::WorkloadEvent::SYNCED; }

TEST_F(AccessControlTest, AWatchShowsTheNamespacesWhereTheCallerMayList) {
  using ::testing::ElementsAre;
  {
    WatchStream admin(harness_->stub(), "admin-token");
    EXPECT_THAT(admin.ReadUntil(IsSynced), ElementsAre("ADDED default", "ADDED team-b", "SYNCED "));
    EXPECT_FALSE(admin.filtered());
  }
  WatchStream kai(harness_->stub(), "scheduler-token");
  EXPECT_THAT(kai.ReadUntil(IsSynced), ElementsAre("ADDED default", "SYNCED "));
  EXPECT_TRUE(kai.filtered());
  WatchStream intern(harness_->stub(), "intern-token");
  EXPECT_THAT(intern.ReadUntil(IsSynced), ElementsAre("SYNCED "));

  // A change in a namespace the caller may not list does not reach it; one
  // in a namespace it may list does.
  auto seed =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml");
  ASSERT_TRUE(seed.ok());
  Json demo = (*seed)[0];
  ASSERT_EQ(demo["kind"], "JobSet");
  Json team_b = demo;
  team_b["metadata"]["namespace"] = "team-b";
  team_b["metadata"]["uid"] = "team-b-demo-uid";
  team_b["metadata"]["labels"]["changed"] = "yes";
  cluster_.Put(harness_->index(), team_b);
  demo["metadata"]["labels"]["changed"] = "yes";
  cluster_.Put(harness_->index(), demo);
  EXPECT_THAT(kai.ReadUntil([](const auto&) { return true; }), ElementsAre("MODIFIED default"));
}

TEST_F(AccessControlTest, AWatchGainsAndLosesNamespacesAsTheCallersRbacChanges) {
  using ::testing::ElementsAre;
  Start({.allowed_ttl = absl::Milliseconds(100), .denied_ttl = absl::Milliseconds(100)},
        absl::Milliseconds(100));
  WatchStream kai(harness_->stub(), "scheduler-token");
  EXPECT_THAT(kai.ReadUntil(IsSynced), ElementsAre("ADDED default", "SYNCED "));
  // Granted: team-b's workload comes, though it does not change.
  kai_reads_team_b = true;
  EXPECT_THAT(kai.ReadUntil([](const auto&) { return true; }), ElementsAre("ADDED team-b"));
  // Revoked: it goes.
  kai_reads_team_b = false;
  EXPECT_THAT(kai.ReadUntil([](const auto&) { return true; }), ElementsAre("DELETED team-b"));
}

TEST_F(AccessControlTest, ACallerOverItsRateIsRefusedAndOthersAreNot) {
  Start({}, absl::Seconds(30),
        {.calls_per_second = 0.001, .burst = 2, .max_streams = 1, .exempt = {"admin"}});
  // "kai" has a burst of two calls; the third is refused with a hint.
  EXPECT_TRUE(Resolve("Bearer scheduler-token").ok());
  EXPECT_TRUE(Resolve("Bearer scheduler-token").ok());
  auto context = Context("Bearer scheduler-token");
  v1::ResolveWorkloadRequest request;
  request.mutable_ref()->set_kind("JobSet");
  request.mutable_ref()->set_name("demo");
  v1::ResolveWorkloadResponse response;
  grpc::Status refused = harness_->stub().ResolveWorkload(context.get(), request, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("\"kai\" is over its limit"));
  auto hint = context->GetServerTrailingMetadata().find("wm-retry-after-ms");
  ASSERT_NE(hint, context->GetServerTrailingMetadata().end());
  EXPECT_GT(std::stoll(std::string(hint->second.data(), hint->second.size())), 0);
  // The intern's bucket is its own; the exempt admin has none.
  EXPECT_EQ(Resolve("Bearer intern-token").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(Resolve("Bearer admin-token").ok());
}

TEST_F(AccessControlTest, ACallerMayHoldOnlyItsShareOfWatches) {
  Start({}, absl::Seconds(30), {.max_streams = 1});
  {
    WatchStream first(harness_->stub(), "scheduler-token");
    EXPECT_THAT(first.ReadUntil(IsSynced), ::testing::Contains("SYNCED "));
    v1::WorkloadEvent event;
    grpc::Status second = Watch("Bearer scheduler-token", &event);
    EXPECT_EQ(second.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(second.error_message(), HasSubstr("already holds 1 watches"));
    EXPECT_TRUE(Watch("Bearer admin-token", &event).ok());  // another caller
  }
  // Once the first stream is gone, its slot is free again.
  v1::WorkloadEvent event;
  EXPECT_TRUE(
      Eventually([&] { return Watch("Bearer scheduler-token", &event).ok(); }, absl::Seconds(10)));
}

TEST_F(AccessControlTest, DenialsAndDecisionsAreAudited) {
  EXPECT_EQ(Resolve("Bearer intern-token").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Resolve("Bearer intern-token").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Resolve("Bearer stolen-token").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  std::lock_guard lock(audit_mu_);
  EXPECT_THAT(
      audited_,
      ::testing::ElementsAre(
          "ResolveWorkload intern - OK",
          "ResolveWorkload intern get jobsets.jobset.x-k8s.io \"demo\" in namespace \"default\" "
          "PERMISSION_DENIED",
          "ResolveWorkload intern - OK cached",
          "ResolveWorkload intern get jobsets.jobset.x-k8s.io \"demo\" in namespace \"default\" "
          "PERMISSION_DENIED cached",
          "ResolveWorkload ? - UNAUTHENTICATED"));
}

TEST_F(AccessControlTest, AnApplyIsMadeAsTheCallerWhoMayGetTheWorkload) {
  auto apply = [&](const std::string& token) {
    v1::MutatePodSpecsRequest request;
    request.mutable_ref()->set_kind("JobSet");
    request.mutable_ref()->set_name("demo");
    request.add_changes()->set_scheduler_name("kai-scheduler");
    request.set_apply(true);
    v1::MutatePodSpecsResponse response;
    return harness_->stub().MutatePodSpecs(Context("Bearer " + token).get(), request, &response);
  };
  grpc::Status applied = apply("scheduler-token");
  ASSERT_TRUE(applied.ok()) << applied.error_message();
  grpc::Status denied = apply("intern-token");
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(), HasSubstr("may not get jobsets.jobset.x-k8s.io \"demo\""));
  std::vector<FakeCluster::AppliedPatch> patches = cluster_.patches();
  ASSERT_EQ(patches.size(), 1u);  // the intern's was never tried
  EXPECT_EQ(patches[0].as_user, "kai");
  std::lock_guard lock(audit_mu_);
  EXPECT_THAT(
      audited_,
      ::testing::Contains("MutatePodSpecs kai patch jobsets.jobset.x-k8s.io \"demo\" in namespace "
                          "\"default\" OK"));
}

TEST_F(AccessControlTest, InlineCallsNeedTheConfiguredPermission) {
  auto validate = [&](const std::string& token) {
    v1::ValidateDefinitionRequest request;
    request.set_definition_yaml(BuiltinCatalog().front().second);
    v1::ValidateDefinitionResponse response;
    return harness_->stub().ValidateDefinition(Context("Bearer " + token).get(), request,
                                               &response);
  };
  EXPECT_TRUE(validate("intern-token").ok());  // by default, any authenticated caller
  Start({}, absl::Seconds(30), {},
        access::ResourceAttributes{.verb = "create", .resource = "pods"});
  EXPECT_TRUE(validate("admin-token").ok());
  grpc::Status denied = validate("intern-token");
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(denied.error_message(), "user \"intern\" may not create pods in every namespace");
  v1::ResolveWorkloadRequest inline_request;
  inline_request.mutable_inline_()->set_object_json(R"({"apiVersion": "v1", "kind": "Pod"})");
  v1::ResolveWorkloadResponse response;
  EXPECT_EQ(harness_->stub()
                .ResolveWorkload(Context("Bearer intern-token").get(), inline_request, &response)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(AccessControlTest, ClusterDefinitionsAreShownToWhoMayListKartas) {
  auto list = [&](const std::string& token) {
    v1::ListDefinitionsResponse response;
    grpc::Status status = harness_->stub().ListDefinitions(Context("Bearer " + token).get(),
                                                           v1::ListDefinitionsRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::set<std::string> cluster_sources;
    for (const auto& d : response.definitions()) {
      if (d.origin() == "cluster") cluster_sources.insert(d.source());
    }
    for (const auto& r : response.rejected()) cluster_sources.insert(r.source());
    return std::make_pair(cluster_sources, response.filtered());
  };
  auto [admin_sees, admin_filtered] = list("admin-token");
  EXPECT_EQ(admin_sees, (std::set<std::string>{"cluster:karta/widgets", "cluster:karta/broken"}));
  EXPECT_FALSE(admin_filtered);
  auto [kai_sees, kai_filtered] = list("scheduler-token");
  EXPECT_EQ(kai_sees, std::set<std::string>{});
  EXPECT_TRUE(kai_filtered);
  EXPECT_EQ(apiserver_.last_review()["spec"]["resourceAttributes"]["resource"], "kartas");
}

TEST_F(AccessControlTest, AResumedWatchTellsOfWhatTheCallerSawBefore) {
  using ::testing::ElementsAre;
  uint64_t revision = 0;
  {
    WatchStream kai(harness_->stub(), "scheduler-token");
    EXPECT_THAT(kai.ReadUntil(IsSynced), ElementsAre("ADDED default", "SYNCED "));
    revision = kai.synced_revision();
  }
  // While the client is away, both JobSets go; resumed, it hears of the one
  // it saw (a stream of its own never showed it), not of team-b's.
  auto seed =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml");
  ASSERT_TRUE(seed.ok());
  Json demo = (*seed)[0];
  Json team_b = demo;
  team_b["metadata"]["namespace"] = "team-b";
  team_b["metadata"]["uid"] = "team-b-demo-uid";
  cluster_.Delete(harness_->index(), team_b);
  cluster_.Delete(harness_->index(), demo);
  harness_->index().WaitForIdle();
  WatchStream resumed(harness_->stub(), "scheduler-token", revision);
  EXPECT_THAT(resumed.ReadUntil(IsSynced), ElementsAre("DELETED default", "SYNCED "));
}

// A resumed watch with nothing to send still says that the caller sees
// only some namespaces (found by the web page, which shows it).
TEST_F(AccessControlTest, AResumedWatchWithNothingNewStillSaysItIsFiltered) {
  using ::testing::ElementsAre;
  uint64_t revision = 0;
  {
    WatchStream kai(harness_->stub(), "scheduler-token");
    EXPECT_THAT(kai.ReadUntil(IsSynced), ElementsAre("ADDED default", "SYNCED "));
    EXPECT_TRUE(kai.filtered());
    revision = kai.synced_revision();
  }
  WatchStream resumed(harness_->stub(), "scheduler-token", revision);
  EXPECT_THAT(resumed.ReadUntil(IsSynced), ElementsAre("SYNCED "));
  EXPECT_TRUE(resumed.filtered());
  WatchStream admin(harness_->stub(), "admin-token", revision);
  EXPECT_THAT(admin.ReadUntil(IsSynced), ElementsAre("SYNCED "));
  EXPECT_FALSE(admin.filtered());
}

}  // namespace
}  // namespace wm::rpc
