// Full resolution (status, tree, pods, resources, gang) of the seed JobSet,
// of a RayCluster with 64 worker groups and of a JobSet with 2,048 worker
// pods, on 1 and 2 threads sharing one engine; each with the libjq worker
// engine (/0) and the native one (/1). Natively, LeaderWorkerSets of 32
// groups of 8 pods and of 512 groups of 4 (the alpha gang form). Also one
// expression, and compiling the whole catalog. Every resolution is checked
// to be whole first. See docs/benchmarks.md for the figures and how to run
// it.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "server/common/yaml_json.h"
#include "server/definitions/parse.h"
#include "server/expressions/jq_engine.h"
#include "server/expressions/native_engine.h"
#include "server/resolution/resolver.h"

namespace wm {
namespace {

enum EngineKind { kLibjq = 0, kNative = 1 };

expressions::Engine& BenchEngine(int kind) {
  static expressions::Engine* libjq = expressions::NewJqEngine({.workers = 2}).value().release();
  static expressions::Engine* native = expressions::NewNativeEngine().value().release();
  return kind == kNative ? *native : *libjq;
}

struct Compiled {
  std::shared_ptr<const definitions::CompiledDefinition> by_engine[2];
};

Compiled Load(const std::string& path) {
  auto parsed = definitions::LoadDefinitionFiles(path).value();
  Compiled compiled;
  for (int kind : {kLibjq, kNative}) {
    compiled.by_engine[kind] =
        definitions::CompileDefinition(*parsed.at(0).definition, BenchEngine(kind)).value();
  }
  return compiled;
}

struct Workload {
  Compiled def;
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

// Our catalog's RayCluster definition over a cluster with a head and 64
// worker groups of 4 GPU workers each.
const Workload& RayCluster64() {
  static Workload* w = [] {
    auto* w = new Workload;
    w->def = Load(std::string(WM_SOURCE_DIR) + "/catalog/ray-io-raycluster-v1.yaml");
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

// The seed JobSet with its worker Job's pods multiplied to `pods` (each a
// copy of the seed's worker pod with its own name and index), to measure
// the cost per pod on top of the workload's own.
const Workload& JobSetWithPods(int pods) {
  static std::map<int, Workload*>* cache = new std::map<int, Workload*>;
  auto& slot = (*cache)[pods];
  if (slot != nullptr) return *slot;
  auto* w = new Workload;
  const Workload& seed = SeedJobSet();
  w->def = seed.def;
  const Json* worker_pod = nullptr;
  for (const Json& doc : seed.docs) {
    if (doc["kind"] == "Pod") worker_pod = &doc;
    if (doc["kind"] != "Pod") w->docs.push_back(doc);
  }
  for (int i = 0; i < pods; ++i) {
    Json pod = *worker_pod;
    pod["metadata"]["name"] = absl::StrCat("worker-pod-", i);
    pod["metadata"]["uid"] = absl::StrCat("uid-", i);
    w->docs.push_back(std::move(pod));
  }
  w->Index();
  slot = w;
  return *w;
}

// Our catalog's LeaderWorkerSet definition over `groups` groups of `size`
// running pods (a leader and its workers): the alpha (`podGroups`) gang
// form, one PodGroup per group.
const Workload& LeaderWorkerSet(int groups, int size) {
  static std::map<std::pair<int, int>, Workload*>* cache =
      new std::map<std::pair<int, int>, Workload*>;
  Workload*& slot = (*cache)[{groups, size}];
  if (slot == nullptr) {
    slot = [&] {
      auto* w = new Workload;
      w->def = Load(std::string(WM_SOURCE_DIR) +
                    "/catalog/leaderworkerset-x-k8s-io-leaderworkerset-v1.yaml");
      Json pod_spec = {{"containers",
                        {{{"name", "main"},
                          {"resources",
                           {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}}},
                            {"limits", {{"nvidia.com/gpu", "8"}}}}}}}}};
      w->docs.push_back(
          {{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
           {"kind", "LeaderWorkerSet"},
           {"metadata", {{"name", "serve"}, {"namespace", "ml"}, {"uid", "lws-uid"}}},
           {"spec",
            {{"replicas", groups},
             {"leaderWorkerTemplate", {{"size", size}, {"workerTemplate", {{"spec", pod_spec}}}}}}},
           {"status",
            {{"readyReplicas", groups},
             {"conditions", {{{"type", "Available"}, {"status", "True"}}}}}}});
      for (int g = 0; g < groups; ++g) {
        for (int i = 0; i < size; ++i) {
          std::string leader = absl::StrCat("serve-", g);
          Json pod = {
              {"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", i == 0 ? leader : absl::StrCat(leader, "-", i)},
                {"namespace", "ml"},
                {"uid", absl::StrCat("pod-", g, "-", i)},
                {"labels",
                 {{"leaderworkerset.sigs.k8s.io/name", "serve"},
                  {"leaderworkerset.sigs.k8s.io/group-index", absl::StrCat(g)},
                  {"leaderworkerset.sigs.k8s.io/worker-index", absl::StrCat(i)}}},
                {"ownerReferences",
                 {{{"kind", "LeaderWorkerSet"}, {"uid", "lws-uid"}, {"controller", true}}}}}},
              {"spec", pod_spec},
              {"status",
               {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
          if (i != 0) {
            pod["metadata"]["annotations"]["leaderworkerset.sigs.k8s.io/leader-name"] = leader;
          }
          pod["spec"]["nodeName"] = absl::StrCat("node-", g);
          w->docs.push_back(std::move(pod));
        }
      }
      w->Index();
      return w;
    }();
  }
  return *slot;
}

// What keeps `workload` from being a whole answer (a component that
// failed, a warning, a pod without a gang), or "": a benchmark of a partial
// answer would measure an error path.
std::string Problem(const workloadmap::v1::ResolvedWorkload& workload) {
  if (std::vector<std::string> errors = resolution::ComponentErrors(workload); !errors.empty()) {
    return errors[0];
  }
  if (!workload.warnings().empty()) return workload.warnings(0);
  for (const auto& assignment : workload.gang().assignments()) {
    if (!assignment.error().empty()) return assignment.pod() + ": " + assignment.error();
  }
  return "";
}

void Resolve(benchmark::State& state, const Workload& w) {
  int kind = static_cast<int>(state.range(0));
  state.SetLabel(kind == kNative ? "native" : "libjq");
  auto first = resolution::ResolveWorkload(*w.def.by_engine[kind], BenchEngine(kind), w.input);
  std::string problem = first.ok() ? Problem(*first) : std::string(first.status().message());
  if (!problem.empty()) {
    state.SkipWithError(("not a whole answer: " + problem).c_str());
    return;
  }
  for (auto _ : state) {
    auto resolved = resolution::ResolveWorkload(*w.def.by_engine[kind], BenchEngine(kind), w.input);
    if (!resolved.ok()) state.SkipWithError(std::string(resolved.status().message()).c_str());
    benchmark::DoNotOptimize(resolved);
  }
}

void BM_ResolveSeedJobSet(benchmark::State& state) { Resolve(state, SeedJobSet()); }
void BM_ResolveRayCluster64(benchmark::State& state) { Resolve(state, RayCluster64()); }
void BM_ResolveJobSet2048Pods(benchmark::State& state) { Resolve(state, JobSetWithPods(2048)); }
// range(1): groups, range(2): pods per group.
void BM_ResolveLeaderWorkerSet(benchmark::State& state) {
  Resolve(state,
          LeaderWorkerSet(static_cast<int>(state.range(1)), static_cast<int>(state.range(2))));
}

// One evaluation: for libjq a round trip to a worker, the floor under
// every evaluation; natively the interpreter's own cost.
void BM_EvaluateOneExpression(benchmark::State& state) {
  int kind = static_cast<int>(state.range(0));
  state.SetLabel(kind == kNative ? "native" : "libjq");
  static std::shared_ptr<const expressions::Program> programs[2];
  static std::once_flag once;
  std::call_once(once, [] {
    for (int k : {kLibjq, kNative}) {
      programs[k] = BenchEngine(k).Compile({".spec.replicatedJobs[].name"}).value();
    }
  });
  const Json& doc = SeedJobSet().docs[0];
  for (auto _ : state) {
    (void)BenchEngine(kind).Run([&](expressions::Session& s) {
      benchmark::DoNotOptimize(s.Evaluate(*programs[kind], 0, s.Load(doc)));
      return absl::OkStatus();
    });
  }
}

// Each expression of our JobSet definition over the seed JobSet, natively:
// where a seed resolution's evaluation time goes, expression by expression
// (the label names the definition field); the definition has 15. Pod
// selector expressions run on the JobSet here, not on a pod; they are
// there for their cost alone.
void BM_EvaluateJobSetExpression(benchmark::State& state) {
  const Workload& w = SeedJobSet();
  const definitions::CompiledDefinition& def = *w.def.by_engine[kNative];
  const size_t index = static_cast<size_t>(state.range(0));
  if (index >= def.field_paths.size()) {
    state.SkipWithError("no such expression");
    return;
  }
  state.SetLabel(def.field_paths[index]);
  for (auto _ : state) {
    (void)BenchEngine(kNative).Run([&](expressions::Session& s) {
      benchmark::DoNotOptimize(s.EvaluateViews(*def.program, index, s.Load(w.docs[0])));
      return absl::OkStatus();
    });
  }
}

// Compiling every definition of the catalog (what the registry does at
// load), natively.
void BM_CompileCatalog(benchmark::State& state) {
  std::vector<definitions::ParsedDefinition> parsed;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(WM_SOURCE_DIR) + "/catalog")) {
    if (entry.path().extension() != ".yaml") continue;
    auto loaded = definitions::LoadDefinitionFiles(entry.path().string()).value();
    for (auto& p : loaded) parsed.push_back(std::move(p));
  }
  for (auto _ : state) {
    for (const auto& p : parsed) {
      benchmark::DoNotOptimize(definitions::CompileDefinition(*p.definition, BenchEngine(kNative)));
    }
  }
  state.counters["definitions"] = static_cast<double>(parsed.size());
}

BENCHMARK(BM_ResolveSeedJobSet)
    ->Arg(kLibjq)
    ->Arg(kNative)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ResolveRayCluster64)
    ->Arg(kLibjq)
    ->Arg(kNative)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ResolveJobSet2048Pods)
    ->Arg(kNative)
    ->Threads(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ResolveLeaderWorkerSet)
    ->Args({kNative, 32, 8})
    ->Args({kNative, 512, 4})
    ->Threads(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EvaluateOneExpression)
    ->Arg(kLibjq)
    ->Arg(kNative)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);
BENCHMARK(BM_EvaluateJobSetExpression)->DenseRange(0, 14)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_CompileCatalog)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wm

BENCHMARK_MAIN();
