// The hostile-input suite: the real workloadmapd, serving the seed snapshot
// and the hostile definitions (definitions.yaml), gets malformed, oversized,
// deeply nested, non-UTF-8, out-of-range and adversarial requests on every
// RPC (cases.cc) and on its HTTP port. Each must get its expected answer
// within its bound, and after each the daemon still answers health and
// resolves the seed JobSet. One more test runs every case against one
// daemon and bounds the growth of its resident memory.

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.pb.h"
#include "gtest/gtest.h"
#include "integration_tests/daemon/daemon_process.h"
#include "integration_tests/hostile/cases.h"
#include "integration_tests/hostile/raw_clients.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::hostile {
namespace {

namespace v1 = workloadmap::v1;
using ::testing::Contains;
using ::testing::HasSubstr;

// An error names the field at fault and its bound; it does not echo the
// input (a client refuses trailers over 8 KiB: it would get
// RESOURCE_EXHAUSTED instead of the error).
constexpr size_t kMaxErrorMessageBytes = 4096;
// How long a health check or the seed's resolve may take after a case.
constexpr absl::Duration kServingBound = absl::Seconds(2);
// The daemon's resident memory after every case, over its resident memory
// before (after a warm-up of ordinary calls). See docs: measured growth
// was well under this; the bound leaves room for allocator retention of the
// largest requests (17 MiB refused, 12.5 MB accepted) without hiding a leak
// of the cases' inputs, which total several hundred MiB.
constexpr int64_t kMaxRssGrowthBytes = int64_t{64} << 20;
// Connections the slow-client test keeps open (the HTTP server serves 16
// at once) and how soon /healthz must still answer meanwhile: the server's
// 5 s io_timeout plus a margin.
constexpr int kIdleConnections = 64;
constexpr absl::Duration kHealthzUnderIdleBound = absl::Seconds(6);

std::string SourcePath(const std::string& relative) {
  return std::string(WM_SOURCE_DIR) + "/" + relative;
}

// The seed's running JobSet default/demo, as JSON.
const std::string& SeedJobSet() {
  static const std::string* jobset = [] {
    auto seed = ReadYamlFile(SourcePath("integration_tests/seed/cluster-state.yaml"));
    for (const Json& o : seed.value()) {
      if (o["kind"] == "JobSet") return new std::string(o.dump());
    }
    return new std::string("{}");
  }();
  return *jobset;
}

const std::vector<RpcCase>& AllRpcCases() {
  static const auto* cases = new std::vector<RpcCase>(RpcCases(SeedJobSet()));
  return *cases;
}

const std::vector<HttpCase>& AllHttpCases() {
  static const auto* cases = new std::vector<HttpCase>(HttpCases());
  return *cases;
}

std::string Abbreviated(const std::string& text) {
  return text.size() <= 300 ? text
                            : absl::StrCat(text.substr(0, 300), "... (", text.size(), " bytes)");
}

// VmRSS of /proc/PID/status, in bytes; -1 if unreadable.
int64_t ResidentBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "VmRSS:")) continue;
    std::string kb(absl::StripAsciiWhitespace(absl::StripSuffix(line.substr(6), "kB")));
    int64_t value = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(kb), &value)) return value * 1024;
  }
  return -1;
}

// One daemon per test binary run (ctest runs each test in its own process,
// so each gets a fresh one: a case that kills the daemon fails alone).
class HostileDaemon {
 public:
  static HostileDaemon& Get() {
    static HostileDaemon* daemon = new HostileDaemon();
    return *daemon;
  }

  // Starts the daemon if it is not running (the first time, or after a
  // case killed it).
  void EnsureRunning() {
    if (process_ && process_->Running()) return;
    namespace fs = std::filesystem;
    std::string snapshot = absl::StrCat(::testing::TempDir(), "/hostile-", getpid(), "/snapshot");
    fs::create_directories(snapshot);
    fs::copy_file(SourcePath("integration_tests/seed/cluster-state.yaml"),
                  snapshot + "/cluster-state.yaml", fs::copy_options::overwrite_existing);
    process_ = std::make_unique<testing::DaemonProcess>(
        std::vector<std::string>{"--snapshot", snapshot, "--definitions",
                                 SourcePath(kHostileDefinitionsFile), "--shutdown-grace", "0s"});
    absl::Status started = process_->Start();
    ASSERT_TRUE(started.ok()) << started;
    channel_ = grpc::CreateChannel(process_->address(), grpc::InsecureChannelCredentials());
  }

  testing::DaemonProcess& process() { return *process_; }
  const std::shared_ptr<grpc::Channel>& channel() { return channel_; }
  bool alive() { return process_ && process_->Running(); }

