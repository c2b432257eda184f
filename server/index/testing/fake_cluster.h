#ifndef WM_SERVER_INDEX_TESTING_FAKE_CLUSTER_H_
#define WM_SERVER_INDEX_TESTING_FAKE_CLUSTER_H_

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/common/json.h"
#include "server/index/cluster.h"
#include "server/index/workload_index.h"
#include "server/kube/cluster_view.h"
#include "server/kube/store.h"

namespace wm::index::testing {

// For tests of the index and of what is built on it (the gRPC service): a
// Cluster whose objects, definitions and kinds the test changes, telling an
// index of each change as a LiveCluster's watch cache would. Every kind it
// holds counts as synced unless marked syncing; a kind it does not hold is
// "not served by the cluster". Patches are recorded, not applied.
// Thread-safe.
class FakeCluster final : public Cluster {
 public:
  struct AppliedPatch {
    Gvk gvk;
    std::string namespace_, name;
    Json patch;
    std::string as_user;  // empty: as the daemon
  };

  explicit FakeCluster(std::shared_ptr<const definitions::Registry> registry,
                       std::string name = "test");

  // Cluster.
  const std::string& name() const override { return name_; }
  const kube::ClusterView& view() const override { return view_; }
  std::shared_ptr<const definitions::Registry> definitions() const override;
  std::vector<definitions::Registry::Rejected> rejected_definitions() const override { return {}; }
  bool InitialSyncDone() const override { return true; }
  std::string KindProblem(const Gvk& gvk) const override;
  std::string Resource(const Gvk& gvk) const override;
  absl::StatusOr<std::string> Patch(const Gvk& gvk, const std::string& namespace_,
                                    const std::string& name, const Json& patch,
                                    const kube::Impersonation* as) override;

  // Applies an event to `object`, of the kind its apiVersion and kind name
  // (pods kept compact, as the daemon keeps them), and tells `index` of each
  // change.
  void Apply(WorkloadIndex& index, kube::EventType type, const Json& object);
  void Put(WorkloadIndex& index, const Json& object) {
    Apply(index, kube::EventType::kModified, object);
  }
  void Delete(WorkloadIndex& index, const Json& object) {
    Apply(index, kube::EventType::kDeleted, object);
  }
  // Adds or replaces an object, telling no index: for tests without one.
  void Put(const Json& object);

  // Puts other definitions in force and tells `index`.
  void SetDefinitions(std::shared_ptr<const definitions::Registry> registry, WorkloadIndex& index);
  void SetDefinitions(std::shared_ptr<const definitions::Registry> registry);
  // Kinds whose initial list is still being read, as a watch cache reports.
  void SetSyncing(const std::string& kind);
  // The plural resource the cluster reports for a kind ("" until set).
  void SetResource(const std::string& kind, const std::string& resource);

  std::vector<AppliedPatch> patches() const;

 private:
  // Applies the event to the store of the object's kind; sets `gvk` to that kind.
  std::vector<kube::Change> ApplyToStore(kube::EventType type, const Json& object, Gvk* gvk);

  // Objects by kind in stores the fake writes.
  class MutableView final : public kube::ClusterView {
   public:
    std::shared_ptr<const kube::Store> StoreFor(const Gvk& gvk) const override;
    bool HasSynced(const Gvk& gvk) const override { return StoreFor(gvk) != nullptr; }
    std::vector<std::pair<Gvk, std::shared_ptr<const kube::Store>>> Stores() const override;
    uint64_t KindsGeneration() const override;  // stores are only added
    std::shared_ptr<kube::Store> MutableStore(const Gvk& gvk);

   private:
    mutable std::mutex mu_;
    std::map<Gvk, std::shared_ptr<kube::Store>> stores_;
  };

  const std::string name_;
  MutableView view_;
  mutable std::mutex mu_;
  std::shared_ptr<const definitions::Registry> registry_;
  std::set<std::string> syncing_;
  std::map<std::string, std::string> resources_;
  std::vector<AppliedPatch> patches_;
};

// Puts the seed (integration_tests/seed/cluster-state.yaml: JobSet "demo"
// in namespace default with its Jobs and pods) into `cluster`, telling
// `index`, and a twin of the JobSet (uid "<namespace>-demo-uid") in each of
// `twin_namespaces`, as the access tests need a workload a caller may not
// see; then waits until the index is idle. An error when the seed cannot be
// read.
absl::Status PutSeed(FakeCluster& cluster, WorkloadIndex& index,
                     const std::vector<std::string>& twin_namespaces = {});

}  // namespace wm::index::testing

#endif  // WM_SERVER_INDEX_TESTING_FAKE_CLUSTER_H_
