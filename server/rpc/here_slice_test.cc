// Small inline calls are served on gRPC's calling thread within a slice
// (Options::here_slice, here_built_bytes): one whose expressions spin or
// build a huge value is done again on the work pool, at its nice value, and
// answered as the pool's run decides; a cheap one stays on gRPC's thread.

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/common/yaml_json.h"
#include "server/definitions/registry.h"
#include "server/expressions/native_engine.h"
#include "server/index/testing/fake_cluster.h"
#include "server/rpc/testing/nice_noting_engine.h"
#include "server/rpc/testing/service_harness.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::rpc {
namespace {

namespace v1 = workloadmap::v1;
using ::testing::HasSubstr;
using ::wm::index::testing::FakeCluster;

// The native engine (the only one that can stop an evaluation short) with
// a budget short enough for a spinning expression to end soon on the pool.
testing::NiceNotingEngine& Engine() {
  static auto* engine = new testing::NiceNotingEngine(
      expressions::NewNativeEngine({.limits = {.budget = absl::Milliseconds(300)}}).value());
  return *engine;
}

// Kinds whose status expression spins until the budget (Spin: 2.5 x 10^9
// steps, in two loops as a definition may write them: `range` is refused
// and one `until` ends at the tail-call bound) or asks for a 70 MB string
// (Huge), and the catalog.
constexpr char kCostly[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: costly-example-com-spin-v1}
spec:
  structureDefinition:
    rootComponent:
      name: spin
      kind: {group: costly.example.com, version: v1, kind: Spin}
      statusDefinition:
        statusMappings:
          running:
          - byExpression:
              expression: '0 | until(. >= 50000; (0 | until(. >= 50000; . + 1)) as $x | . + 1)'
              expectedResult: x
---
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: costly-example-com-huge-v1}
spec:
  structureDefinition:
    rootComponent:
      name: huge
      kind: {group: costly.example.com, version: v1, kind: Huge}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: '"x" * 70000000', expectedResult: x}
)";

std::shared_ptr<const definitions::Registry> Definitions() {
  static auto* registry = [] {
    auto* r = new std::shared_ptr<definitions::Registry>(
        std::make_shared<definitions::Registry>(Engine()));
    EXPECT_TRUE((*r)->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok());
    EXPECT_TRUE((*r)->AddDocuments({{"costly.yaml", kCostly}}, definitions::Origin::kFile).ok());
    EXPECT_TRUE((*r)->rejected().empty());
    return r;
  }();
  return *registry;
}

class HereSliceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    own_nice_ = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    if (own_nice_ > 12) GTEST_SKIP() << "the test runs at nice " << own_nice_;
    cluster_ = std::make_unique<FakeCluster>(Definitions());
    harness_ = std::make_unique<testing::ServiceHarness>(
        std::vector<index::Cluster*>{cluster_.get()}, Engine(),
        WorkloadMapService::Options{.pool_nice = pool_nice(), .small_inline_bytes = 32 << 10});
    ASSERT_TRUE(harness_->started());
  }

  int pool_nice() const { return own_nice_ + 7; }

  // Resolves `object` inline; notes how many engine runs it took.
  grpc::Status Resolve(const Json& object, v1::ResolveWorkloadResponse* response) {
    v1::ResolveWorkloadRequest request;
    request.mutable_inline_()->set_object_json(object.dump());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    int runs_before = Engine().runs();
    grpc::Status status = harness_->stub().ResolveWorkload(&context, request, response);
    runs_ = Engine().runs() - runs_before;
    return status;
  }

  static Json Costly(const std::string& kind) {
    return {{"apiVersion", "costly.example.com/v1"},
            {"kind", kind},
            {"metadata", {{"name", "x"}, {"namespace", "default"}, {"uid", "x-uid"}}}};
  }

  int own_nice_ = 0;
  int runs_ = 0;
  std::unique_ptr<FakeCluster> cluster_;
  std::unique_ptr<testing::ServiceHarness> harness_;
};

TEST_F(HereSliceTest, ACheapCallStaysOnGrpcsThread) {
  std::vector<Json> seed =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml")
          .value();
  const Json& jobset = seed.front();
  ASSERT_EQ(jobset["kind"], "JobSet");
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(jobset, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.workload().ref().kind(), "JobSet");
  EXPECT_EQ(runs_, 1);
  EXPECT_EQ(Engine().last_run_nice(), own_nice_);
}

// Spinning past the slice: done again on the pool, whose run meets the
// budget and words the answer.
TEST_F(HereSliceTest, ASpinningExpressionIsDoneAgainOnThePool) {
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(Costly("Spin"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("statusMappings"));
  EXPECT_THAT(status.error_message(), HasSubstr("evaluation budget of 300ms"));
  EXPECT_EQ(runs_, 2);
  EXPECT_EQ(Engine().last_run_nice(), pool_nice());
}

// Building past here_built_bytes (1 MiB): the same, though the string
// would be built in one step, with no clock read inside it. On the pool the
// evaluation has its whole memory bound (64 MiB), and meets it before the
// string is built: the answer depends on no timing (building 50 MB under
// ASan beside other tests outlasted the 300 ms budget).
TEST_F(HereSliceTest, AHugeValueIsRefusedByThePoolsRun) {
  v1::ResolveWorkloadResponse response;
  grpc::Status status = Resolve(Costly("Huge"), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("statusMappings"));
  EXPECT_THAT(status.error_message(), HasSubstr("memory limit of 64 MiB"));
  EXPECT_EQ(runs_, 2);
  EXPECT_EQ(Engine().last_run_nice(), pool_nice());
}

}  // namespace
}  // namespace wm::rpc
