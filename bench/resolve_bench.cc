// Full resolution (status, tree, pods, resources, gang) of the seed JobSet
// and of a RayCluster with 64 worker groups, on 1 and 2 threads sharing one
// engine. See docs/benchmarks.md for the figures and how to run it.

#include <benchmark/benchmark.h>

#include "absl/strings/str_cat.h"
#include "server/common/yaml_json.h"
#include "server/definitions/parse.h"
#include "server/expressions/jq_engine.h"
#include "server/resolution/resolver.h"

namespace wm {
namespace {

expressions::Engine& BenchEngine() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 2}).value().release();
  return *engine;
}

std::shared_ptr<const definitions::CompiledDefinition> Load(const std::string& path) {
  auto parsed = definitions::LoadDefinitionFiles(path).value();
  return definitions::CompileDefinition(*parsed.at(0).definition, BenchEngine()).value();
}

struct Workload {
  std::shared_ptr<const definitions::CompiledDefinition> def;
  std::vector<Json> docs;
  resolution::WorkloadInput input;

  void Index() {
    input = {&docs[0]};
    for (size_t i = 1; i < docs.size(); ++i) {
      (docs[i]["kind"] == "Pod" ? input.pods : input.owners).push_back(&docs[i]);
    }
  }
};

const Workload& SeedJobSet() {
  static Workload* w = [] {
    auto* w = new Workload;
    w->def = Load(std::string(WM_SOURCE_DIR) + "/catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml");
    w->docs =
        ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml")
            .value();
    w->Index();
    return w;
  }();
  return *w;
}

// Upstream's RayCluster definition (a conformance input) over a cluster with
// a head and 64 worker groups of 4 GPU workers each.
const Workload& RayCluster64() {
  static Workload* w = [] {
    auto* w = new Workload;
    w->def = Load(std::string(WM_SHARED_DIR) +
                  "/conformance/upstream-catalog/ray-io-raycluster-v1.yaml");
    Json groups = Json::array();
    for (int g = 0; g < 64; ++g) {
      groups.push_back(
          {{"groupName", absl::StrCat("group-", g)},
           {"replicas", 4},
           {"minReplicas", 1},
           {"maxReplicas", 8},
           {"template",
            {{"spec",
              {{"containers",
                {{{"name", "ray-worker"},
                  {"image", "rayproject/ray:2.9.0"},
                  {"resources",
                   {{"limits",
                     {{"nvidia.com/gpu", "4"}, {"cpu", "8"}, {"memory", "64Gi"}}}}}}}}}}}}});
    }
    Json cluster = {
        {"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"metadata", {{"name", "big"}, {"namespace", "ml"}, {"uid", "ray-uid"}}},
        {"spec",
         {{"headGroupSpec",
           {{"template",
             {{"spec",
               {{"containers",
                 {{{"name", "ray-head"}, {"resources", {{"requests", {{"cpu", "4"}}}}}}}}}}}}}},
          {"workerGroupSpecs", groups}}},
        {"status", {{"state", "ready"}, {"readyWorkerReplicas", 256}}}};
    w->docs.push_back(cluster);
    w->Index();
    return w;
  }();
  return *w;
}

void Resolve(benchmark::State& state, const Workload& w) {
  for (auto _ : state) {
    auto resolved = resolution::ResolveWorkload(*w.def, BenchEngine(), w.input);
    if (!resolved.ok()) state.SkipWithError(std::string(resolved.status().message()).c_str());
    benchmark::DoNotOptimize(resolved);
  }
}

void BM_ResolveSeedJobSet(benchmark::State& state) { Resolve(state, SeedJobSet()); }
void BM_ResolveRayCluster64(benchmark::State& state) { Resolve(state, RayCluster64()); }

// One round trip to a jq worker: the floor under every evaluation.
void BM_EvaluateOneExpression(benchmark::State& state) {
  static auto program = BenchEngine().Compile({".spec.replicatedJobs[].name"}).value();
  const Json& doc = SeedJobSet().docs[0];
  for (auto _ : state) {
    (void)BenchEngine().Run([&](expressions::Session& s) {
      benchmark::DoNotOptimize(s.Evaluate(*program, 0, s.Load(doc)));
      return absl::OkStatus();
    });
  }
}

BENCHMARK(BM_ResolveSeedJobSet)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ResolveRayCluster64)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EvaluateOneExpression)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace wm

BENCHMARK_MAIN();
