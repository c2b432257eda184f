#ifndef WM_SERVER_PLATFORM_WORKLOAD_METRICS_H_
#define WM_SERVER_PLATFORM_WORKLOAD_METRICS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/time/time.h"
#include "server/index/workload_index.h"
#include "server/observability/exposition_writer.h"

namespace wm::platform {

// Workload metrics in Prometheus' conventions and kube-state-metrics' style,
// computed at each scrape from the index's resolved views: no call to an
// apiserver and no expression, so a scrape costs a walk over the views. A
// workload that goes has no series at the next scrape.
//
// Every workload series carries W = cluster, namespace, kind, group, name;
// the uid and definition are on the info series only (join on W):
//   workloadmap_workload_info{W, uid, definition} 1
//   workloadmap_workload_phase{W, phase}: 1 for the workload's phase (its
//     first matched status in the format's fixed order, or Undefined), 0 for
//     each other status its definition maps and for Undefined, so a change
//     of phase is a clean step
//   workloadmap_workload_status{W, status} 1 for each matched status
//   workloadmap_component_replicas{W, component, state} for state desired,
//     current and ready, summed over the component's instances
//   workloadmap_workload_resource_requests{W, component, resource, unit}:
//     what the component's own pods request at desired scale (a child
//     component is a component of its own, so a sum over components is the
//     workload's total); resource named as kube-state-metrics names it
//     ("nvidia_com_gpu"), unit "core" for cpu, "byte" for memory, storage
//     and hugepages, "integer" for the rest
//   workloadmap_workload_resource_requests_current{...}: the same, of the
//     component's Running pods
//   workloadmap_pod_workload_info{cluster, namespace, pod, uid,
//     workload_kind, workload_name, component, instance} 1: joins pod-level
//     series (DCGM's GPU utilization, cAdvisor's CPU) to their workload
//   workloadmap_workload_last_change_timestamp_seconds{W}: when its resolved
//     state last changed; workloadmap_workload_view_age_seconds{W}: how long
//     ago, at the scrape
//   workloadmap_workload_resolution_error{W} 1: it could not be resolved
//     (then only this and the info series)
//   workloadmap_workload_series_dropped_total: series left out over the
//     limit, summed over scrapes
// Thread-safe.
class WorkloadMetrics {
 public:
  struct Options {
    // The series of the families above that one scrape may hold; past it
    // the rest are left out, in family order (the pod series first), and
    // counted. Bounds a scrape's size with a cluster's size.
    size_t max_series = 500000;
    // The time source of the ages; null: absl::Now.
    std::function<absl::Time()> clock;
  };

  // REQUIRES: `index` outlives this.
  WorkloadMetrics(const index::WorkloadIndex& index, Options options);

  // Writes the families (an ExpositionWriter exporter).
  void Write(observability::ExpositionWriter& writer) const;

  uint64_t dropped_series() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  const index::WorkloadIndex& index_;
  const Options options_;
  mutable std::atomic<uint64_t> dropped_{0};
};

}  // namespace wm::platform

#endif  // WM_SERVER_PLATFORM_WORKLOAD_METRICS_H_
