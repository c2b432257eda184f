#ifndef WM_SERVER_RPC_KIND_NAMES_H_
#define WM_SERVER_RPC_KIND_NAMES_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/index/cluster.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::rpc {

// The kinds a request may name in one cluster (every kind the cluster holds
// and every root kind of its definitions) with the names kubectl accepts
// for them: the kind ("JobSet"), the plural resource ("jobsets") and the
// singular ("jobset"). Immutable; built by KindNamesCache.
class KindNames {
 public:
  static std::shared_ptr<const KindNames> Build(const index::Cluster& cluster);

  // The kind `ref` names by kind or resource, narrowed by its group and
  // version when set. Of several versions of one kind, the held one.
  // InvalidArgument when nothing is named or several groups match,
  // FailedPrecondition when no kind matches; messages start with `field`.
  absl::StatusOr<Gvk> Resolve(const workloadmap::v1::ObjectRef& ref, absl::string_view field) const;
  // True when `filter` names `gvk`: "Kind", "group/Kind", "plural",
  // "singular", "plural.group" or "singular.group" (ListWorkloads kinds).
  bool Matches(const Gvk& gvk, absl::string_view filter) const;
  // True when `filter` names some kind of this cluster, as Matches reads it.
  bool Names(absl::string_view filter) const;
  // True while `cluster` has the same definitions and held kinds as when
  // these names were built.
  bool Current(const index::Cluster& cluster) const;

 private:
  struct Kind {
    Gvk gvk;
    std::string plural, singular;
    bool held = false;
  };
  const Kind* Find(const Gvk& gvk) const;

  std::string cluster_name_;
  std::shared_ptr<const definitions::Registry> registry_;
  uint64_t kinds_generation_ = 0;
  std::vector<Kind> kinds_;  // sorted by gvk
  // Indexes into kinds_, ascending, by kind and by plural or singular.
  absl::flat_hash_map<std::string, std::vector<size_t>> by_kind_, by_resource_;
};

// The KindNames of each cluster, built on first use and again when they
// stop being current. Requests name kinds on every call; building the names
// walks every definition and store, so it is done once per change instead.
class KindNamesCache {
 public:
  std::shared_ptr<const KindNames> For(const index::Cluster& cluster);

 private:
  std::mutex mu_;
  absl::flat_hash_map<const index::Cluster*, std::shared_ptr<const KindNames>> names_;
};

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_KIND_NAMES_H_
