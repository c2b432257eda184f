#include "server/daemon/rpc_metrics.h"

#include "server/common/status_code_name.h"

namespace wm::daemon {

RpcMetrics::RpcMetrics(observability::Registry& registry, absl::Span<const std::string> methods)
    : requests_(registry.AddCounter("workloadmap_rpc_requests_total",
                                    "Finished unary RPCs by method and status code.",
                                    {"method", "code"})),
      latency_(registry.AddHistogram("workloadmap_rpc_duration_seconds",
                                     "Unary RPC latency by method, in seconds.", {"method"},
                                     observability::LatencyBuckets())) {
  for (const std::string& method : methods) {
    methods_[method] = {
        .ok = &requests_->WithLabels({method, StatusCodeName(absl::StatusCode::kOk)}),
        .latency = &latency_->WithLabels({method})};
  }
}

void RpcMetrics::Observe(absl::string_view method, absl::StatusCode code, absl::Duration latency) {
  const double seconds = absl::ToDoubleSeconds(latency);
  auto it = methods_.find(method);
  if (it != methods_.end()) {
    it->second.latency->Observe(seconds);
    if (code == absl::StatusCode::kOk) {
      it->second.ok->Increment();
      return;
    }
  } else {
    latency_->WithLabels({std::string(method)}).Observe(seconds);
  }
  requests_->WithLabels({std::string(method), StatusCodeName(code)}).Increment();
}

}  // namespace wm::daemon
