#include "server/platform/workload_metrics.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/yaml_json.h"
#include "server/expressions/native_engine.h"
#include "server/index/testing/fake_cluster.h"
#include "server/observability/exposition_writer.h"

namespace wm::platform {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::wm::index::testing::FakeCluster;

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

// The catalog, and a definition of example.com/v1 Widget whose status path
// fails on every widget (a workload that cannot be resolved).
std::shared_ptr<const definitions::Registry> Definitions() {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  EXPECT_TRUE(registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok());
  EXPECT_TRUE(registry
                  ->AddDocuments({{"widgets.yaml", R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: widgets}
spec:
  structureDefinition:
    rootComponent:
      name: widget
      kind: {group: example.com, version: v1, kind: Widget}
      statusDefinition:
        phaseDefinition: {path: '.status.parts[]'}
        statusMappings: {running: [{byPhase: Running}]}
)"}},
                                 definitions::Origin::kFile)
                  .ok());
  return registry;
}

// The scrape's samples by series ("name{labels}" as written) and its HELP
// and TYPE lines.
struct Scrape {
  std::map<std::string, double> samples;
  std::vector<std::string> comments;
};

Scrape Parse(const std::string& text) {
  Scrape scrape;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (line.front() == '#') {
      scrape.comments.emplace_back(line);
      continue;
    }
    size_t space = line.rfind(' ');
    EXPECT_NE(space, absl::string_view::npos) << line;
    EXPECT_TRUE(scrape.samples
                    .emplace(line.substr(0, space), std::stod(std::string(line.substr(space + 1))))
                    .second)
        << "series written twice: " << line;
  }
  return scrape;
}

constexpr char kDemo[] =
    "cluster=\"test\",namespace=\"default\",kind=\"JobSet\",group=\"jobset.x-k8s.io\",name="
    "\"demo\"";

std::string Series(const std::string& family, const std::string& labels = "") {
  return family + "{" + kDemo + (labels.empty() ? "" : "," + labels) + "}";
}

class WorkloadMetricsTest : public ::testing::Test {
 protected:
  WorkloadMetricsTest() : cluster_(Definitions()), index_(Engine(), {}) {
    index_.AddCluster(&cluster_);
    index_.Start();
    absl::Status seeded = index::testing::PutSeed(cluster_, index_);
    EXPECT_TRUE(seeded.ok()) << seeded;
  }
  ~WorkloadMetricsTest() override { index_.Stop(); }

  std::string Write(const WorkloadMetrics& metrics) {
    std::string out;
    observability::ExpositionWriter writer(&out);
    metrics.Write(writer);
    return out;
  }

  FakeCluster cluster_;
  index::WorkloadIndex index_;
};

TEST_F(WorkloadMetricsTest, TheSeedJobSetAsDashboardsNeedIt) {
  absl::Time now = absl::Now() + absl::Seconds(90);
  WorkloadMetrics metrics(index_, {.clock = [now] { return now; }});
  Scrape scrape = Parse(Write(metrics));
  const auto& s = scrape.samples;
  EXPECT_EQ(s.at("workloadmap_workload_info{" + std::string(kDemo) +
                 ",uid=\"a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f\","
                 "definition=\"jobset-x-k8s-io-jobset-v1alpha2\"}"),
            1)
      << Write(metrics);
  // The phase: Running, and a 0 for every other status the JobSet
  // definition maps, and Undefined.
  EXPECT_EQ(s.at(Series("workloadmap_workload_phase", "phase=\"Running\"")), 1);
  EXPECT_EQ(s.at(Series("workloadmap_workload_phase", "phase=\"Failed\"")), 0);
  EXPECT_EQ(s.at(Series("workloadmap_workload_phase", "phase=\"Undefined\"")), 0);
  EXPECT_EQ(s.at(Series("workloadmap_workload_status", "status=\"Running\"")), 1);
  EXPECT_EQ(s.count(Series("workloadmap_workload_status", "status=\"Failed\"")), 0u);
  // leader x1 and worker x2, 4 GPUs each: one component, two instances.
  EXPECT_EQ(s.at(Series("workloadmap_component_replicas",
                        "component=\"replicatedjob\",state=\"desired\"")),
            3);
  EXPECT_EQ(
      s.at(Series("workloadmap_component_replicas", "component=\"replicatedjob\",state=\"ready\"")),
      3);
  EXPECT_EQ(
      s.at(Series("workloadmap_workload_resource_requests",
                  "component=\"replicatedjob\",resource=\"nvidia_com_gpu\",unit=\"integer\"")),
      12);
  EXPECT_EQ(
      s.at(Series("workloadmap_workload_resource_requests_current",
                  "component=\"replicatedjob\",resource=\"nvidia_com_gpu\",unit=\"integer\"")),
      12);
  // Every pod joins to its workload, component and instance.
  EXPECT_EQ(s.at("workloadmap_pod_workload_info{cluster=\"test\",namespace=\"default\","
                 "pod=\"demo-worker-1-0-x1w\",uid=\"c4000000-0000-4000-8000-000000000004\","
                 "workload_kind=\"JobSet\",workload_name=\"demo\",component=\"replicatedjob\","
                 "instance=\"worker\"}"),
            1);
  int pods = 0;
  for (const auto& [series, value] : s)
    pods += series.rfind("workloadmap_pod_workload_info{", 0) == 0;
  EXPECT_EQ(pods, 3);
  // Freshness: the last change and its age at the scrape.
  double changed = s.at(Series("workloadmap_workload_last_change_timestamp_seconds"));
  EXPECT_NEAR(changed, absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()), 60);
  EXPECT_NEAR(s.at(Series("workloadmap_workload_view_age_seconds")),
              absl::ToDoubleSeconds(now - absl::UnixEpoch()) - changed, 0.001);
  EXPECT_EQ(s.at("workloadmap_workload_series_dropped_total"), 0);
  EXPECT_THAT(scrape.comments,
              Contains("# TYPE workloadmap_workload_series_dropped_total counter"));
  EXPECT_THAT(scrape.comments, Contains("# TYPE workloadmap_workload_phase gauge"));
}

