#include "server/index/testing/fake_cluster.h"

#include "server/common/json_path.h"
#include "server/common/testing/source_dir.h"
#include "server/common/yaml_json.h"

namespace wm::index::testing {

FakeCluster::FakeCluster(std::shared_ptr<const definitions::Registry> registry, std::string name)
    : name_(std::move(name)), registry_(std::move(registry)) {}

std::shared_ptr<const definitions::Registry> FakeCluster::definitions() const {
  std::lock_guard lock(mu_);
  return registry_;
}

std::string FakeCluster::KindProblem(const Gvk& gvk) const {
  {
    std::lock_guard lock(mu_);
    if (syncing_.count(gvk.kind)) return "not yet synced";
  }
  return view_.StoreFor(gvk) ? "" : "not served by the cluster";
}

std::string FakeCluster::Resource(const Gvk& gvk) const {
  std::lock_guard lock(mu_);
  auto it = resources_.find(gvk.kind);
  return it == resources_.end() ? "" : it->second;
}

absl::StatusOr<std::string> FakeCluster::Patch(const Gvk& gvk, const std::string& namespace_,
                                               const std::string& name, const Json& patch,
                                               const kube::Impersonation* as) {
  std::lock_guard lock(mu_);
  patches_.push_back({gvk, namespace_, name, patch, as == nullptr ? "" : as->user});
  return std::string("1001");
}

void FakeCluster::Apply(WorkloadIndex& index, kube::EventType type, const Json& object) {
  Gvk gvk;
  for (const kube::Change& change : ApplyToStore(type, object, &gvk))
    index.OnChange(name_, gvk, change);
}

void FakeCluster::Put(const Json& object) {
  Gvk gvk;
  ApplyToStore(kube::EventType::kModified, object, &gvk);
}

std::vector<kube::Change> FakeCluster::ApplyToStore(kube::EventType type, const Json& object,
                                                    Gvk* gvk) {
  *gvk = GvkFromApiVersion(FindString(object, {"apiVersion"}), FindString(object, {"kind"}));
  auto cached = kube::CachedObject::FromJson(object, kube::CachedShapeFor(*gvk));
  return view_.MutableStore(*gvk)->Apply(type, cached);
}

void FakeCluster::SetDefinitions(std::shared_ptr<const definitions::Registry> registry,
                                 WorkloadIndex& index) {
  SetDefinitions(std::move(registry));
  index.Resync(name_);
}

void FakeCluster::SetDefinitions(std::shared_ptr<const definitions::Registry> registry) {
  std::lock_guard lock(mu_);
  registry_ = std::move(registry);
}

void FakeCluster::SetSyncing(const std::string& kind) {
  std::lock_guard lock(mu_);
  syncing_.insert(kind);
}

void FakeCluster::SetResource(const std::string& kind, const std::string& resource) {
  std::lock_guard lock(mu_);
  resources_[kind] = resource;
}

std::vector<FakeCluster::AppliedPatch> FakeCluster::patches() const {
  std::lock_guard lock(mu_);
  return patches_;
}

std::shared_ptr<const kube::Store> FakeCluster::MutableView::StoreFor(const Gvk& gvk) const {
  std::lock_guard lock(mu_);
  auto it = stores_.find(gvk);
  return it == stores_.end() ? nullptr : it->second;
}

std::vector<std::pair<Gvk, std::shared_ptr<const kube::Store>>> FakeCluster::MutableView::Stores()
    const {
  std::lock_guard lock(mu_);
  return {stores_.begin(), stores_.end()};
}

uint64_t FakeCluster::MutableView::KindsGeneration() const {
  std::lock_guard lock(mu_);
  return stores_.size();
}

std::shared_ptr<kube::Store> FakeCluster::MutableView::MutableStore(const Gvk& gvk) {
  std::lock_guard lock(mu_);
  std::shared_ptr<kube::Store>& store = stores_[gvk];
  if (!store) store = std::make_shared<kube::Store>();
  return store;
}

absl::Status PutSeed(FakeCluster& cluster, WorkloadIndex& index,
                     const std::vector<std::string>& twin_namespaces) {
  absl::StatusOr<std::vector<Json>> seed = ReadYamlFile(
      std::string(wm::testing::SourceDir()) + "/integration_tests/seed/cluster-state.yaml");
  if (!seed.ok()) return seed.status();
  for (const Json& object : *seed) {
    cluster.Put(index, object);
    if (object["kind"] != "JobSet") continue;
    for (const std::string& namespace_ : twin_namespaces) {
      Json twin = object;
      twin["metadata"]["namespace"] = namespace_;
      twin["metadata"]["uid"] = namespace_ + "-demo-uid";
      cluster.Put(index, twin);
    }
  }
  index.WaitForIdle();
  return absl::OkStatus();
}

}  // namespace wm::index::testing
