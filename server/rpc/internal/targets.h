// What a request names (a workload by cluster, kind, namespace and name) and
// how the service finds it: in the cache, in the index's published views, or
// resolved on the spot. Internal to the rpc layer.
#ifndef WM_SERVER_RPC_INTERNAL_TARGETS_H_
#define WM_SERVER_RPC_INTERNAL_TARGETS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/access/access_reviewer.h"
#include "server/definitions/compiled_definition.h"
#include "server/index/cluster.h"
#include "server/index/workload_index.h"
#include "server/kube/object.h"
#include "server/rpc/kind_names.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::rpc::internal {

absl::StatusOr<index::Cluster*> PickCluster(const index::WorkloadIndex& index,
                                            const std::string& name);

std::string NamespaceOf(const workloadmap::v1::ObjectRef& ref);

struct Target {
  index::Cluster* cluster = nullptr;
  Gvk gvk;
  std::string key;
};

// A referenced object of any watched kind, looked up in the cache.
absl::StatusOr<Target> FindTarget(const index::WorkloadIndex& index, KindNamesCache& kind_names,
                                  const workloadmap::v1::ObjectRef& ref, const std::string& field);

// The cached object of a target; UNAVAILABLE while its kind syncs.
absl::StatusOr<std::shared_ptr<const kube::CachedObject>> CachedObjectOf(const Target& t);

// Moves a target to the top of its controller chain.
absl::StatusOr<Target> TopOwnerOf(const Target& t);

// What RBAC calls doing `verb` on a target ("get jobsets.jobset.x-k8s.io
// demo in team-a"); the resource is empty when the cluster does not know it.
access::ResourceAttributes AttributesOf(const Target& t, const std::string& verb);

// The definition of a kind, or why there is none to use.
absl::StatusOr<std::shared_ptr<const definitions::CompiledDefinition>> DefinitionFor(
    const index::Cluster& cluster, const Gvk& gvk);

// The view the index has published for a target, or null when it has none:
// an object inside a workload (a JobSet's Job, a Job's pod), which the index
// does not keep, or one the resolver has not reached yet. Runs no expression.
absl::StatusOr<std::shared_ptr<const index::WorkloadView>> PublishedViewOf(
    const index::WorkloadIndex& index, const Target& t);

// A target resolved now, outside the index: for targets without a
// published view. Evaluates expressions, so it runs on the work pool.
absl::StatusOr<std::shared_ptr<const index::WorkloadView>> ResolvedViewOf(
    index::WorkloadIndex& index, const Target& t);

}  // namespace wm::rpc::internal

#endif  // WM_SERVER_RPC_INTERNAL_TARGETS_H_
