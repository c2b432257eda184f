#ifndef WM_SERVER_DAEMON_RPC_METRICS_H_
#define WM_SERVER_DAEMON_RPC_METRICS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/observability/metrics.h"

namespace wm::daemon {

// The daemon's metrics of finished unary calls:
// workloadmap_rpc_requests_total{method,code} and
// workloadmap_rpc_duration_seconds{method}.
//
// Observe() runs once per call, on gRPC's threads. The series of each
// declared method with code OK are looked up once, here, so that a call that
// succeeds costs a hash lookup and three atomic adds; looking them up per
// call (two label vectors built, two families' locks taken) was a visible
// part of a cached ResolveWorkload's own work (docs/benchmarks.md, "Access
// control"). Declared methods' series are therefore present, at zero, from
// the start, as Prometheus advises for labels known in advance. Other codes
// and undeclared methods take the families' lookup.
//
// Thread-safe: immutable after construction; the families are thread-safe.
class RpcMetrics {
 public:
  // Registers both families in `registry`, which must outlive this.
  // `methods`: the names calls are observed under.
  RpcMetrics(observability::Registry& registry, absl::Span<const std::string> methods);
  RpcMetrics(const RpcMetrics&) = delete;
  RpcMetrics& operator=(const RpcMetrics&) = delete;

  void Observe(absl::string_view method, absl::StatusCode code, absl::Duration latency);

 private:
  struct MethodSeries {
    observability::Counter* ok;
    observability::Histogram* latency;
  };

  observability::CounterFamily* requests_;
  observability::HistogramFamily* latency_;
  absl::flat_hash_map<std::string, MethodSeries> methods_;
};

}  // namespace wm::daemon

#endif  // WM_SERVER_DAEMON_RPC_METRICS_H_