 private:
  std::unique_ptr<testing::DaemonProcess> process_;
  std::shared_ptr<grpc::Channel> channel_;
};

class HostileTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(daemon().EnsureRunning()); }

  static HostileDaemon& daemon() { return HostileDaemon::Get(); }

  // The daemon answers health SERVING and resolves the seed JobSet
  // correctly, each within kServingBound; `after` names what came before.
  static void ExpectServing(const std::string& after) {
    SCOPED_TRACE("after " + after);
    ASSERT_TRUE(daemon().alive()) << "the daemon died; its log:\n"
                                  << Abbreviated(daemon().process().Log());
    RpcResult health =
        CallRaw(daemon().channel(), "/grpc.health.v1.Health/Check", "", kServingBound);
    ASSERT_TRUE(health.status.ok()) << health.status.error_message();
    grpc::health::v1::HealthCheckResponse serving;
    ASSERT_EQ(health.responses.size(), 1u);
    ASSERT_TRUE(serving.ParseFromString(health.responses[0]));
    EXPECT_EQ(serving.status(), grpc::health::v1::HealthCheckResponse::SERVING);

    v1::ResolveWorkloadRequest request;
    request.mutable_ref()->set_kind("JobSet");
    request.mutable_ref()->set_namespace_("default");
    request.mutable_ref()->set_name("demo");
    RpcResult resolved = CallRaw(daemon().channel(), "/workloadmap.v1.WorkloadMap/ResolveWorkload",
                                 request.SerializeAsString(), kServingBound);
    ASSERT_TRUE(resolved.status.ok()) << resolved.status.error_message();
    v1::ResolveWorkloadResponse response;
    ASSERT_TRUE(response.ParseFromString(resolved.responses.at(0)));
    EXPECT_EQ(response.workload().ref().name(), "demo");
    EXPECT_EQ(response.workload().resources().quantities().at("nvidia.com/gpu"), 12);
  }

  static void Run(const RpcCase& c) {
    SCOPED_TRACE(c.name);
    // Our deadline is past the bound, so a late answer is measured, not
    // mistaken for the daemon's DEADLINE_EXCEEDED.
    RpcResult result = CallRaw(daemon().channel(), "/workloadmap.v1.WorkloadMap/" + c.method,
                               c.request, c.bound + absl::Seconds(5));
    const std::string& message = result.status.error_message();
    EXPECT_THAT(c.codes, Contains(result.status.error_code()))
        << "code " << result.status.error_code() << ": " << Abbreviated(message);
    EXPECT_LE(result.elapsed, c.bound) << "answered after " << result.elapsed;
    EXPECT_LE(message.size(), kMaxErrorMessageBytes) << Abbreviated(message);
    if (!c.mention.empty()) {
      std::string answer = message;
      for (const std::string& r : result.responses) answer += r;
      EXPECT_THAT(answer, HasSubstr(c.mention)) << Abbreviated(answer);
    }
  }

  static void Run(const HttpCase& c) {
    SCOPED_TRACE(c.name);
    HttpResult result =
        ExchangeHttp(daemon().process().metrics_port(), c.request, c.bound + absl::Seconds(5));
    EXPECT_THAT(c.statuses, Contains(result.status)) << Abbreviated(result.reply);
    EXPECT_LE(result.elapsed, c.bound) << "answered after " << result.elapsed;
  }

  static void ExpectHealthz(const std::string& after, absl::Duration bound) {
    SCOPED_TRACE("after " + after);
    HttpResult healthz = ExchangeHttp(daemon().process().metrics_port(),
                                      "GET /healthz HTTP/1.1\r\n\r\n", bound + absl::Seconds(5));
    EXPECT_EQ(healthz.status, 200) << Abbreviated(healthz.reply);
    EXPECT_LE(healthz.elapsed, bound) << "/healthz answered after " << healthz.elapsed;
  }
};

// ---- One test per case -------------------------------------------------------

std::string TestName(const std::string& case_name) {
  std::string name = absl::StrReplaceAll(case_name, {{"/", "_"}, {"-", "_"}, {".", "_"}});
  return name;
}

class RpcCaseTest : public HostileTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(RpcCaseTest, AnswersWithinItsBoundAndTheDaemonKeepsServing) {
  const RpcCase& c = AllRpcCases()[GetParam()];
  Run(c);
  ExpectServing(c.name);
}

INSTANTIATE_TEST_SUITE_P(Hostile, RpcCaseTest, ::testing::Range<size_t>(0, AllRpcCases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return TestName(AllRpcCases()[info.param].name);
                         });

