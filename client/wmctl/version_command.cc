// `wmctl version`.
#include "client/wmctl/invocation.h"

namespace wm::wmctl {

int Invocation::Version() {
  out_ << "wmctl " << WM_VERSION << "\n";
  if (settings_.mode == Mode::kDaemon) {
    out_ << "mode: daemon (workloadmapd at " << settings_.connection.address << ", from "
         << settings_.mode_reason << ")\n";
    return 0;
  }
  auto connection = LoadClusterConnection(settings_.kube);
  if (!connection.ok()) {
    out_ << "mode: kubeconfig (" << settings_.mode_reason
         << "), but no usable kubeconfig: " << connection.status().message() << "\n";
    return 0;
  }
  std::string namespace_ =
      settings_.namespace_source.empty() ? connection->namespace_ : settings_.namespace_;
  out_ << "mode: kubeconfig (context " << connection->context << " at " << connection->server
       << ", namespace " << namespace_ << "; " << settings_.mode_reason << ")\n";
  return 0;
}

}  // namespace wm::wmctl
