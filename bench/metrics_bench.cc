// What a scrape of the workload metrics costs (issue 16's target: 10,000
// workloads and 100,000 pods in <= 200 ms and <= 50 MB of extra RSS):
// copies of the seed JobSet, each with its 3 Jobs and 11 pods (the leader's
// and 5 on each worker Job: 110,000 pods for 10,000 workloads), resolved into an index, then
// written by platform::WorkloadMetrics the way /metrics does.
//
//   build/bin/metrics_bench --benchmark_min_time=1
//
// Counters: series and bytes per scrape, and the resident set the scrape
// added at its peak over the index's (rss_growth_MB).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "server/common/process_memory.h"
#include "server/common/yaml_json.h"
#include "server/expressions/native_engine.h"
#include "server/index/testing/fake_cluster.h"
#include "server/observability/exposition_writer.h"
#include "server/platform/workload_metrics.h"

namespace wm {
namespace {

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

// The seed's objects renamed for copy `i` (names, uids and owner uids).
std::vector<Json> SeedCopy(const std::vector<Json>& seed, int i) {
  std::vector<Json> out;
  const std::string suffix = absl::StrCat("-", i);
  for (Json object : seed) {
    if (object["metadata"].contains("ownerReferences")) {
      Json owners = object["metadata"]["ownerReferences"];
      for (Json& owner : owners) {
        owner["name"] = owner["name"].get<std::string>() + suffix;
        owner["uid"] = owner["uid"].get<std::string>() + suffix;
      }
      object["metadata"]["ownerReferences"] = owners;
    }
    std::string name = object["metadata"]["name"].get<std::string>() + suffix;
    object["metadata"]["name"] = name;
    object["metadata"]["uid"] = object["metadata"]["uid"].get<std::string>() + suffix;
    // The JobSet's own labels name it; pods and Jobs carry its name too.
    if (object["metadata"].contains("labels") &&
        object["metadata"]["labels"].contains("jobset.sigs.k8s.io/jobset-name")) {
      object["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] = "demo" + suffix;
    }
    out.push_back(object);
    // Four more pods beside each worker pod: 11 pods a workload.
    if (object["kind"] == "Pod" && name.find("worker") != std::string::npos) {
      for (int extra = 0; extra < 4; ++extra) {
        Json more = object;
        more["metadata"]["name"] = absl::StrCat(name, "-extra-", extra);
        more["metadata"]["uid"] =
            absl::StrCat(object["metadata"]["uid"].get<std::string>(), "-extra-", extra);
        out.push_back(more);
      }
    }
  }
  return out;
}

void BM_ScrapeWorkloadMetrics(benchmark::State& state) {
  const int workloads = static_cast<int>(state.range(0));
  auto registry = std::make_shared<definitions::Registry>(Engine());
  if (!registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok()) {
    state.SkipWithError("the catalog did not load");
    return;
  }
  index::testing::FakeCluster cluster(registry);
  index::WorkloadIndex index(Engine(), {});
  index.AddCluster(&cluster);
  index.Start();
  std::vector<Json> seed =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml")
          .value();
  size_t pods = 0;
  for (int i = 0; i < workloads; ++i) {
    for (const Json& object : SeedCopy(seed, i)) {
      pods += object["kind"] == "Pod";
      cluster.Put(index, object);
    }
  }
  index.WaitForIdle();
  platform::WorkloadMetrics metrics(index, {.max_series = 10'000'000});
  const size_t resident_before = ResidentBytes();
  size_t peak = resident_before, bytes = 0, series = 0;
  // As the daemon sends a scrape: in 64 KiB chunks to a sink (here one that
  // only counts; the daemon's queues a chunk on the connection).
  // The resident size is read every 16th chunk (the scrape's own memory,
  // its digests and buffer, lives only while it is written).
  for (auto _ : state) {
    bytes = 0;
    int chunks = 0;
    observability::ExpositionWriter writer(
        [&](absl::string_view chunk) {
          bytes += chunk.size();
          benchmark::DoNotOptimize(chunk.data());
          if (++chunks % 16 == 0) peak = std::max(peak, ResidentBytes());
          return true;
        },
        64 * 1024);
    metrics.Write(writer);
    writer.Flush();
    peak = std::max(peak, ResidentBytes());
  }
  {  // the lines, once, outside the timing
    std::string out;
    observability::ExpositionWriter writer(&out);
    metrics.Write(writer);
    for (char c : out) series += c == '\n';
  }
  index.Stop();
  state.counters["workloads"] = workloads;
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["lines"] = static_cast<double>(series);
  state.counters["MB"] = static_cast<double>(bytes) / (1 << 20);
  state.counters["rss_growth_MB"] = static_cast<double>(peak - resident_before) / (1 << 20);
}
BENCHMARK(BM_ScrapeWorkloadMetrics)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wm

BENCHMARK_MAIN();
