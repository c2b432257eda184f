// Which workloads a caller may see in ListWorkloads and WatchWorkloads.
// Internal to the rpc layer.
#ifndef WM_SERVER_RPC_INTERNAL_LIST_ACCESS_H_
#define WM_SERVER_RPC_INTERNAL_LIST_ACCESS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "server/access/access_reviewer.h"
#include "server/access/identity.h"
#include "server/index/workload_index.h"

namespace wm::rpc::internal {

// A listing shows a workload when its caller may `list` the workload's
// resource in the workload's namespace, as `kubectl get` would let it: a
// grant in every namespace (a ClusterRole bound cluster-wide) shows every
// workload of that kind, a grant in some namespaces shows those. Each
// cluster's own apiserver decides, through its AccessReviewer (whose cache
// makes repeated questions free); this remembers its answers for one
// listing, asking once per kind cluster-wide and, only when that is denied,
// once per namespace.
//
// Not thread-safe: one per call (a watch serializes its use).
class ListAccess {
 public:
  // Null `caller`, or a cluster without a reviewer: everything is shown.
  // `reviewers` and `index` outlive this.
  ListAccess(access::SharedIdentity caller,
             const std::map<std::string, access::AccessReviewer*>& reviewers,
             const index::WorkloadIndex& index);

  // True when listing needs no authorization at all.
  bool unrestricted() const { return caller_ == nullptr || reviewers_.empty(); }

  // Whether the caller may see `view`. With `may_ask` false only decisions
  // already known are used, and nullopt says one is not (ask on a thread
  // that may block). Unavailable when the apiserver could not be asked.
  absl::StatusOr<std::optional<bool>> MaySee(const index::WorkloadView& view, bool may_ask);

  // True once a kind that some view had was denied in every namespace: the
  // answer is limited to namespaces (ListWorkloadsResponse.filtered).
  bool filtered() const { return filtered_; }

  // Forgets what this listing was told, so that the next MaySee asks the
  // reviewers again (whose caches expire): how a watch follows RBAC changes.
  void Forget() { decisions_.clear(); }

 private:
  // cluster, group, resource, namespace ("" for every namespace).
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  absl::StatusOr<std::optional<bool>> Decide(access::AccessReviewer& reviewer, const Key& key,
                                             bool may_ask);

  const access::SharedIdentity caller_;
  const std::map<std::string, access::AccessReviewer*>& reviewers_;
  const index::WorkloadIndex& index_;
  std::map<Key, bool> decisions_;
  bool filtered_ = false;
};

}  // namespace wm::rpc::internal

#endif  // WM_SERVER_RPC_INTERNAL_LIST_ACCESS_H_
