#ifndef WM_SERVER_INDEX_LIVE_CLUSTER_H_
#define WM_SERVER_INDEX_LIVE_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "server/index/cluster.h"
#include "server/index/workload_index.h"
#include "server/kube/api_client.h"
#include "server/kube/cluster_cache.h"
#include "server/sources/definition_set.h"

namespace wm::index {

// A cluster reached through the apiserver: a watch cache of the kinds the
// definitions need, the definitions in force (the base overlaid with the
// cluster's Karta objects, unless those are ignored), and an API client for
// applied mutations. Feeds every change to the index. The daemon keeps one
// per kubeconfig context; wmctl's kubeconfig mode one for its command.
class LiveCluster final : public Cluster {
 public:
  struct Options {
    kube::ClusterCache::Options cache;
    bool cluster_definitions = true;
    // Kinds watched for the observers (AddObserver) only, such as the
    // PodGroups the controllers write: told to them, not to the index.
    std::vector<Gvk> observed_kinds;
  };
  LiveCluster(std::string name, kube::ClusterConnection connection, expressions::Engine& engine,
              sources::DefinitionSet::BaseLoader base, Options options);
  ~LiveCluster() override;

  // Tells `on_change` of every change of the watched kinds (Karta objects
  // included) and `on_discovery` after each discovery of what the apiserver
  // serves, on the cache's threads: for the controllers that write back.
  // REQUIRES: before Start().
  void AddObserver(kube::ClusterCache::Handler on_change, std::function<void()> on_discovery);

  // Loads the definitions, wires the cache to `index` and starts watching.
  // Fails when the base definitions do not load or discovery fails.
  absl::Status Start(WorkloadIndex& index);
  void Stop();

  const std::string& name() const override { return name_; }
  const kube::ClusterView& view() const override { return cache_; }
  std::shared_ptr<const definitions::Registry> definitions() const override;
  std::vector<definitions::Registry::Rejected> rejected_definitions() const override;
  bool InitialSyncDone() const override;
  std::string KindProblem(const Gvk& gvk) const override;
  std::string Resource(const Gvk& gvk) const override;
  absl::StatusOr<std::string> Patch(const Gvk& gvk, const std::string& namespace_,
                                    const std::string& name, const Json& patch,
                                    const kube::Impersonation* as) override;

  std::vector<kube::KindStatus> Status() const { return cache_.Status(); }
  // The client of this cluster's apiserver, for what asks it on a caller's
  // behalf (TokenReview, SubjectAccessReview).
  const kube::ApiClient& client() const { return client_; }
  const kube::ClusterCache& cache() const { return cache_; }

 private:
  // The definitions' kinds (Kartas only with cluster definitions) and the
  // observed kinds.
  std::vector<Gvk> WantedKinds(const definitions::Registry& registry) const;

  const std::string name_;
  const Options options_;
  kube::ApiClient client_;
  sources::DefinitionSet definitions_;
  kube::ClusterCache cache_;
};

}  // namespace wm::index

#endif  // WM_SERVER_INDEX_LIVE_CLUSTER_H_
