// Initial sync of many pods from the real kube-apiserver of the testbed:
// creates the pods once (namespace wm-sync-bench), then times an informer
// from start to synced, with WatchList and with paginated lists.
//
//   integration_tests/testbed/testbed.sh start /tmp/tb
//   WM_TESTBED_DIR=/tmp/tb build/bin/sync_bench [--pods=100000]
//
// Figures in docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/common/process_memory.h"
#include "server/kube/auth/kubeconfig.h"
#include "server/kube/informer.h"

namespace wm::kube {
namespace {

constexpr char kNamespace[] = "wm-sync-bench";
int g_pods = 100000;

const ApiClient& Client() {
  static const ApiClient* client = [] {
    const char* dir = std::getenv("WM_TESTBED_DIR");
    if (dir == nullptr) {
      std::fprintf(stderr, "sync_bench: set WM_TESTBED_DIR to a started testbed\n");
      std::exit(2);
    }
    KubeconfigOptions options;
    options.paths = {std::string(dir) + "/kubeconfig"};
    return new ApiClient(LoadKubeconfig(options).value());
  }();
  return *client;
}

long Post(const std::string& path, const Json& body) {
  HttpRequest request;
  request.method = "POST";
  request.path = path;
  request.content_type = "application/json";
  request.body = body.dump();
  absl::StatusOr<HttpResponse> response = Client().Do(request);
  return response.ok() ? response->status : -1;
}

int64_t ExistingPods() {
  HttpRequest request;
  request.path = absl::StrCat("/api/v1/namespaces/", kNamespace, "/pods?limit=1");
  auto response = Client().Do(request);
  if (!response.ok() || response->status != 200) return 0;
  Json list = Json::parse(response->body);
  return static_cast<int64_t>(list["items"].size()) +
         list["metadata"].value("remainingItemCount", int64_t{0});
}

// Creates pods until there are g_pods, on 8 connections.
void EnsurePods() {
  Post("/api/v1/namespaces",
       Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}});
  int64_t existing = ExistingPods();
  if (existing >= g_pods) return;
  std::fprintf(stderr, "sync_bench: creating %lld pods\n",
               static_cast<long long>(g_pods - existing));
  absl::Time start = absl::Now();
  std::atomic<int64_t> next{existing};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int64_t i; (i = next++) < g_pods;) {
        Json pod = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata",
                     {{"name", absl::StrCat("worker-", i)},
                      {"labels",
                       {{"jobset.sigs.k8s.io/jobset-name", "bench"},
                        {"jobset.sigs.k8s.io/replicatedjob-name", "worker"},
                        {"batch.kubernetes.io/job-completion-index", std::to_string(i % 64)}}}}},
                    {"spec",
                     {{"nodeName", absl::StrCat("gpu-node-", i % 1000)},
                      {"containers",
                       {{{"name", "trainer"},
                         {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                         {"command", {"torchrun", "train.py"}},
                         {"resources",
                          {{"limits", {{"nvidia.com/gpu", "8"}}},
                           {"requests", {{"cpu", "32"}, {"memory", "256Gi"}}}}}}}}}}};
        Post(absl::StrCat("/api/v1/namespaces/", kNamespace, "/pods"), pod);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::fprintf(stderr, "sync_bench: created in %s\n",
               absl::FormatDuration(absl::Now() - start).c_str());
}

// CPU seconds used by this process (all threads): the client's share.
double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

void BM_InitialSync(benchmark::State& state) {
  EnsurePods();
  bool watch_list = state.range(0) == 1;
  size_t objects = 0;
  double rss_per_pod = 0, client_cpu = 0;
  for (auto _ : state) {
    size_t before = ResidentBytes();
    double cpu_before = ProcessCpuSeconds();
    ReflectorOptions options;
    options.namespace_ = kNamespace;
    options.shape = ObjectShape::kCompactPod;
    options.use_watch_list = watch_list;
    Informer informer(Client(), {"", "v1", "Pod", "pods", true, {"list", "watch"}}, options);
    informer.Start();
    while (!informer.HasSynced()) absl::SleepFor(absl::Milliseconds(5));
    state.PauseTiming();
    client_cpu = ProcessCpuSeconds() - cpu_before;
    objects = informer.store().size();
    rss_per_pod = static_cast<double>(ResidentBytes() - before) / std::max<size_t>(objects, 1);
    informer.Stop();
    state.ResumeTiming();
  }
  state.counters["pods"] = static_cast<double>(objects);
  state.counters["rss_bytes_per_pod"] = rss_per_pod;
  state.counters["client_cpu_s"] = client_cpu;
  state.SetLabel(watch_list ? "WatchList" : "paginated LIST (500/page)");
}
BENCHMARK(BM_InitialSync)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace wm::kube

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--pods=", 0) == 0) (void)absl::SimpleAtoi(arg.substr(7), &wm::kube::g_pods);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
