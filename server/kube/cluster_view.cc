#include "server/kube/cluster_view.h"

#include "absl/container/flat_hash_set.h"

namespace wm::kube {

std::optional<ClusterView::Found> ClusterView::FindByUid(const std::string& uid) const {
  if (uid.empty()) return std::nullopt;
  for (auto& [gvk, store] : Stores()) {
    if (auto object = store->GetByUid(uid)) return Found{gvk, std::move(object)};
  }
  return std::nullopt;
}

void ClusterView::ForEachControllerOwner(const CachedObject& object,
                                         absl::FunctionRef<bool(const Found&)> visit) const {
  absl::flat_hash_set<std::string> seen = {object.uid()};
  // Keeps the object `current` points to alive once the walk has left
  // `object` (which `visit` may release, as TopOwner does).
  std::optional<Found> owner;
  const CachedObject* current = &object;
  for (int depth = 0; depth < 8; ++depth) {
    const std::string& uid = current->controller_uid();
    if (uid.empty() || !seen.insert(uid).second) return;
    std::optional<Found> found = FindByUid(uid);
    if (!found) return;
    owner = std::move(found);
    if (!visit(*owner)) return;
    current = owner->object.get();
  }
}

ClusterView::Found ClusterView::TopOwner(const Gvk& gvk,
                                         std::shared_ptr<const CachedObject> object) const {
  Found top{gvk, std::move(object)};
  ForEachControllerOwner(*top.object, [&](const Found& owner) {
    top = owner;
    return true;
  });
  return top;
}

std::vector<ClusterView::Found> ClusterView::Descendants(const std::string& uid,
                                                         int max_depth) const {
  std::vector<Found> out;
  auto stores = Stores();
  absl::flat_hash_set<std::string> seen = {uid};
  std::vector<std::string> level = {uid};
  for (int depth = 0; depth < max_depth && !level.empty(); ++depth) {
    std::vector<std::string> next;
    for (const std::string& parent : level) {
      for (const auto& [gvk, store] : stores) {
        for (auto& child : store->ListOwnedBy(parent)) {
          if (!seen.insert(child->uid()).second) continue;
          next.push_back(child->uid());
          out.push_back({gvk, std::move(child)});
        }
      }
    }
    level = std::move(next);
  }
  return out;
}

void StaticCluster::Add(const Gvk& gvk, const Json& object) {
  Add(gvk, CachedObject::FromJson(object, CachedShapeFor(gvk)));
}

void StaticCluster::Add(const Gvk& gvk, std::shared_ptr<const CachedObject> object) {
  std::shared_ptr<Store> store;
  for (auto& [held, s] : stores_) {
    if (held == gvk) store = s;
  }
  if (!store) {
    store = std::make_shared<Store>();
    stores_.emplace_back(gvk, store);
  }
  store->Apply(EventType::kAdded, std::move(object));
}

std::shared_ptr<const Store> StaticCluster::StoreFor(const Gvk& gvk) const {
  for (const auto& [held, store] : stores_) {
    if (held == gvk) return store;
  }
  return nullptr;
}

std::vector<std::pair<Gvk, std::shared_ptr<const Store>>> StaticCluster::Stores() const {
  return {stores_.begin(), stores_.end()};
}

}  // namespace wm::kube
