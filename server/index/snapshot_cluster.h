#ifndef WM_SERVER_INDEX_SNAPSHOT_CLUSTER_H_
#define WM_SERVER_INDEX_SNAPSHOT_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "server/index/cluster.h"
#include "server/index/workload_index.h"

namespace wm::index {

// Manifests from a directory (--snapshot): every YAML or JSON document of
// the files in it (recursively) is an object of the frozen cluster;
// objects without a uid get one derived from their kind and name, so owner
// references between them work when they name those uids.
class SnapshotCluster final : public Cluster {
 public:
  // Reads the manifests of `directory` (Feed then tells the index).
  static absl::StatusOr<std::unique_ptr<SnapshotCluster>> Load(
      const std::string& directory, std::shared_ptr<const definitions::Registry> registry);

  const std::string& name() const override { return name_; }
  const kube::ClusterView& view() const override { return objects_; }
  std::shared_ptr<const definitions::Registry> definitions() const override { return registry_; }
  std::vector<definitions::Registry::Rejected> rejected_definitions() const override { return {}; }
  bool InitialSyncDone() const override { return true; }
  std::string KindProblem(const Gvk& gvk) const override;
  std::string Resource(const Gvk& gvk) const override { return ""; }
  absl::StatusOr<std::string> Patch(const Gvk& gvk, const std::string& namespace_,
                                    const std::string& name, const Json& patch,
                                    const kube::Impersonation* as) override;

  // Has the index resolve every workload (once, at startup).
  void Feed(WorkloadIndex& index) const;
  size_t size() const { return objects_count_; }

 private:
  // Adds the objects of one file's documents (a List's items one by one),
  // or fails naming the file; `docs` is consumed.
  absl::Status AddDocuments(const std::string& file, std::vector<Json>& docs);

  SnapshotCluster() = default;
  std::string name_ = "snapshot";
  std::shared_ptr<const definitions::Registry> registry_;
  kube::StaticCluster objects_;
  size_t objects_count_ = 0;
};

}  // namespace wm::index

#endif  // WM_SERVER_INDEX_SNAPSHOT_CLUSTER_H_
