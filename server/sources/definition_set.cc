#include "server/sources/definition_set.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace wm::sources {
namespace {

constexpr char kClusterSourcePrefix[] = "cluster:karta/";

}  // namespace

Gvk KartaGvk() { return Gvk{"run.ai", "v1alpha1", "Karta"}; }

std::vector<Gvk> KindsToWatch(const definitions::Registry& registry) {
  std::vector<Gvk> kinds;
  for (const auto& definition : registry.All()) {
    if (definition->root.kind) kinds.push_back(*definition->root.kind);
    for (const auto& child : definition->children) {
      if (child.kind) kinds.push_back(*child.kind);
    }
    for (const auto& gvk : definition->additional_child_kinds) kinds.push_back(gvk);
  }
  kinds.push_back(KartaGvk());
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  return kinds;
}

DefinitionSet::DefinitionSet(expressions::Engine& engine, BaseLoader base)
    : engine_(engine), base_(std::move(base)) {}

absl::Status DefinitionSet::Init() {
  std::unique_lock lock(mu_);
  return Rebuild();
}

void DefinitionSet::SetListener(Listener listener) {
  std::unique_lock lock(mu_);
  listener_ = std::move(listener);
}

std::shared_ptr<const definitions::Registry> DefinitionSet::Current() const {
  std::unique_lock lock(mu_);
  return current_;
}

bool IsKartaSource(absl::string_view source) {
  return absl::StartsWith(source, kClusterSourcePrefix);
}

std::vector<definitions::Registry::Rejected> DefinitionSet::rejected() const {
  std::unique_lock lock(mu_);
  return rejected_;
}

void DefinitionSet::OnKartaChange(const kube::Change& change) {
  std::unique_lock lock(mu_);
  if (change.type == kube::EventType::kDeleted) {
    kartas_.erase(change.old_object->key());
  } else {
    kartas_[change.new_object->key()] = change.new_object->Document()->dump();
  }
  // The base loaded before, so only the cluster part can fail, and that
  // is recorded per object: keep serving what there is.
  (void)Rebuild();
}

absl::Status DefinitionSet::Rebuild() {
  auto registry = std::make_shared<definitions::Registry>(engine_);
  absl::Status status = base_(*registry);
  if (!status.ok()) return status;
  // Each object is its own document, so one unparseable object cannot take
  // the others with it.
  std::vector<definitions::Registry::Rejected> rejected;
  for (const auto& [name, text] : kartas_) {
    std::string source = kClusterSourcePrefix + name;
    absl::Status added = registry->AddDocuments({{source, text}}, definitions::Origin::kCluster);
    if (!added.ok()) {
      rejected.push_back(
          {source, name, {{Finding::Severity::kError, "", std::string(added.message())}}});
    }
  }
  for (const auto& r : registry->rejected()) {
    if (IsKartaSource(r.source)) rejected.push_back(r);
  }
  rejected_ = std::move(rejected);
  current_ = registry;
  if (listener_) listener_(current_, KindsToWatch(*current_));
  return absl::OkStatus();
}

}  // namespace wm::sources