class HttpCaseTest : public HostileTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(HttpCaseTest, AnswersWithinItsBoundAndTheDaemonKeepsServing) {
  const HttpCase& c = AllHttpCases()[GetParam()];
  Run(c);
  ExpectHealthz(c.name, kServingBound);
  ExpectServing(c.name);
}

INSTANTIATE_TEST_SUITE_P(Hostile, HttpCaseTest, ::testing::Range<size_t>(0, AllHttpCases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return TestName(AllHttpCases()[info.param].name);
                         });

// Clients that connect and then send nothing, or half a request line, must
// not keep /healthz (the kubelet's liveness probe) from answering.
TEST_F(HostileTest, IdleConnectionsDoNotStarveHealthz) {
  std::vector<std::unique_ptr<IdleConnection>> idle;
  for (int i = 0; i < kIdleConnections; ++i) {
    idle.push_back(std::make_unique<IdleConnection>(daemon().process().metrics_port(),
                                                    i % 2 == 0 ? "" : "GET /healthz HTT"));
    ASSERT_TRUE(idle.back()->connected());
  }
  ExpectHealthz("idle connections", kHealthzUnderIdleBound);
  ExpectServing("idle connections");
  idle.clear();
  ExpectHealthz("idle connections closed", kServingBound);
}

// ---- The whole suite against one daemon: memory -------------------------------

// Ordinary calls of every method, so that what the first use of each
// allocates for good (compiled definitions, gRPC's per-method state,
// worker processes' pipes) is in the baseline.
void WarmUp(HostileDaemon& daemon) {
  v1::ListWorkloadsRequest list;
  v1::MutatePodSpecsRequest mutate;
  mutate.mutable_ref()->set_kind("JobSet");
  mutate.mutable_ref()->set_namespace_("default");
  mutate.mutable_ref()->set_name("demo");
  mutate.add_changes()->set_scheduler_name("kai-scheduler");
  v1::GetGangInstructionsRequest gang;
  *gang.mutable_workload() = mutate.ref();
  v1::ResolveWorkloadRequest inline_resolve;
  inline_resolve.mutable_inline_()->set_object_json(SeedJobSet());
  v1::ValidateDefinitionRequest validate;
  std::ifstream yaml(SourcePath("catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml"));
  std::stringstream text;
  text << yaml.rdbuf();
  validate.set_definition_yaml(text.str());
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"ListWorkloads", list.SerializeAsString()},
      {"MutatePodSpecs", mutate.SerializeAsString()},
      {"GetGangInstructions", gang.SerializeAsString()},
      {"ResolveWorkload", inline_resolve.SerializeAsString()},
      {"ListDefinitions", ""},
      {"ValidateDefinition", validate.SerializeAsString()}};
  for (int round = 0; round < 3; ++round) {
    for (const auto& [method, request] : calls) {
      RpcResult r = CallRaw(daemon.channel(), "/workloadmap.v1.WorkloadMap/" + method, request,
                            absl::Seconds(10));
      EXPECT_TRUE(r.status.ok()) << method << ": " << r.status.error_message();
    }
    ExchangeHttp(daemon.process().metrics_port(), "GET /metrics HTTP/1.1\r\n\r\n",
                 absl::Seconds(5));
  }
}

// A case that kills the daemon fails (in ExpectServing); the daemon is then
// restarted and the baseline taken again, so that the bound still covers
// the cases after it.
TEST_F(HostileTest, EveryCaseAgainstOneDaemonKeepsItsMemoryBounded) {
  WarmUp(daemon());
  int64_t before = ResidentBytes(daemon().process().pid());
  ASSERT_GT(before, 0);
  for (const RpcCase& c : AllRpcCases()) {
    Run(c);
    ExpectServing(c.name);
    if (!daemon().alive()) {
      ASSERT_NO_FATAL_FAILURE(daemon().EnsureRunning());
      WarmUp(daemon());
      before = ResidentBytes(daemon().process().pid());
    }
  }
  for (const HttpCase& c : AllHttpCases()) Run(c);
  ExpectServing("every case");
  const int64_t after = ResidentBytes(daemon().process().pid());
  ASSERT_GT(after, 0) << "the daemon died";
  std::cout << "daemon RSS before " << (before >> 20) << " MiB, after " << (after >> 20)
            << " MiB (growth " << ((after - before) >> 10) << " KiB)\n";
  EXPECT_LE(after - before, kMaxRssGrowthBytes)
      << "before " << before << " bytes, after " << after << " bytes";
}

}  // namespace
}  // namespace wm::hostile
