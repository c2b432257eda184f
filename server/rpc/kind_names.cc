#include "server/rpc/kind_names.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/user_text.h"

namespace wm::rpc {

using ::wm::index::Cluster;

std::shared_ptr<const KindNames> KindNames::Build(const Cluster& cluster) {
  auto names = std::make_shared<KindNames>();
  names->cluster_name_ = cluster.name();
  // The generation first: a kind added while we read counts as a change.
  names->kinds_generation_ = cluster.view().KindsGeneration();
  names->registry_ = cluster.definitions();
  std::map<Gvk, bool> held;  // every kind, whether the cluster holds it
  for (const auto& [gvk, store] : cluster.view().Stores()) held[gvk] = true;
  if (names->registry_) {
    for (const auto& def : names->registry_->All()) {
      if (def->root.kind) {
        held.try_emplace({def->root.kind->group, def->root.kind->version, def->root.kind->kind},
                         false);
      }
    }
  }
  for (const auto& [gvk, is_held] : held) {
    // The plural is guessed for clusters that do not know resources
    // (snapshots) and for kinds the cluster does not serve.
    Kind kind{gvk, cluster.Resource(gvk), absl::AsciiStrToLower(gvk.kind), is_held};
    if (kind.plural.empty()) kind.plural = kind.singular + "s";
    size_t index = names->kinds_.size();
    names->by_kind_[kind.gvk.kind].push_back(index);
    names->by_resource_[kind.plural].push_back(index);
    if (kind.singular != kind.plural) names->by_resource_[kind.singular].push_back(index);
    names->kinds_.push_back(std::move(kind));
  }
  return names;
}

bool KindNames::Current(const Cluster& cluster) const {
  return cluster.view().KindsGeneration() == kinds_generation_ &&
         cluster.definitions() == registry_;
}

const KindNames::Kind* KindNames::Find(const Gvk& gvk) const {
  auto it = std::lower_bound(kinds_.begin(), kinds_.end(), gvk,
                             [](const Kind& k, const Gvk& g) { return k.gvk < g; });
  return it != kinds_.end() && it->gvk == gvk ? &*it : nullptr;
}

absl::StatusOr<Gvk> KindNames::Resolve(const workloadmap::v1::ObjectRef& ref,
                                       absl::string_view field) const {
  if (ref.kind().empty() && ref.resource().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": kind or resource is required"));
  }
  // Candidates by kind, or by resource as kubectl takes it: the plural
  // ("jobsets") or the singular in any case ("JobSet"). A reference by kind,
  // the common case, reads the index in place: this runs on every call.
  static const std::vector<size_t> kNone;
  std::vector<size_t> by_resource;
  const std::vector<size_t>* candidates = &kNone;
  if (!ref.kind().empty()) {
    if (auto it = by_kind_.find(ref.kind()); it != by_kind_.end()) candidates = &it->second;
  } else {
    auto add = [&](const std::string& key) {
      if (auto it = by_resource_.find(key); it != by_resource_.end()) {
        by_resource.insert(by_resource.end(), it->second.begin(), it->second.end());
      }
    };
    std::string singular = absl::AsciiStrToLower(ref.resource());
    add(ref.resource());
    if (singular != ref.resource()) add(singular);
    std::sort(by_resource.begin(), by_resource.end());
    by_resource.erase(std::unique(by_resource.begin(), by_resource.end()), by_resource.end());
    candidates = &by_resource;
  }
  absl::InlinedVector<const Kind*, 2> matches;
  bool several_groups = false;
  for (size_t i : *candidates) {
    const Kind& k = kinds_[i];
    if (!ref.group().empty() && k.gvk.group != ref.group()) continue;
    if (!ref.version().empty() && k.gvk.version != ref.version()) continue;
    several_groups =
        several_groups || (!matches.empty() && matches.front()->gvk.group != k.gvk.group);
    matches.push_back(&k);
  }
  auto what = [&] {
    return ref.kind().empty() ? "resource " + QuoteUserText(ref.resource())
                              : "kind " + QuoteUserText(ref.kind());
  };
  if (matches.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": no definition covers ", what(),
                     ref.group().empty() ? "" : " in group " + QuoteUserText(ref.group()),
                     " in cluster ", cluster_name_));
  }
  if (several_groups) {
    std::set<std::string> groups;
    for (const Kind* k : matches) groups.insert(k->gvk.group);
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", what(), " is in groups ",
                                                   absl::StrJoin(groups, ", "), "; set group"));
  }
  for (const Kind* k : matches) {
    if (k->held) return k->gvk;
  }
  return matches.front()->gvk;
}

bool KindNames::Matches(const Gvk& gvk, absl::string_view filter) const {
  if (filter == gvk.kind || filter == absl::StrCat(gvk.group, "/", gvk.kind)) return true;
  const Kind* kind = Find(gvk);
  if (kind == nullptr) return false;
  for (const std::string& name : {kind->plural, kind->singular}) {
    if (filter == name || filter == absl::StrCat(name, ".", gvk.group)) return true;
  }
  return false;
}

bool KindNames::Names(absl::string_view filter) const {
  for (const Kind& kind : kinds_) {
    if (Matches(kind.gvk, filter)) return true;
  }
  return false;
}

std::shared_ptr<const KindNames> KindNamesCache::For(const Cluster& cluster) {
  std::unique_lock lock(mu_);
  std::shared_ptr<const KindNames>& names = names_[&cluster];
  if (!names || !names->Current(cluster)) names = KindNames::Build(cluster);
  return names;
}

}  // namespace wm::rpc
