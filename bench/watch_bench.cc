// Watch ingestion and cache memory: realistic ~5 KB pod events framed,
// decoded into compact pods and applied to a store, on one core; and the
// memory a cached pod costs. See docs/benchmarks.md for figures and commands.

#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "server/common/process_memory.h"
#include "server/kube/store.h"
#include "server/kube/watch_stream.h"

namespace wm::kube {
namespace {

// A pod as a training operator writes it, with what the kubelet and the
// scheduler add: labels, annotations, two containers with env, mounts and
// probes, volumes, tolerations, managedFields and a full status.
Json RealisticPod(int i) {
  std::string name = absl::StrCat("llama-pretrain-worker-0-", i, "-x7k2p");
  Json env = Json::array();
  for (int e = 0; e < 12; ++e) {
    env.push_back({{"name", absl::StrCat("TRAINER_SETTING_", e)},
                   {"value", absl::StrCat("value-for-setting-", e)}});
  }
  Json container = {{"name", "trainer"},
                    {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                    {"command", {"torchrun", "--nnodes=16", "--nproc-per-node=8", "train.py"}},
                    {"env", env},
                    {"resources",
                     {{"limits", {{"nvidia.com/gpu", "8"}, {"memory", "512Gi"}}},
                      {"requests", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}}}}},
                    {"volumeMounts",
                     {{{"name", "data"}, {"mountPath", "/data"}},
                      {{"name", "kube-api-access-abcde"},
                       {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                       {"readOnly", true}}}},
                    {"readinessProbe", {{"httpGet", {{"path", "/healthz"}, {"port", 8080}}}}},
                    {"terminationMessagePath", "/dev/termination-log"},
                    {"imagePullPolicy", "IfNotPresent"}};
  Json sidecar = container;
  sidecar["name"] = "log-shipper";
  sidecar["image"] = "fluent/fluent-bit:3.0";
  sidecar["resources"] = {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}};
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"generateName", "llama-pretrain-worker-0-"},
        {"namespace", "team-research"},
        {"uid", absl::StrCat("6c1a4e2b-0d4f-4a8e-9b3c-", 100000000000 + i)},
        {"resourceVersion", std::to_string(1000000 + i)},
        {"creationTimestamp", "2026-11-30T10:00:00Z"},
        {"labels",
         {{"jobset.sigs.k8s.io/jobset-name", "llama-pretrain"},
          {"jobset.sigs.k8s.io/replicatedjob-name", "worker"},
          {"jobset.sigs.k8s.io/job-index", "0"},
          {"jobset.sigs.k8s.io/replicatedjob-replicas", "1"},
          {"batch.kubernetes.io/job-completion-index", std::to_string(i % 16)},
          {"batch.kubernetes.io/controller-uid", "0b9d3c1e-7c8a-4d55-9a7e-2f1c3b4a5d6e"},
          {"kai.scheduler/queue", "research"},
          {"app.kubernetes.io/name", "llama-pretrain"}}},
        {"annotations",
         {{"jobset.sigs.k8s.io/jobset-name", "llama-pretrain"},
          {"batch.kubernetes.io/job-completion-index", std::to_string(i % 16)},
          {"kubectl.kubernetes.io/last-applied-configuration", std::string(600, 'x')}}},
        {"ownerReferences",
         {{{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"name", "llama-pretrain-worker-0"},
           {"uid", "0b9d3c1e-7c8a-4d55-9a7e-2f1c3b4a5d6e"},
           {"controller", true},
           {"blockOwnerDeletion", true}}}},
        {"managedFields",
         {{{"manager", "kube-controller-manager"},
           {"operation", "Update"},
           {"apiVersion", "v1"},
           {"fieldsType", "FieldsV1"},
           {"fieldsV1", {{"f:metadata", {{"f:labels", {{".", Json::object()}}}}}}}}}}}},
      {"spec",
       {{"containers", {container, sidecar}},
        {"nodeName", absl::StrCat("gpu-node-", i % 512)},
        {"schedulerName", "kai-scheduler"},
        {"restartPolicy", "Never"},
        {"serviceAccountName", "default"},
        {"tolerations",
         {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
        {"volumes",
         {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "datasets"}}}},
          {{"name", "kube-api-access-abcde"},
           {"projected", {{"sources", {{{"serviceAccountToken", {{"path", "token"}}}}}}}}}}}}},
      {"status",
       {{"phase", "Running"},
        {"hostIP", "10.0.3.17"},
        {"podIP", "10.244.3.17"},
        {"startTime", "2026-11-30T10:00:05Z"},
        {"qosClass", "Burstable"},
        {"conditions",
         {{{"type", "PodReadyToStartContainers"}, {"status", "True"}},
          {{"type", "Initialized"}, {"status", "True"}},
          {{"type", "Ready"}, {"status", "True"}},
          {{"type", "ContainersReady"}, {"status", "True"}},
          {{"type", "PodScheduled"}, {"status", "True"}}}},
        {"containerStatuses",
         {{{"name", "trainer"},
           {"ready", true},
           {"restartCount", 0},
           {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
           {"imageID", "nvcr.io/nvidia/pytorch@sha256:" + std::string(64, 'a')},
           {"containerID", "containerd://" + std::string(64, 'b')},
           {"state", {{"running", {{"startedAt", "2026-11-30T10:00:09Z"}}}}}}}}}}};
  for (auto& c : pod["status"]["conditions"]) c["lastTransitionTime"] = "2026-11-30T10:00:09Z";
  return pod;
}

