#ifndef WM_SERVER_INDEX_CLUSTER_H_
#define WM_SERVER_INDEX_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/definitions/registry.h"
#include "server/kube/auth/kubeconfig.h"
#include "server/kube/cluster_view.h"

namespace wm::index {

// One cluster the daemon serves, as the service layer sees it: its objects,
// the definitions in force for it, and the one write the API offers
// (MutatePodSpecs with apply). The daemon's main implements it over a
// watch cache (a kubeconfig context) or over manifests (--snapshot).
class Cluster {
 public:
  virtual ~Cluster() = default;

  // The kubeconfig context name ("snapshot" for manifests).
  virtual const std::string& name() const = 0;
  virtual const kube::ClusterView& view() const = 0;
  virtual std::shared_ptr<const definitions::Registry> definitions() const = 0;
  // Cluster definitions (Karta objects) rejected before they reached the
  // registry (unparseable objects); definitions()->rejected() has the rest.
  virtual std::vector<definitions::Registry::Rejected> rejected_definitions() const = 0;
  // True once every watched kind has delivered its initial list (or is
  // known to be unreadable or not served).
  virtual bool InitialSyncDone() const = 0;
  // Why `gvk` has no objects to offer, when it has none: "not served by the
  // cluster", "forbidden: ...", "not yet synced". Empty when it is synced.
  virtual std::string KindProblem(const Gvk& gvk) const = 0;
  // The plural resource name of a kind ("jobsets"), or "" when unknown.
  virtual std::string Resource(const Gvk& gvk) const = 0;
  // Applies an RFC 6902 JSON Patch to an object and returns its new
  // resourceVersion, acting as `as` (impersonated, so the apiserver's RBAC
  // and admission judge that user and record it as the field manager) or,
  // when null, as the daemon. FailedPrecondition for clusters that cannot be
  // written.
  virtual absl::StatusOr<std::string> Patch(const Gvk& gvk, const std::string& namespace_,
                                            const std::string& name, const Json& patch,
                                            const kube::Impersonation* as) = 0;
};

}  // namespace wm::index

#endif  // WM_SERVER_INDEX_CLUSTER_H_
