#include "server/rpc/internal/messages.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"
#include "server/common/user_text.h"
#include "server/resolution/resolver.h"
#include "server/rpc/internal/targets.h"

namespace wm::rpc::internal {

namespace v1 = workloadmap::v1;
using ::wm::index::Cluster;

absl::Status CheckObjectMeta(const Json& object, const std::string& field) {
  auto it = object.find("metadata");
  if (it == object.end()) return absl::OkStatus();
  if (!it->is_object()) return absl::InvalidArgumentError(field + ": metadata must be an object");
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    auto v = it->find(key);
    if (v != it->end() && !v->is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": metadata.", key, " must be a string"));
    }
  }
  for (const char* key : {"labels", "annotations"}) {
    auto map = it->find(key);
    if (map == it->end() || map->is_null()) continue;
    if (!map->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": metadata.", key, " must be an object of strings"));
    }
    for (const auto& [name, v] : map->items()) {
      if (!v.is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(field, ": metadata.", key, "[",
                                                       QuoteUserText(name), "] must be a string"));
      }
    }
  }
  auto owners = it->find("ownerReferences");
  if (owners != it->end() && !owners->is_null() && !owners->is_array()) {
    return absl::InvalidArgumentError(field + ": metadata.ownerReferences must be an array");
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> ParseJsonField(const std::string& text, const std::string& field) {
  if (text.empty()) return absl::InvalidArgumentError(field + " is empty");
  auto value = ParseJson(text);
  if (!value.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", value.status().message()));
  }
  if (!value->is_object()) return absl::InvalidArgumentError(field + " is not a JSON object");
  if (absl::Status s = CheckObjectMeta(*value, field); !s.ok()) return s;
  return value;
}

absl::StatusOr<Gvk> GvkOf(const Json& object, const std::string& field) {
  std::string api_version = FindString(object, {"apiVersion"});
  std::string kind = FindString(object, {"kind"});
  if (api_version.empty() || kind.empty()) {
    return absl::InvalidArgumentError(field + ": apiVersion and kind are required");
  }
  return GvkFromApiVersion(api_version, kind);
}

absl::Status ResolveInline(expressions::Engine& engine, const Cluster& cluster,
                           const v1::InlineWorkload& in, bool gang, int max_objects,
                           v1::ResolvedWorkload& out) {
  if (in.pod_json_size() + in.owner_json_size() > max_objects) {
    return absl::InvalidArgumentError(
        absl::StrCat("inline.pod_json and inline.owner_json: ", in.pod_json_size(), " pods and ",
                     in.owner_json_size(), " owners, more than the ", max_objects,
                     " objects one call may send inline"));
  }
  auto object = ParseJsonField(in.object_json(), "inline.object_json");
  if (!object.ok()) return object.status();
  auto gvk = GvkOf(*object, "inline.object_json");
  if (!gvk.ok()) return gvk.status();
  auto def = DefinitionFor(cluster, *gvk);
  if (!def.ok()) return def.status();
  std::vector<Json> pods, owners;
  for (int i = 0; i < in.pod_json_size(); ++i) {
    auto pod = ParseJsonField(in.pod_json(i), absl::StrCat("inline.pod_json[", i, "]"));
    if (!pod.ok()) return pod.status();
    pods.push_back(*std::move(pod));
  }
  for (int i = 0; i < in.owner_json_size(); ++i) {
    auto owner = ParseJsonField(in.owner_json(i), absl::StrCat("inline.owner_json[", i, "]"));
    if (!owner.ok()) return owner.status();
    owners.push_back(*std::move(owner));
  }
  resolution::WorkloadInput input;
  input.object = &*object;
  for (const Json& p : pods) input.pods.push_back(&p);
  for (const Json& o : owners) input.owners.push_back(&o);
  resolution::ResolveOptions options;
  options.cluster = cluster.name();
  options.include_gang = gang;
  absl::Status resolved = resolution::ResolveWorkloadInto(**def, engine, input, options, out);
  if (!resolved.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("inline.object_json: ", resolved.message()));
  }
  return absl::OkStatus();
}

}  // namespace wm::rpc::internal
