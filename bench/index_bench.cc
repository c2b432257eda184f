// What the daemon pays to resolve one workload out of its cache: the seed
// JobSet with its worker Job's pods multiplied to 2,048 (as resolve_bench's
// BM_ResolveJobSet2048Pods), its pods held compact as the watch cache holds
// them, resolved by WorkloadIndex::ResolveNow. On top of the resolution
// itself this is each pod's tree rebuilt from its compact form (or taken
// from the pod tree cache), the view's answer without pods serialized, and
// its summary. /0: no pod tree cache, every pod rebuilt (a first
// resolution); /1: the default cache, which after the first iteration
// holds every pod (a workload resolved again after one of its objects
// changed).
//
//   build/bin/index_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "server/common/yaml_json.h"
#include "server/expressions/native_engine.h"
#include "server/index/testing/fake_cluster.h"

namespace wm {
namespace {

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

void BM_IndexResolveJobSet2048Pods(benchmark::State& state) {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  if (!registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok()) {
    state.SkipWithError("the catalog did not load");
    return;
  }
  index::testing::FakeCluster cluster(registry);
  index::WorkloadIndex::Options options;
  if (state.range(0) == 0) options.pod_tree_cache_bytes = 0;
  index::WorkloadIndex index(Engine(), options);
  index.AddCluster(&cluster);
  std::vector<Json> seed =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml")
          .value();
  const Json* worker_pod = nullptr;
  for (const Json& object : seed) {
    if (object["kind"] == "Pod") worker_pod = &object;
    if (object["kind"] != "Pod") cluster.Put(object);
  }
  constexpr int kPods = 2048;
  for (int i = 0; i < kPods; ++i) {
    Json pod = *worker_pod;
    pod["metadata"]["name"] = absl::StrCat("worker-pod-", i);
    pod["metadata"]["uid"] = absl::StrCat("uid-", i);
    cluster.Put(pod);
  }
  const index::WorkloadKey key{
      cluster.name(), {"jobset.x-k8s.io", "v1alpha2", "JobSet"}, "default/demo"};
  for (auto _ : state) {
    auto view = index.ResolveNow(key);
    if (!view.ok() || !(*view)->error.ok()) {
      state.SkipWithError("the workload did not resolve");
      return;
    }
    benchmark::DoNotOptimize(view);
  }
  state.counters["pods"] = kPods;
  kube::DocumentCache::Stats trees = index.pod_tree_cache_stats();
  state.counters["trees_kept"] = static_cast<double>(trees.trees);
  state.counters["bytes_per_tree"] =
      trees.trees == 0 ? 0 : static_cast<double>(trees.bytes) / static_cast<double>(trees.trees);
}
BENCHMARK(BM_IndexResolveJobSet2048Pods)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace wm

BENCHMARK_MAIN();