std::string EventLine(int i) {
  return Json{{"type", "MODIFIED"}, {"object", RealisticPod(i)}}.dump() + "\n";
}

// Bytes of 1,000 events as the socket delivers them.
const std::string& EventStream() {
  static const std::string* stream = [] {
    auto* s = new std::string;
    for (int i = 0; i < 1000; ++i) *s += EventLine(i);
    return s;
  }();
  return *stream;
}

// Framing, decoding to compact pods and applying to the store: everything
// the reflector thread does per event, from socket bytes on.
void BM_IngestPodEvents(benchmark::State& state) {
  const std::string& stream = EventStream();
  const size_t read_size = 16384;
  Store store;
  simdjson::dom::parser parser;
  int64_t events = 0;
  for (auto _ : state) {
    LineFramer framer;
    for (size_t offset = 0; offset < stream.size(); offset += read_size) {
      absl::Status status = framer.Feed(
          absl::string_view(stream).substr(offset, read_size), [&](absl::string_view line) {
            absl::StatusOr<WatchEvent> event =
                DecodeWatchEvent(line, ObjectShape::kCompactPod, parser);
            if (!event.ok()) return event.status();
            benchmark::DoNotOptimize(store.Apply(event->type, event->object));
            ++events;
            return absl::OkStatus();
          });
      if (!status.ok()) state.SkipWithError("decode failed");
    }
  }
  state.SetItemsProcessed(events);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
  state.counters["event_bytes"] = static_cast<double>(stream.size()) / 1000;
}
BENCHMARK(BM_IngestPodEvents)->Unit(benchmark::kMillisecond);

// The same events kept whole (ObjectShape::kFull, as workload objects are).
void BM_IngestFullObjects(benchmark::State& state) {
  const std::string& stream = EventStream();
  Store store;
  simdjson::dom::parser parser;
  int64_t events = 0;
  for (auto _ : state) {
    LineFramer framer;
    absl::Status status = framer.Feed(stream, [&](absl::string_view line) {
      absl::StatusOr<WatchEvent> event = DecodeWatchEvent(line, ObjectShape::kFull, parser);
      if (!event.ok()) return event.status();
      benchmark::DoNotOptimize(store.Apply(event->type, event->object));
      ++events;
      return absl::OkStatus();
    });
    if (!status.ok()) state.SkipWithError("decode failed");
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_IngestFullObjects)->Unit(benchmark::kMillisecond);

// What the index pays per pod and per resolution to hand a cached compact
// pod to the resolver: CachedObject::Document() reassembles the pod's text
// from its fragments and parses it into a tree, which the resolution frees
// when it ends (WorkloadIndex::Resolve). Compare with the resolution's own
// cost per pod (resolve_bench's BM_ResolveJobSet2048Pods).
void BM_CompactPodDocument(benchmark::State& state) {
  simdjson::dom::parser parser;
  absl::StatusOr<WatchEvent> event =
      DecodeWatchEvent(EventLine(0), ObjectShape::kCompactPod, parser);
  if (!event.ok()) {
    state.SkipWithError("decode failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(event->object->Document());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CompactPodDocument);

// Memory per cached pod: 100,000 distinct compact pods in one store,
// measured as resident-set growth and as the objects' own accounting.
void BM_MemoryPerCachedPod(benchmark::State& state) {
  const int pods = static_cast<int>(state.range(0));
  simdjson::dom::parser parser;
  double rss_per_pod = 0, accounted_per_pod = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::string> lines;
    lines.reserve(pods);
    for (int i = 0; i < pods; ++i) lines.push_back(EventLine(i));
    state.ResumeTiming();
    size_t before = ResidentBytes();
    auto store = std::make_unique<Store>();
    for (const std::string& line : lines) {
      auto event = DecodeWatchEvent(line, ObjectShape::kCompactPod, parser);
      store->Apply(EventType::kAdded, event->object);
    }
    size_t after = ResidentBytes();
    rss_per_pod = static_cast<double>(after - before) / pods;
    accounted_per_pod = static_cast<double>(store->ApproximateBytes()) / pods;
    state.PauseTiming();
    store.reset();
    lines.clear();
    state.ResumeTiming();
  }
  state.counters["rss_bytes_per_pod"] = rss_per_pod;
  state.counters["object_bytes_per_pod"] = accounted_per_pod;
}
BENCHMARK(BM_MemoryPerCachedPod)->Arg(100000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wm::kube

BENCHMARK_MAIN();
