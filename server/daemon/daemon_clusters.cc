// The clusters a Daemon serves and the definitions each starts from.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog/catalog.h"
#include "server/daemon/daemon.h"
#include "server/daemon/log.h"
#include "server/kube/auth/kubeconfig.h"

namespace wm::daemon {
namespace {

// The kubeconfig contexts to serve, each with its connection.
absl::StatusOr<std::vector<std::pair<std::string, kube::ClusterConnection>>> Connections(
    const Config& config) {
  std::vector<std::pair<std::string, kube::ClusterConnection>> out;
  if (config.in_cluster) {
    auto connection = kube::InClusterConnection();
    if (!connection.ok()) return connection.status();
    out.emplace_back("in-cluster", *std::move(connection));
    return out;
  }
  kube::KubeconfigOptions options;
  if (!config.kubeconfig.empty()) options.paths = {config.kubeconfig};
  std::vector<std::string> contexts = config.contexts;
  if (contexts.empty()) {
    auto current = kube::KubeconfigCurrentContext(options);
    if (!current.ok()) return current.status();
    if (current->empty()) {
      return absl::FailedPreconditionError(
          "the kubeconfig has no current-context: pass --context, --in-cluster or --snapshot");
    }
    contexts.push_back(*current);
  }
  for (const std::string& context : contexts) {
    options.context = context;
    auto connection = kube::LoadKubeconfig(options);
    if (!connection.ok()) {
      return absl::Status(connection.status().code(),
                          absl::StrCat("context ", context, ": ", connection.status().message()));
    }
    out.emplace_back(context, *std::move(connection));
  }
  return out;
}

}  // namespace

absl::Status Daemon::LoadBase(definitions::Registry& registry) const {
  if (config_.builtin_catalog) {
    if (absl::Status s = registry.AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
        !s.ok()) {
      return s;
    }
  }
  for (const std::string& path : config_.definitions) {
    if (absl::Status s = registry.AddPath(path); !s.ok()) return s;
  }
  for (const auto& r : registry.rejected()) {
    std::vector<std::string> errors;
    for (const auto& f : r.findings) {
      if (f.is_error()) errors.push_back(f.ToString());
    }
    Log(LogLevel::kWarn, "definition rejected",
        {{"definition", r.name}, {"source", r.source}, {"errors", absl::StrJoin(errors, "; ")}});
  }
  return absl::OkStatus();
}

absl::Status Daemon::StartClusters() {
  if (!config_.snapshot.empty()) {
    auto registry = std::make_shared<definitions::Registry>(*engine_);
    if (absl::Status s = LoadBase(*registry); !s.ok()) return s;
    auto snapshot = index::SnapshotCluster::Load(config_.snapshot, std::move(registry));
    if (!snapshot.ok()) return snapshot.status();
    snapshot_ = *std::move(snapshot);
    index_->AddCluster(snapshot_.get());
    Log(LogLevel::kInfo, "serving a snapshot",
        {{"directory", config_.snapshot}, {"objects", std::to_string(snapshot_->size())}});
    return absl::OkStatus();
  }
  auto connections = Connections(config_);
  if (!connections.ok()) return connections.status();
  for (auto& [name, connection] : *connections) {
    index::LiveCluster::Options options;
    options.cache.namespace_ = config_.namespace_;
    options.cache.label_selector = config_.label_selector;
    options.cluster_definitions = config_.cluster_definitions;
    options.observed_kinds = controllers::PodGroupController::KindsToWatch(PodGroupOptions());
    live_.push_back(std::make_unique<index::LiveCluster>(
        name, std::move(connection), *engine_,
        [this](definitions::Registry& registry) { return LoadBase(registry); }, options));
    index_->AddCluster(live_.back().get());
  }
  return absl::OkStatus();
}

}  // namespace wm::daemon
