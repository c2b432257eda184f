#ifndef WM_SERVER_INDEX_SNAPSHOT_CLUSTER_H_
#define WM_SERVER_INDEX_SNAPSHOT_CLUSTER_H_

#include <memory>
#include <string>
#include <utility>
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
  // One object of a file, decoded for the view.
  using Decoded = std::pair<Gvk, std::shared_ptr<const kube::CachedObject>>;
  // Reads one file and decodes its documents' objects (a List's items one
  // by one), or fails naming the file. Runs on any thread.
  static absl::StatusOr<std::vector<Decoded>> DecodeFile(const std::string& file);

  SnapshotCluster() = default;
  std::string name_ = "snapshot";
  std::shared_ptr<const definitions::Registry> registry_;
  kube::StaticCluster objects_;
  size_t objects_count_ = 0;
};

}  // namespace wm::index

#endif  // WM_SERVER_INDEX_SNAPSHOT_CLUSTER_H_
