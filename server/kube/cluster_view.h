#ifndef WM_SERVER_KUBE_CLUSTER_VIEW_H_
#define WM_SERVER_KUBE_CLUSTER_VIEW_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "server/common/gvk.h"
#include "server/kube/store.h"

namespace wm::kube {

// Read access to the objects of one cluster, by kind: what resolution needs
// from a cluster, whether the objects come from watches (ClusterCache) or
// from manifests on disk (StaticCluster). Safe from many threads.
class ClusterView {
 public:
  struct Found {
    Gvk gvk;
    std::shared_ptr<const CachedObject> object;
  };

  virtual ~ClusterView() = default;

  // The store of a kind, or nullptr when the kind is not held. The store
  // stays valid while held.
  virtual std::shared_ptr<const Store> StoreFor(const Gvk& gvk) const = 0;
  // True when the kind's objects are complete (its initial list is in).
  virtual bool HasSynced(const Gvk& gvk) const = 0;
  // Every held kind with its store.
  virtual std::vector<std::pair<Gvk, std::shared_ptr<const Store>>> Stores() const = 0;
  // Changes whenever a kind starts or stops being held (not when objects
  // change), so that what callers derive from the held kinds can be cached.
  virtual uint64_t KindsGeneration() const = 0;

  // An object of any held kind by UID, with its kind; null when unknown.
  std::optional<Found> FindByUid(const std::string& uid) const;
  // Calls `visit` with each controller owner of `object` among the held
  // objects, nearest first, until `visit` returns false or the chain ends:
  // no controller, an owner not held, a cycle, or 8 steps. Computed on
  // demand from the UID indexes, so an owner that arrives after its
  // children is taken into account at once.
  void ForEachControllerOwner(const CachedObject& object,
                              absl::FunctionRef<bool(const Found&)> visit) const;
  // The top of `object`'s controller chain: the last owner
  // ForEachControllerOwner visits, or the object itself when it has none.
  Found TopOwner(const Gvk& gvk, std::shared_ptr<const CachedObject> object) const;
  // Every held object below `uid` through ownerReferences (controller or
  // not), breadth first, each once: a workload's Jobs, their pods, ...
  std::vector<Found> Descendants(const std::string& uid, int max_depth = 8) const;
};

// A cluster frozen in memory: the objects of manifests (`--snapshot DIR`,
// tests). Every kind it holds counts as synced.
class StaticCluster : public ClusterView {
 public:
  // Adds an object of kind `gvk`, in CachedShapeFor(gvk).
  void Add(const Gvk& gvk, const Json& object);
  // Adds an object already decoded in CachedShapeFor(gvk) (decoding, the
  // costly part, may then run on other threads).
  void Add(const Gvk& gvk, std::shared_ptr<const CachedObject> object);

  std::shared_ptr<const Store> StoreFor(const Gvk& gvk) const override;
  bool HasSynced(const Gvk& gvk) const override { return StoreFor(gvk) != nullptr; }
  std::vector<std::pair<Gvk, std::shared_ptr<const Store>>> Stores() const override;
  uint64_t KindsGeneration() const override { return stores_.size(); }

 private:
  std::vector<std::pair<Gvk, std::shared_ptr<Store>>> stores_;
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_CLUSTER_VIEW_H_
