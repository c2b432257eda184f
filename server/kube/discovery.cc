#include "server/kube/discovery.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/json_reader.h"

namespace wm::kube {
namespace {

constexpr char kAggregatedAccept[] =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

std::string GvkKey(const std::string& group, const std::string& version, const std::string& kind) {
  return absl::StrCat(group, "/", version, "/", kind);
}

absl::StatusOr<Json> GetJson(const ApiClient& client, const std::string& path,
                             const std::string& accept = "application/json") {
  HttpRequest request;
  request.path = path;
  request.accept = accept;
  absl::StatusOr<HttpResponse> response = client.Do(request);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return absl::UnavailableError(absl::StrCat("discovery GET ", path, ": HTTP ", response->status,
                                               ": ", StatusMessage(response->body)));
  }
  absl::StatusOr<Json> document = ParseJson(response->body);
  if (!document.ok()) {
    return absl::UnavailableError(absl::StrCat("discovery GET ", path, ": not JSON"));
  }
  return *std::move(document);
}

std::vector<std::string> Verbs(const Json& resource) {
  std::vector<std::string> verbs;
  if (auto it = resource.find("verbs"); it != resource.end() && it->is_array()) {
    for (const Json& verb : *it) {
      if (verb.is_string()) verbs.push_back(verb.get<std::string>());
    }
  }
  return verbs;
}

void AddAggregated(const Json& list, std::vector<ApiResource>& out) {
  if (!list.contains("items") || !list["items"].is_array()) return;
  for (const Json& group : list["items"]) {
    std::string group_name = group.value("/metadata/name"_json_pointer, std::string());
    if (!group.contains("versions") || !group["versions"].is_array()) continue;
    for (const Json& version : group["versions"]) {
      std::string version_name = version.value("version", "");
      if (!version.contains("resources") || !version["resources"].is_array()) continue;
      for (const Json& resource : version["resources"]) {
        ApiResource r;
        r.group = group_name;
        r.version = version_name;
        r.plural = resource.value("resource", "");
        r.kind = resource.value("/responseKind/kind"_json_pointer, std::string());
        r.namespaced = resource.value("scope", "") == "Namespaced";
        r.verbs = Verbs(resource);
        if (!r.plural.empty() && !r.kind.empty()) out.push_back(std::move(r));
      }
    }
  }
}

absl::Status AddLegacyGroupVersion(const ApiClient& client, const std::string& group,
                                   const std::string& version, std::vector<ApiResource>& out) {
  std::string path =
      group.empty() ? "/api/" + version : absl::StrCat("/apis/", group, "/", version);
  absl::StatusOr<Json> list = GetJson(client, path);
  if (!list.ok()) return list.status();
  if (!list->contains("resources") || !(*list)["resources"].is_array()) return absl::OkStatus();
  for (const Json& resource : (*list)["resources"]) {
    ApiResource r;
    r.group = group;
    r.version = version;
    r.plural = resource.value("name", "");
    if (absl::StrContains(r.plural, '/')) continue;  // a subresource
    r.kind = resource.value("kind", "");
    r.namespaced = resource.value("namespaced", false);
    r.verbs = Verbs(resource);
    out.push_back(std::move(r));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Discovery> Discovery::FromAggregated(const Json& core, const Json& groups) {
  if (core.value("kind", "") != "APIGroupDiscoveryList" ||
      groups.value("kind", "") != "APIGroupDiscoveryList") {
    return absl::InvalidArgumentError("not aggregated discovery documents");
  }
  Discovery discovery;
  discovery.aggregated_ = true;
  AddAggregated(core, discovery.resources_);
  AddAggregated(groups, discovery.resources_);
  discovery.Index();
  return discovery;
}

absl::StatusOr<Discovery> Discovery::Fetch(const ApiClient& client) {
  absl::StatusOr<Json> core = GetJson(client, "/api", kAggregatedAccept);
  if (!core.ok()) return core.status();
  absl::StatusOr<Json> groups = GetJson(client, "/apis", kAggregatedAccept);
  if (!groups.ok()) return groups.status();
  if (core->value("kind", "") == "APIGroupDiscoveryList") {
    return FromAggregated(*core, *groups);
  }
  // Legacy discovery: /api lists core versions, /apis the groups; then one
  // request per group version.
  Discovery discovery;
  if (core->contains("versions") && (*core)["versions"].is_array()) {
    for (const Json& version : (*core)["versions"]) {
      if (!version.is_string()) continue;
      absl::Status status =
          AddLegacyGroupVersion(client, "", version.get<std::string>(), discovery.resources_);
      if (!status.ok()) return status;
    }
  }
  if (groups->contains("groups") && (*groups)["groups"].is_array()) {
    for (const Json& group : (*groups)["groups"]) {
      std::string name = group.value("name", "");
      std::string preferred = group.value("/preferredVersion/version"_json_pointer, std::string());
      std::vector<std::string> versions;
      if (!preferred.empty()) versions.push_back(preferred);
      if (group.contains("versions") && group["versions"].is_array()) {
        for (const Json& version : group["versions"]) {
          std::string v = version.value("version", "");
          if (!v.empty() && v != preferred) versions.push_back(v);
        }
      }
      for (const std::string& version : versions) {
        // A group version that fails (an aggregated API server down) must
        // not hide the others.
        (void)AddLegacyGroupVersion(client, name, version, discovery.resources_);
      }
    }
  }
  discovery.Index();
  return discovery;
}

void Discovery::Index() {
  by_gvk_.clear();
  for (size_t i = 0; i < resources_.size(); ++i) {
    const ApiResource& r = resources_[i];
    by_gvk_.try_emplace(GvkKey(r.group, r.version, r.kind), i);
  }
}

const ApiResource* Discovery::Find(const std::string& group, const std::string& version,
                                   const std::string& kind) const {
  auto it = by_gvk_.find(GvkKey(group, version, kind));
  return it == by_gvk_.end() ? nullptr : &resources_[it->second];
}

std::vector<std::string> Discovery::ServedVersions(const std::string& group,
                                                   const std::string& kind) const {
  std::vector<std::string> versions;
  for (const ApiResource& r : resources_) {
    if (r.group == group && r.kind == kind) versions.push_back(r.version);
  }
  return versions;
}

std::string Discovery::WhyNotWatchable(const std::string& group, const std::string& version,
                                       const std::string& kind) const {
  const ApiResource* resource = Find(group, version, kind);
  if (resource != nullptr) {
    return resource->Supports("list") && resource->Supports("watch")
               ? ""
               : "the resource does not support list and watch";
  }
  std::vector<std::string> versions = ServedVersions(group, kind);
  return versions.empty()
             ? "not served by the apiserver (is its CRD installed?)"
             : absl::StrCat("version not served; served versions: ", absl::StrJoin(versions, ", "));
}

}  // namespace wm::kube
