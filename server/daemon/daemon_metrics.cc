// A Daemon's metric families and their collectors.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "server/common/heap.h"
#include "server/common/process_memory.h"
#include "server/daemon/daemon.h"
#include "server/daemon/log.h"
#include "server/daemon/rpc_metrics.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::daemon {
namespace {

// The unary methods of our service, named as its observer names them.
std::vector<std::string> UnaryMethods() {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          workloadmap::v1::WorkloadMap::service_full_name());
  std::vector<std::string> methods;
  for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* method = service->method(i);
    if (!method->client_streaming() && !method->server_streaming()) {
      methods.push_back(method->name());
    }
  }
  return methods;
}

}  // namespace

void Daemon::AddMetrics() {
  rpc_metrics_ = std::make_unique<RpcMetrics>(metrics_, UnaryMethods());
  auto per_kind = [this](auto value) {
    return [this, value]() {
      std::vector<observability::Sample> samples;
      for (const auto& cluster : live_) {
        for (const kube::KindStatus& s : cluster->Status()) {
          samples.push_back({{cluster->name(), s.gvk.ToString()}, value(s)});
        }
      }
      return samples;
    };
  };
  metrics_.AddGaugeCallback(
      "workloadmap_cache_objects", "Objects in the watch cache by cluster and kind.",
      {"cluster", "kind"},
      per_kind([](const kube::KindStatus& s) { return static_cast<double>(s.objects); }));
  metrics_.AddGaugeCallback(
      "workloadmap_cache_synced", "1 when the kind's initial list is in the cache.",
      {"cluster", "kind"},
      per_kind([](const kube::KindStatus& s) { return s.health.has_synced ? 1.0 : 0.0; }));
  metrics_.AddCounterCallback(
      "workloadmap_cache_lists_total", "Complete lists and relists by cluster and kind.",
      {"cluster", "kind"},
      per_kind([](const kube::KindStatus& s) { return static_cast<double>(s.health.lists); }));
  metrics_.AddCounterCallback("workloadmap_cache_relists_expired_total",
                              "Relists because the resourceVersion expired (410 Gone).",
                              {"cluster", "kind"}, per_kind([](const kube::KindStatus& s) {
                                return static_cast<double>(s.health.relists_410);
                              }));
  metrics_.AddCounterCallback("workloadmap_cache_watch_restarts_total",
                              "Watches reopened after the first.", {"cluster", "kind"},
                              per_kind([](const kube::KindStatus& s) {
                                return static_cast<double>(s.health.watch_restarts);
                              }));
  metrics_.AddGaugeCallback("workloadmap_definition_errors",
                            "Definitions rejected (catalog, files and cluster Kartas).",
                            {"cluster"}, [this] {
                              std::vector<observability::Sample> samples;
                              for (index::Cluster* c : index_->clusters()) {
                                auto registry = c->definitions();
                                double n = c->rejected_definitions().size() +
                                           (registry ? registry->rejected().size() : 0);
                                samples.push_back({{c->name()}, n});
                              }
                              return samples;
                            });
  metrics_.AddGaugeCallback(
      "workloadmap_workloads", "Resolved workloads held by the index.", {}, [this] {
        return std::vector<observability::Sample>{{{}, static_cast<double>(index_->List().size())}};
      });
  metrics_.AddCounterCallback(
      "workloadmap_resolutions_total", "Workload resolutions by the index.", {"result"}, [this] {
        auto c = index_->counters();
        return std::vector<observability::Sample>{
            {{"ok"}, static_cast<double>(c.resolutions - c.resolution_errors)},
            {{"error"}, static_cast<double>(c.resolution_errors)}};
      });
  metrics_.AddCounterCallback(
      "workloadmap_pod_tree_cache_lookups_total",
      "Pods of large workloads whose tree a resolution found kept (hit) or rebuilt (miss).",
      {"result"}, [this] {
        kube::DocumentCache::Stats s = index_->pod_tree_cache_stats();
        return std::vector<observability::Sample>{{{"hit"}, static_cast<double>(s.hits)},
                                                  {{"miss"}, static_cast<double>(s.misses)}};
      });
  metrics_.AddGaugeCallback("workloadmap_pod_tree_cache_bytes",
                            "Memory the kept pod trees take, about (at most --pod-tree-cache).", {},
                            [this] {
                              return std::vector<observability::Sample>{
                                  {{}, static_cast<double>(index_->pod_tree_cache_stats().bytes)}};
                            });
  authentications_ = metrics_.AddCounter(
      "workloadmap_authentications_total",
      "Callers authenticated (code OK) or refused, decided from a cache or by the apiserver.",
      {"code", "source"});
  authorizations_ = metrics_.AddCounter(
      "workloadmap_authorizations_total",
      "Calls authorized (code OK) or denied, decided from a cache or by the apiserver.",
      {"code", "source"});
  for (int cached : {0, 1}) {
    const char* source = cached ? "cache" : "apiserver";
    authenticated_[cached] = &authentications_->WithLabels({"OK", source});
    authorized_[cached] = &authorizations_->WithLabels({"OK", source});
  }
  metrics_.AddCounterCallback(
      "workloadmap_access_cache_lookups_total",
      "Lookups in the caches of token reviews (cache=token) and access reviews (cache=access).",
      {"cache", "result"}, [this] {
        std::vector<observability::Sample> samples;
        if (tokens_ == nullptr) return samples;
        auto token = tokens_->cache_stats();
        uint64_t access_hits = 0, access_misses = 0;
        for (const auto& reviewer : access_reviewers_) {
          auto stats = reviewer->cache_stats();
          access_hits += stats.hits;
          access_misses += stats.misses;
        }
        samples.push_back({{"token", "hit"}, static_cast<double>(token.hits)});
        samples.push_back({{"token", "miss"}, static_cast<double>(token.misses)});
        samples.push_back({{"access", "hit"}, static_cast<double>(access_hits)});
        samples.push_back({{"access", "miss"}, static_cast<double>(access_misses)});
        return samples;
      });
  metrics_.AddCounterCallback(
      "workloadmap_caller_limit_refusals_total",
      "Calls and watches refused because their caller was over --caller-rate or "
      "--caller-max-watches.",
      {}, [this] {
        return std::vector<observability::Sample>{
            {{}, caller_limits_ ? static_cast<double>(caller_limits_->refused()) : 0.0}};
      });
  if (elector_) {
    metrics_.AddGaugeCallback(
        "workloadmap_leader",
        "1 while this replica holds the leader Lease (--leader-elect) and may write, else 0.",
        {"lease", "identity"}, [this] {
          return std::vector<observability::Sample>{
              {{lease_, elector_->identity()}, elector_->IsLeader() ? 1.0 : 0.0}};
        });
    metrics_.AddCounterCallback(
        "workloadmap_leader_acquisitions_total", "Times this replica started leading.",
        {"lease", "identity"}, [this] {
          return std::vector<observability::Sample>{
              {{lease_, elector_->identity()}, static_cast<double>(elector_->times_led())}};
        });
  }
  if (!karta_controllers_.empty()) {
    metrics_.AddCounterCallback(
        "workloadmap_karta_operator_writes_total",
        "Writes of the Karta operator (on the leader): write=labels, status or event.",
        {"cluster", "write"}, [this] {
          std::vector<observability::Sample> samples;
          for (size_t i = 0; i < karta_controllers_.size(); ++i) {
            auto counts = karta_controllers_[i]->counts();
            const std::string& cluster = live_[i]->name();
            samples.push_back({{cluster, "labels"}, static_cast<double>(counts.label_writes)});
            samples.push_back({{cluster, "status"}, static_cast<double>(counts.status_writes)});
            samples.push_back({{cluster, "event"}, static_cast<double>(counts.events)});
          }
          return samples;
        });
    metrics_.AddCounterCallback(
        "workloadmap_karta_operator_failures_total",
        "Karta reconciles that failed (retried with backoff; the log says why).", {"cluster"},
        [this] {
          std::vector<observability::Sample> samples;
          for (size_t i = 0; i < karta_controllers_.size(); ++i) {
            samples.push_back({{live_[i]->name()},
                               static_cast<double>(karta_controllers_[i]->counts().failures)});
          }
          return samples;
        });
  }
  if (!pod_group_controllers_.empty()) {
    metrics_.AddCounterCallback(
        "workloadmap_pod_group_writes_total",
        "Writes of the PodGroup role (on the leader): write=create or update (a PodGroup), "
        "pod (a pod put into its group).",
        {"cluster", "write"}, [this] {
          std::vector<observability::Sample> samples;
          for (size_t i = 0; i < pod_group_controllers_.size(); ++i) {
            auto counts = pod_group_controllers_[i]->counts();
            const std::string& cluster = live_[i]->name();
            samples.push_back({{cluster, "create"}, static_cast<double>(counts.creates)});
            samples.push_back({{cluster, "update"}, static_cast<double>(counts.updates)});
            samples.push_back({{cluster, "pod"}, static_cast<double>(counts.pod_patches)});
          }
          return samples;
        });
    metrics_.AddCounterCallback(
        "workloadmap_pod_group_failures_total",
        "PodGroup reconciles that failed (retried with backoff; the log says why).", {"cluster"},
        [this] {
          std::vector<observability::Sample> samples;
          for (size_t i = 0; i < pod_group_controllers_.size(); ++i) {
            samples.push_back({{live_[i]->name()},
                               static_cast<double>(pod_group_controllers_[i]->counts().failures)});
          }
          return samples;
        });
  }
  // Memory: what the kernel counts against the limit, and the allocator's
  // account of its part, so that an operator can tell live data from
  // freed pages not yet returned and from what is not heap at all.
  metrics_.AddGaugeCallback(
      "process_resident_memory_bytes", "Resident memory size in bytes.", {}, [] {
        return std::vector<observability::Sample>{{{}, static_cast<double>(ResidentBytes())}};
      });
  if (ReadHeapStats().has_value()) {
    metrics_.AddGaugeCallback(
        "workloadmap_heap_bytes",
        "The allocator's (jemalloc's) own account of the heap: allocated (live allocations, "
        "thread_cached included), thread_cached (freed objects kept by threads for reuse), "
        "active (the pages holding allocations), dirty (freed pages not yet returned), "
        "metadata, and resident (active, dirty and resident metadata pages).",
        {"state"}, [] {
          std::vector<observability::Sample> samples;
          if (std::optional<HeapStats> heap = ReadHeapStats()) {
            samples = {{{"allocated"}, static_cast<double>(heap->allocated)},
                       {{"thread_cached"}, static_cast<double>(heap->thread_cached)},
                       {{"active"}, static_cast<double>(heap->active)},
                       {{"dirty"}, static_cast<double>(heap->dirty)},
                       {{"metadata"}, static_cast<double>(heap->metadata)},
                       {{"resident"}, static_cast<double>(heap->resident)}};
          }
          return samples;
        });
  }
  metrics_.AddGaugeCallback("workloadmap_ready", "1 once the initial sync is resolved.", {},
                            [this] {
                              return std::vector<observability::Sample>{{{}, ready_ ? 1.0 : 0.0}};
                            });
  if (config_.workload_metrics_max_series > 0) {
    workload_metrics_ = std::make_unique<platform::WorkloadMetrics>(
        *index_, platform::WorkloadMetrics::Options{
                     .max_series = static_cast<size_t>(config_.workload_metrics_max_series)});
    metrics_.AddExporter(
        [this](observability::ExpositionWriter& writer) { workload_metrics_->Write(writer); });
  }
}

}  // namespace wm::daemon
