#include "server/resolution/mutation.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"

namespace wm::resolution {
namespace {

using definitions::ExprIndex;
using definitions::FragmentedPodSpec;
using definitions::kNone;

absl::StatusOr<std::vector<std::string>> RawInstanceIds(Evaluation& eval, int component,
                                                        expressions::Session::InputId input) {
  const auto& compiled = eval.def().components[component];
  if (compiled.instance_ids == kNone) return std::vector<std::string>{""};
  auto ids = eval.All(compiled.instance_ids, input);
  if (!ids.ok()) return ids.status();
  std::vector<std::string> out;
  for (const Json& id : *ids) {
    if (!id.is_string() || id.get_ref<const std::string&>().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(eval.def().field_paths[compiled.instance_ids],
                                                     ": invalid instance id ", id.dump()));
    }
    out.push_back(id.get<std::string>());
  }
  return out;
}

// Writes ordered values (one per raw instance id) at the locations of
// `paths_expr`, evaluated on `object`.
absl::Status AssignZip(Evaluation& eval, Json& object, int component, ExprIndex paths_expr,
                       const std::vector<Json>& ordered) {
  auto input = eval.Load(object);
  auto paths = eval.All(paths_expr, input);
  if (!paths.ok()) return paths.status();
  bool zip = eval.def().components[component].instance_ids != kNone;
  if (zip && paths->size() != ordered.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "array length mismatch: expected ", paths->size(), " values but got ", ordered.size()));
  }
  for (size_t i = 0; i < paths->size(); ++i) {
    absl::Status s = SetPath(object, (*paths)[i], zip ? ordered[i] : ordered[0]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Json>> OrderValues(const std::vector<std::string>& ids,
                                              const std::map<std::string, Json>& values) {
  std::vector<Json> ordered;
  for (const std::string& id : ids) {
    auto it = values.find(id);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat("value not found for instance id: ", id));
    }
    ordered.push_back(it->second);
  }
  return ordered;
}

bool IsEmpty(const Json& v) {
  return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) ||
         ((v.is_object() || v.is_array()) && v.empty());
}

}  // namespace

absl::StatusOr<Json> UpdatePodField(Evaluation& eval, const Json& object, int component,
                                    PodField field, const std::map<std::string, Json>& values) {
  const auto& compiled = eval.def().components[component];
  ExprIndex paths = field == PodField::kPodTemplateSpec ? compiled.pod_template_spec_paths
                    : field == PodField::kPodSpec       ? compiled.pod_spec_paths
                                                        : compiled.metadata_paths;
  if (paths == kNone) {
    return absl::FailedPreconditionError(
        absl::StrCat("component ", compiled.def->name, " has no ",
                     field == PodField::kPodTemplateSpec ? "podTemplateSpecPath"
                     : field == PodField::kPodSpec       ? "podSpecPath"
                                                         : "metadataPath"));
  }
  auto ids = RawInstanceIds(eval, component, eval.Load(object));
  if (!ids.ok()) return ids.status();
  auto ordered = OrderValues(*ids, values);
  if (!ordered.ok()) return ordered.status();
  Json result = object;
  if (absl::Status s = AssignZip(eval, result, component, paths, *ordered); !s.ok()) return s;
  return result;
}

absl::StatusOr<Json> UpdateFragmentedPodSpec(Evaluation& eval, const Json& object, int component,
                                             const std::map<std::string, Json>& values) {
  const auto& compiled = eval.def().components[component];
  auto ids = RawInstanceIds(eval, component, eval.Load(object));
  if (!ids.ok()) return ids.status();
  auto per_instance = OrderValues(*ids, values);
  if (!per_instance.ok()) return per_instance.status();
  Json result = object;
  for (int f = 0; f < FragmentedPodSpec::kFieldCount; ++f) {
    const char* key = FragmentedPodSpec::ValueKey(FragmentedPodSpec::Field(f));
    bool string_field = f == FragmentedPodSpec::kSchedulerName ||
                        f == FragmentedPodSpec::kPriorityClassName ||
                        f == FragmentedPodSpec::kImage;
    std::vector<Json> ordered;
    bool any = false;
    for (const Json& v : *per_instance) {
      Json value = v.is_object() && v.contains(key) ? v[key] : Json();
      if (IsEmpty(value)) value = string_field ? Json("") : Json();
      any = any || !IsEmpty(value);
      ordered.push_back(std::move(value));
    }
    if (!any) continue;
    if (compiled.fragmented_paths[f] == kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, ": path is not defined and values are not empty"));
    }
    absl::Status s = AssignZip(eval, result, component, compiled.fragmented_paths[f], ordered);
    if (!s.ok()) return s;
  }
  return result;
}

absl::StatusOr<Json> ApplySuspend(Evaluation& eval, const Json& object, int component,
                                  bool suspend) {
  const auto& compiled = eval.def().components[component];
  if (!compiled.def->suspend) {
    return absl::FailedPreconditionError(
        absl::StrCat("component ", compiled.def->name, " has no suspend definition"));
  }
  const auto& actions =
      suspend ? compiled.def->suspend->suspend_actions : compiled.def->suspend->resume_actions;
  const auto& paths = suspend ? compiled.suspend_paths : compiled.resume_paths;
  Json result = object;
  for (size_t a = 0; a < actions.size(); ++a) {
    auto value = ParseJson(actions[a].value);
    if (!value.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(eval.def().field_paths[paths[a]], ": value ",
                                                     actions[a].value,
                                                     " is not JSON: ", value.status().message()));
    }
    auto locations = eval.All(paths[a], eval.Load(result));
    if (!locations.ok()) return locations.status();
    for (const Json& location : *locations) {
      if (absl::Status s = SetPath(result, location, *value); !s.ok()) return s;
    }
  }
  return result;
}

Json JsonPatch(const Json& before, const Json& after) { return Json::diff(before, after); }

}  // namespace wm::resolution
