#include "server/rpc/internal/list_access.h"

#include <utility>

namespace wm::rpc::internal {

ListAccess::ListAccess(access::SharedIdentity caller,
                       const std::map<std::string, access::AccessReviewer*>& reviewers,
                       const index::WorkloadIndex& index)
    : caller_(std::move(caller)), reviewers_(reviewers), index_(index) {}

absl::StatusOr<std::optional<bool>> ListAccess::Decide(access::AccessReviewer& reviewer,
                                                       const Key& key, bool may_ask) {
  if (auto known = decisions_.find(key); known != decisions_.end()) return known->second;
  access::ResourceAttributes what;
  what.verb = "list";
  std::tie(std::ignore, what.group, what.resource, what.namespace_) = key;
  std::optional<access::Decision> decision = reviewer.Cached(*caller_, what);
  if (!decision && !may_ask) return std::nullopt;
  if (!decision) {
    absl::StatusOr<access::Decision> asked = reviewer.Review(*caller_, what);
    if (!asked.ok()) return asked.status();
    decision = *std::move(asked);
  }
  decisions_[key] = decision->allowed;
  return decision->allowed;
}

absl::StatusOr<std::optional<bool>> ListAccess::MaySee(const index::WorkloadView& view,
                                                       bool may_ask) {
  if (caller_ == nullptr) return true;
  auto reviewer = reviewers_.find(view.id.cluster);
  if (reviewer == reviewers_.end() || reviewer->second == nullptr) return true;
  const index::Cluster* cluster = index_.FindCluster(view.id.cluster);
  std::string resource = cluster == nullptr ? "" : cluster->Resource(view.id.gvk);
  if (resource.empty()) {
    // A kind RBAC cannot name cannot be granted: hidden.
    filtered_ = true;
    return false;
  }
  Key everywhere{view.id.cluster, view.id.gvk.group, resource, ""};
  absl::StatusOr<std::optional<bool>> cluster_wide = Decide(*reviewer->second, everywhere, may_ask);
  if (!cluster_wide.ok() || !cluster_wide->has_value() || **cluster_wide) return cluster_wide;
  filtered_ = true;
  if (view.namespace_.empty()) return false;  // cluster-scoped: only a cluster-wide grant
  return Decide(*reviewer->second, {view.id.cluster, view.id.gvk.group, resource, view.namespace_},
                may_ask);
}

}  // namespace wm::rpc::internal
