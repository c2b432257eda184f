#include "server/index/live_cluster.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"

namespace wm::index {

LiveCluster::LiveCluster(std::string name, kube::ClusterConnection connection,
                         expressions::Engine& engine, sources::DefinitionSet::BaseLoader base,
                         Options options)
    : name_(std::move(name)),
      options_(std::move(options)),
      client_(std::move(connection)),
      definitions_(engine, std::move(base)),
      cache_(client_, options_.cache) {}

LiveCluster::~LiveCluster() { Stop(); }

absl::Status LiveCluster::Start(WorkloadIndex& index) {
  if (absl::Status s = definitions_.Init(); !s.ok()) return s;
  definitions_.SetListener([this, &index](std::shared_ptr<const definitions::Registry> registry,
                                          const std::vector<Gvk>&) {
    cache_.SetKinds(WantedKinds(*registry));
    index.Resync(name_);
  });
  cache_.AddHandler([this, &index](const Gvk& gvk, const kube::Change& change) {
    if (gvk == sources::KartaGvk()) {
      if (options_.cluster_definitions) definitions_.OnKartaChange(change);
      return;
    }
    // The observers' kinds are theirs alone: no workload is made of them.
    if (std::find(options_.observed_kinds.begin(), options_.observed_kinds.end(), gvk) !=
        options_.observed_kinds.end()) {
      return;
    }
    index.OnChange(name_, gvk, change);
  });
  return cache_.Start(WantedKinds(*definitions_.Current()));
}

std::vector<Gvk> LiveCluster::WantedKinds(const definitions::Registry& registry) const {
  std::vector<Gvk> kinds = sources::KindsToWatch(registry);
  if (!options_.cluster_definitions) {
    std::erase(kinds, sources::KartaGvk());
  }
  for (const Gvk& gvk : options_.observed_kinds) {
    if (std::find(kinds.begin(), kinds.end(), gvk) == kinds.end()) kinds.push_back(gvk);
  }
  return kinds;
}

void LiveCluster::AddObserver(kube::ClusterCache::Handler on_change,
                              std::function<void()> on_discovery) {
  cache_.AddHandler(std::move(on_change));
  cache_.AddDiscoveryHandler(std::move(on_discovery));
}

void LiveCluster::Stop() { cache_.Stop(); }

std::shared_ptr<const definitions::Registry> LiveCluster::definitions() const {
  return definitions_.Current();
}

std::vector<definitions::Registry::Rejected> LiveCluster::rejected_definitions() const {
  // The definition set also lists the Kartas its registry rejected; those
  // are reported through the registry, so leave them out here.
  std::shared_ptr<const definitions::Registry> registry = definitions_.Current();
  absl::flat_hash_set<std::string> in_registry;
  if (registry) {
    for (const auto& r : registry->rejected()) in_registry.insert(r.source);
  }
  std::vector<definitions::Registry::Rejected> rejected = definitions_.rejected();
  std::erase_if(rejected, [&](const auto& r) { return in_registry.contains(r.source); });
  return rejected;
}

namespace {

bool Settled(const kube::KindStatus& s) {
  using State = kube::ReflectorHealth::State;
  return !s.served || s.health.has_synced || s.health.state == State::kForbidden ||
         s.health.state == State::kNotFound;
}

// The field manager of a write done for `user`: "workloadmap:<user>", cut
// to the 128 printable ASCII characters the apiserver accepts.
std::string FieldManagerFor(const std::string& user) {
  std::string manager = "workloadmap:" + user;
  if (manager.size() > 128) manager.resize(128);
  for (char& c : manager) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return manager;
}

}  // namespace

bool LiveCluster::InitialSyncDone() const {
  for (const kube::KindStatus& s : cache_.Status()) {
    if (!Settled(s)) return false;
  }
  return true;
}

std::string LiveCluster::KindProblem(const Gvk& gvk) const {
  for (const kube::KindStatus& s : cache_.Status()) {
    if (!(s.gvk == gvk)) continue;
    if (!s.served) return absl::StrCat("not served by the cluster: ", s.message);
    if (s.health.state == kube::ReflectorHealth::State::kForbidden) {
      return absl::StrCat("forbidden: ", s.health.message);
    }
    if (!s.health.has_synced) return "not yet synced";
    return "";
  }
  return "not watched (no definition needs it)";
}

std::string LiveCluster::Resource(const Gvk& gvk) const { return cache_.PluralFor(gvk); }

absl::StatusOr<std::string> LiveCluster::Patch(const Gvk& gvk, const std::string& namespace_,
                                               const std::string& name, const Json& patch,
                                               const kube::Impersonation* as) {
  auto resource = cache_.ResourceFor(gvk);
  if (!resource) {
    return absl::FailedPreconditionError(gvk.ToString() + " is not served by cluster " + name_);
  }
  kube::HttpRequest request;
  request.method = "PATCH";
  request.path = absl::StrCat(resource->CollectionPath(namespace_), "/", name);
  if (as != nullptr) {
    request.impersonate = *as;
    // managedFields name a manager, not a user: ours says whom we acted for.
    request.path += "?fieldManager=" + kube::QueryEscape(FieldManagerFor(as->user));
  }
  request.content_type = "application/json-patch+json";
  request.body = patch.dump();
  auto response = client_.Do(request);
  if (!response.ok()) {
    if (absl::IsInvalidArgument(response.status())) return response.status();
    return absl::UnavailableError(response.status().message());
  }
  std::string message = kube::StatusMessage(response->body);
  switch (response->status) {
    case 200:
      break;
    case 403:
      return absl::PermissionDeniedError(
          absl::StrCat("the apiserver refused the patch: ", message));
    case 404:
      return absl::NotFoundError(message);
    case 409:
    case 422:
      return absl::AbortedError(absl::StrCat(
          "the object changed since it was read or the patch is invalid; retry: ", message));
    default:
      return absl::UnavailableError(
          absl::StrCat("patch failed with HTTP ", response->status, ": ", message));
  }
  absl::StatusOr<Json> object = ParseJson(response->body);
  if (!object.ok()) return absl::InternalError("the apiserver answered with invalid JSON");
  return FindString(*object, {"metadata", "resourceVersion"});
}

}  // namespace wm::index
