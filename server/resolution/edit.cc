#include "server/resolution/edit.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/common/json_merge_patch.h"
#include "server/common/user_text.h"
#include "server/resolution/evaluation.h"
#include "server/resolution/mutation.h"
#include "server/resolution/pod_spec_validation.h"
#include "server/resolution/tree.h"

namespace wm::resolution {
namespace {

using definitions::FragmentedPodSpec;
using definitions::kNone;

std::string FieldOf(const PodTemplateEdit& edit, absl::string_view child) {
  return edit.field.empty() ? std::string(child) : absl::StrCat(edit.field, ".", child);
}

// Merges `resources` into the named container of a pod spec; the merged
// resources must be valid together (a request at most its limit).
absl::Status MergeContainerResources(Json& pod_spec, const std::string& container,
                                     const Json& resources, const std::string& field) {
  for (const char* list : {"containers", "initContainers"}) {
    auto it = pod_spec.find(list);
    if (it == pod_spec.end() || !it->is_array()) continue;
    for (Json& c : *it) {
      if (c.is_object() && c.value("name", "") == container) {
        MergePatch(c["resources"], resources);
        absl::Status s = ValidateResourceRequirements(c["resources"], field);
        if (!s.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(s.message(), " (merged with the container's resources)"));
        }
        return absl::OkStatus();
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": no container ", QuoteUserText(container)));
}

// Applies one edit to a pod template.
absl::Status EditTemplate(const PodTemplateEdit& edit, Json& pod_template) {
  if (!edit.replacement.is_null()) pod_template = edit.replacement;
  if (!pod_template.is_object()) pod_template = Json::object();
  if (!edit.merge_patch.is_null()) MergePatch(pod_template, edit.merge_patch);
  for (const auto& [container, resources] : edit.container_resources) {
    const std::string field =
        FieldOf(edit, absl::StrCat("container_resources[", QuoteUserText(container), "]"));
    if (absl::Status s = MergeContainerResources(pod_template["spec"], container, resources, field);
        !s.ok()) {
      return s;
    }
  }
  // The total size bounds the template's annotations, not only the added.
  const Json::json_pointer annotations("/metadata/annotations");
  if (edit.merge_patch.contains(annotations) && pod_template.contains(annotations)) {
    if (absl::Status s =
            ValidateAnnotations(pod_template.at(annotations), FieldOf(edit, "annotations"));
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.message(), " (merged with the template's annotations)"));
    }
  }
  return absl::OkStatus();
}

// The pod template view of a fragmented instance, and back.
Json TemplateFromFragments(const Json& fragments) {
  Json t = {{"metadata", Json::object()}, {"spec", Json::object()}};
  auto get = [&](const char* key) {
    return fragments.is_object() && fragments.contains(key) ? fragments[key] : Json();
  };
  for (const char* key : {"labels", "annotations"}) {
    if (!get(key).is_null()) t["metadata"][key] = get(key);
  }
  for (const char* key : {"schedulerName", "priorityClassName"}) {
    if (!get(key).is_null()) t["spec"][key] = get(key);
  }
  for (const char* key : {"podAffinity", "nodeAffinity"}) {
    if (!get(key).is_null()) t["spec"]["affinity"][key] = get(key);
  }
  if (!get("containers").is_null()) t["spec"]["containers"] = get("containers");
  return t;
}

// The fragment keys a template edit reaches, and where they live in it.
struct FragmentSlot {
  FragmentedPodSpec::Field field;
  const char* pointer;
};
constexpr FragmentSlot kSlots[] = {
    {FragmentedPodSpec::kLabels, "/metadata/labels"},
    {FragmentedPodSpec::kAnnotations, "/metadata/annotations"},
    {FragmentedPodSpec::kSchedulerName, "/spec/schedulerName"},
    {FragmentedPodSpec::kPriorityClassName, "/spec/priorityClassName"},
    {FragmentedPodSpec::kPodAffinity, "/spec/affinity/podAffinity"},
    {FragmentedPodSpec::kNodeAffinity, "/spec/affinity/nodeAffinity"},
    {FragmentedPodSpec::kContainers, "/spec/containers"},
};

Json At(const Json& t, const char* pointer) {
  Json::json_pointer p(pointer);
  return t.contains(p) ? t.at(p) : Json();
}

// Writes edited templates of a fragmented component: only the fragment
// keys that changed, for every instance (unchanged instances keep their
// values); a change the fragments cannot express is an error.
absl::StatusOr<Json> WriteFragments(Evaluation& eval, const Json& object, int component,
                                    const ComponentNode& node,
                                    const std::map<std::string, Json>& before,
                                    const std::map<std::string, Json>& after) {
  Json reached = Json::object();
  std::map<std::string, Json> values;
  for (const auto& [id, edited] : after) {
    Json diff = Json::diff(before.at(id), edited);
    for (const Json& op : diff) {
      const std::string& path = op["path"].get_ref<const std::string&>();
      bool covered = false;
      for (const FragmentSlot& slot : kSlots) {
        if (path.rfind(slot.pointer, 0) == 0) covered = true;
      }
      if (!covered) {
        return absl::InvalidArgumentError(
            absl::StrCat("component ", eval.def().components[component].def->name,
                         ": the definition has no path to write ", path));
      }
    }
  }
  for (const InstanceNode& instance : node.instances) {
    Json fragment = Json::object();
    for (const FragmentSlot& slot : kSlots) {
      Json was = At(before.at(instance.id), slot.pointer);
      Json now = At(after.count(instance.id) ? after.at(instance.id) : before.at(instance.id),
                    slot.pointer);
      fragment[FragmentedPodSpec::ValueKey(slot.field)] = now;
      if (was != now) reached[FragmentedPodSpec::ValueKey(slot.field)] = true;
    }
    values[instance.id] = std::move(fragment);
  }
  // Keys nobody changed are left out so that they are not rewritten.
  for (auto& [id, fragment] : values) {
    for (auto it = fragment.begin(); it != fragment.end();) {
      it = reached.contains(it.key()) ? std::next(it) : fragment.erase(it);
    }
  }
  return UpdateFragmentedPodSpec(eval, object, component, values);
}