TEST_F(WorkloadMetricsTest, CpuInCoresAndMemoryInBytes) {
  // A Deployment-less pod of its own: core-pod-v1 covers Pods.
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "solo", "namespace": "ml", "uid": "solo-uid"},
    "spec": {"containers": [{"name": "c", "resources": {"requests":
      {"cpu": "1500m", "memory": "2Gi", "example.com/fpga": "2"}}}]},
    "status": {"phase": "Pending"}})");
  cluster_.Put(index_, pod);
  index_.WaitForIdle();
  Scrape scrape = Parse(Write(WorkloadMetrics(index_, {})));
  const std::string solo =
      "cluster=\"test\",namespace=\"ml\",kind=\"Pod\",group=\"\",name=\"solo\"";
  auto requests = [&](const std::string& labels) {
    return "workloadmap_workload_resource_requests{" + solo + "," + labels + "}";
  };
  const auto& s = scrape.samples;
  EXPECT_EQ(s.at(requests("component=\"pod\",resource=\"cpu\",unit=\"core\"")), 1.5);
  EXPECT_EQ(s.at(requests("component=\"pod\",resource=\"memory\",unit=\"byte\"")), 2147483648.0);
  EXPECT_EQ(s.at(requests("component=\"pod\",resource=\"example_com_fpga\",unit=\"integer\"")), 2);
  // Pending: nothing requested by running pods.
  for (const auto& [series, value] : s) {
    EXPECT_THAT(series, Not(HasSubstr("requests_current{" + solo))) << series;
  }
}

TEST_F(WorkloadMetricsTest, AWorkloadThatCannotBeResolvedHasItsInfoAndAnErrorOnly) {
  cluster_.Put(index_, Json::parse(R"({"apiVersion": "example.com/v1", "kind": "Widget",
    "metadata": {"name": "w", "namespace": "default", "uid": "w-uid"},
    "status": {"parts": 3}})"));
  index_.WaitForIdle();
  const std::string text = Write(WorkloadMetrics(index_, {}));
  SCOPED_TRACE(text);
  Scrape scrape = Parse(text);
  const std::string w =
      "cluster=\"test\",namespace=\"default\",kind=\"Widget\",group=\"example.com\",name=\"w\"";
  EXPECT_EQ(scrape.samples.at("workloadmap_workload_info{" + w +
                              ",uid=\"w-uid\",definition=\"widgets\"}"),
            1);
  EXPECT_EQ(scrape.samples.at("workloadmap_workload_resolution_error{" + w + "}"), 1);
  for (const auto& [series, value] : scrape.samples) {
    if (series.find(w) == std::string::npos) continue;
    EXPECT_THAT(series,
                ::testing::AnyOf(::testing::StartsWith("workloadmap_workload_info{"),
                                 ::testing::StartsWith("workloadmap_workload_resolution_error{"),
                                 ::testing::StartsWith("workloadmap_workload_last_change"),
                                 ::testing::StartsWith("workloadmap_workload_view_age")))
        << series;
  }
}

TEST_F(WorkloadMetricsTest, AWorkloadThatGoesTakesItsSeriesWithIt) {
  WorkloadMetrics metrics(index_, {});
  ASSERT_THAT(Write(metrics), HasSubstr("name=\"demo\""));
  absl::StatusOr<std::vector<Json>> seed =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml");
  ASSERT_TRUE(seed.ok()) << seed.status();
  for (const Json& object : *seed) {
    if (object["kind"] == "JobSet") cluster_.Delete(index_, object);
  }
  index_.WaitForIdle();
  std::string after = Write(metrics);
  EXPECT_THAT(after, Not(HasSubstr("name=\"demo\"")));
  EXPECT_THAT(after, Not(HasSubstr("workload_name=\"demo\"")));
}

TEST_F(WorkloadMetricsTest, SeriesOverTheLimitAreLeftOutAndCounted) {
  const size_t all = Parse(Write(WorkloadMetrics(index_, {}))).samples.size() - 1;  // less dropped
  ASSERT_GT(all, 10u);
  WorkloadMetrics limited(index_, {.max_series = 4});
  Scrape first = Parse(Write(limited));
  EXPECT_EQ(first.samples.size(), 4u + 1);
  EXPECT_EQ(first.samples.at("workloadmap_workload_series_dropped_total"), all - 4);
  // The info series come first.
  EXPECT_EQ(first.samples.count("workloadmap_workload_info{" + std::string(kDemo) +
                                ",uid=\"a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f\","
                                "definition=\"jobset-x-k8s-io-jobset-v1alpha2\"}"),
            1u);
  // A counter: it adds up over scrapes.
  EXPECT_EQ(Parse(Write(limited)).samples.at("workloadmap_workload_series_dropped_total"),
            2.0 * (all - 4));
  EXPECT_EQ(limited.dropped_series(), 2 * (all - 4));
}

}  // namespace
}  // namespace wm::platform
