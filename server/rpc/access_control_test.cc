// Every method of the service authenticates its caller before it serves,
// and methods on one workload authorize it: over a real gRPC server, with
// tokens and access reviewed by a scripted apiserver.
// The daemon against the real apiserver is tested in
// integration_tests/daemon.
#include <chrono>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/testing/review_server.h"
#include "server/access/token_reviewer.h"
#include "server/common/yaml_json.h"
#include "server/expressions/jq_engine.h"
#include "server/index/testing/fake_cluster.h"
#include "server/rpc/testing/service_harness.h"

namespace wm::rpc {
namespace {

namespace v1 = ::workloadmap::v1;
using ::testing::HasSubstr;
using ::wm::index::testing::FakeCluster;

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 1}).value().release();
  return *engine;
}

std::shared_ptr<const definitions::Registry> Catalog() {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  EXPECT_TRUE(registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok());
  return registry;
}

// An apiserver that knows two tokens: "scheduler-token" of user "kai", who
// may get jobsets in namespace default, and "intern-token" of user
// "intern", who may do nothing.
Json Decide(const std::string& path, const Json& review, int*) {
  if (path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
    const Json& spec = review["spec"];
    const Json& what = spec["resourceAttributes"];
    return {{"allowed", spec["user"] == "kai" && what["verb"] == "get" &&
                            what["resource"] == "jobsets" && what["group"] == "jobset.x-k8s.io" &&
                            what.value("namespace", "") == "default"}};
  }
  const Json& token = review["spec"]["token"];
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
        access_(client_, {}),
        cluster_(Catalog()) {
    cluster_.SetResource("JobSet", "jobsets");
    WorkloadMapService::Options options;
    options.authenticator = &authenticator_;
    options.access_reviewers[cluster_.name()] = &access_;
    harness_ = std::make_unique<testing::ServiceHarness>(std::vector<index::Cluster*>{&cluster_},
                                                         Engine(), options);
    EXPECT_TRUE(harness_->started());
    auto seed =
        ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml");
    EXPECT_TRUE(seed.ok()) << seed.status();
    for (const Json& object : *seed) cluster_.Put(harness_->index(), object);
    harness_->index().WaitForIdle();
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
  access::AccessReviewer access_;
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
  for (const std::string& token : {"scheduler-token", "intern-token"}) {
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

}  // namespace
}  // namespace wm::rpc