absl::StatusOr<Json> EditComponent(Evaluation& eval, const Json& object, int component,
                                   const ComponentNode& node,
                                   const std::vector<const PodTemplateEdit*>& edits) {
  const auto& compiled = eval.def().components[component];
  const bool fragmented =
      compiled.pod_template_spec_paths == kNone && compiled.pod_spec_paths == kNone;
  std::map<std::string, Json> before, after;
  for (const InstanceNode& instance : node.instances) {
    Json pod_template =
        !instance.pod_template_spec->is_null() ? *instance.pod_template_spec
        : fragmented
            ? TemplateFromFragments(instance.fragmented)
            : Json{{"metadata", instance.metadata->is_null() ? Json::object() : *instance.metadata},
                   {"spec", *instance.pod_spec}};
    before[instance.id] = pod_template;
    bool selected = false;
    for (const PodTemplateEdit* edit : edits) {
      if (!edit->instance_id.empty() && edit->instance_id != instance.id) continue;
      selected = true;
      if (absl::Status s = EditTemplate(*edit, pod_template); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("component ", compiled.def->name,
                                                       " instance ", QuoteUserText(instance.id),
                                                       ": ", s.message()));
      }
    }
    if (selected) after[instance.id] = std::move(pod_template);
  }
  for (const PodTemplateEdit* edit : edits) {
    if (!edit->instance_id.empty() && !after.count(edit->instance_id)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component ", compiled.def->name, " has no instance ", QuoteUserText(edit->instance_id)));
    }
  }
  if (after.empty()) return object;
  if (fragmented) return WriteFragments(eval, object, component, node, before, after);
  // Every instance is written: unselected ones keep their template.
  std::map<std::string, Json> templates = before;
  for (auto& [id, t] : after) templates[id] = std::move(t);
  if (compiled.pod_template_spec_paths != kNone) {
    return UpdatePodField(eval, object, component, PodField::kPodTemplateSpec, templates);
  }
  std::map<std::string, Json> specs, metadata;
  for (auto& [id, t] : templates) {
    specs[id] = t.value("spec", Json::object());
    metadata[id] = t.value("metadata", Json::object());
  }
  // Metadata is written only when an edit changed it, and then needs a path.
  bool metadata_changed = false;
  for (const auto& [id, t] : after) {
    metadata_changed =
        metadata_changed || metadata.at(id) != before.at(id).value("metadata", Json::object());
  }
  if (metadata_changed && compiled.metadata_paths == kNone) {
    return absl::InvalidArgumentError(absl::StrCat(
        "component ", compiled.def->name, ": the definition has no path to write /metadata"));
  }
  auto result = UpdatePodField(eval, object, component, PodField::kPodSpec, specs);
  if (!result.ok() || !metadata_changed) return result;
  return UpdatePodField(eval, *result, component, PodField::kMetadata, metadata);
}

}  // namespace

absl::StatusOr<Json> EditWorkload(const definitions::CompiledDefinition& def,
                                  expressions::Engine& engine, const Json& object,
                                  const WorkloadEdit& edit) {
  Json result = object;
  absl::Status status = engine.Run([&](expressions::Session& session) -> absl::Status {
    Evaluation eval(def, session);
    // An edit rewrites pod templates by instance: it needs the whole tree,
    // where a resolution can do with part of it.
    ComponentNode tree = BuildTree(eval, eval.Load(object));
    if (const ComponentNode* failed = FirstFailed(tree)) return failed->error;
    for (const PodTemplateEdit& e : edit.templates) {
      if (e.component.empty()) continue;
      const int index = def.ComponentIndex(e.component);
      if (index < 0) {
        return absl::InvalidArgumentError(absl::StrCat("changes: no component ",
                                                       QuoteUserText(e.component),
                                                       " in definition ", def.definition->name));
      }
      // Its pod templates would be skipped below: the edit would select
      // nothing.
      if (!def.components[index].def->HasPodDefinition()) {
        return absl::InvalidArgumentError(absl::StrCat("changes: component \"", e.component,
                                                       "\" of definition ", def.definition->name,
                                                       " has no pod definition"));
      }
    }
    for (size_t c = 0; c < def.components.size(); ++c) {
      const auto& component = def.components[c];
      if (!component.def->HasPodDefinition()) continue;
      std::vector<const PodTemplateEdit*> edits;
      for (const PodTemplateEdit& e : edit.templates) {
        if (e.component.empty() || e.component == component.def->name) edits.push_back(&e);
      }
      if (edits.empty()) continue;
      const ComponentNode* node = FindNode(tree, static_cast<int>(c));
      if (node == nullptr) continue;
      auto edited = EditComponent(eval, result, static_cast<int>(c), *node, edits);
      if (!edited.ok()) return edited.status();
      result = *std::move(edited);
    }
    if (edit.suspend) {
      bool any = false;
      for (size_t c = 0; c < def.components.size(); ++c) {
        if (!def.components[c].def->suspend) continue;
        any = true;
        auto suspended = ApplySuspend(eval, result, static_cast<int>(c), *edit.suspend);
        if (!suspended.ok()) return suspended.status();
        result = *std::move(suspended);
      }
      if (!any) {
        return absl::FailedPreconditionError(
            absl::StrCat("definition ", def.definition->name, " defines no suspend actions"));
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return result;
}

}  // namespace wm::resolution
