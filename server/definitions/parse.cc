#include "server/definitions/parse.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/common/yaml_json.h"

namespace wm {
const std::vector<std::pair<std::string, std::string>>& EmbeddedKartaCrd();
}  // namespace wm

namespace wm::definitions {
namespace {

using S = Finding::Severity;

Gvk ToGvk(const Json& j) {
  return {FindString(j, {"group"}), FindString(j, {"version"}), FindString(j, {"kind"})};
}

std::optional<Topology> ToTopology(const Json* j) {
  if (j == nullptr || !j->is_object()) return std::nullopt;
  return Topology{FindString(*j, {"topologyName"}), FindString(*j, {"requiredTopologyLevel"}),
                  FindString(*j, {"preferredTopologyLevel"})};
}

StatusDefinition ToStatus(const Json& j) {
  StatusDefinition status;
  if (const Json* phase = Find(j, {"phaseDefinition"}); phase != nullptr && phase->is_object()) {
    status.phase_path = FindOptionalString(*phase, {"path"});
  }
  if (const Json* c = Find(j, {"conditionsDefinition"}); c != nullptr && c->is_object()) {
    ConditionsDefinition cond;
    cond.path = FindString(*c, {"path"});
    cond.type_field_name = FindString(*c, {"typeFieldName"});
    cond.status_field_name = FindString(*c, {"statusFieldName"});
    cond.message_field_name = FindString(*c, {"messageFieldName"});
    cond.reason_field_name = FindString(*c, {"reasonFieldName"});
    status.conditions = cond;
  }
  for (int i = 0; i < kMappedStatusCount; ++i) {
    const Json* list =
        Find(j, {"statusMappings", StatusMappingKey(static_cast<WorkloadStatus>(i))});
    if (list == nullptr || !list->is_array()) continue;
    for (const Json& m : *list) {
      StatusMatcher matcher;
      matcher.by_phase = FindString(m, {"byPhase"});
      if (const Json* conditions = Find(m, {"byConditions"});
          conditions != nullptr && conditions->is_array()) {
        for (const Json& c : *conditions) {
          matcher.by_conditions.push_back(
              {FindString(c, {"type"}), FindString(c, {"status"}), FindString(c, {"reason"})});
        }
      }
      if (const Json* e = Find(m, {"byExpression"}); e != nullptr && e->is_object()) {
        matcher.by_expression =
            ByExpression{FindString(*e, {"expression"}), FindString(*e, {"expectedResult"})};
      }
      status.mappings[i].push_back(std::move(matcher));
    }
  }
  return status;
}

std::vector<SuspendAction> ToActions(const Json* list) {
  std::vector<SuspendAction> actions;
  if (list == nullptr || !list->is_array()) return actions;
  for (const Json& a : *list) {
    actions.push_back({FindString(a, {"path"}), FindString(a, {"value"})});
  }
  return actions;
}

ComponentDefinition ToComponent(const Json& j) {
  ComponentDefinition c;
  c.name = FindString(j, {"name"});
  if (const Json* kind = Find(j, {"kind"}); kind != nullptr && kind->is_object()) {
    c.kind = ToGvk(*kind);
  }
  c.owner_ref = FindString(j, {"ownerRef"});
  if (const Json* spec = Find(j, {"specDefinition"}); spec != nullptr && spec->is_object()) {
    SpecDefinition s;
    s.pod_template_spec_path = FindOptionalString(*spec, {"podTemplateSpecPath"});
    s.pod_spec_path = FindOptionalString(*spec, {"podSpecPath"});
    s.metadata_path = FindOptionalString(*spec, {"metadataPath"});
    if (const Json* f = Find(*spec, {"fragmentedPodSpecDefinition"});
        f != nullptr && f->is_object()) {
      FragmentedPodSpec frag;
      for (int i = 0; i < FragmentedPodSpec::kFieldCount; ++i) {
        frag.paths[i] =
            FindOptionalString(*f, {FragmentedPodSpec::PathKey(FragmentedPodSpec::Field(i))});
      }
      s.fragmented = frag;
    }
    c.spec = s;
  }
  if (const Json* scale = Find(j, {"scaleDefinition"}); scale != nullptr && scale->is_object()) {
    c.scale = ScaleDefinition{FindOptionalString(*scale, {"replicasPath"}),
                              FindOptionalString(*scale, {"minReplicasPath"}),
                              FindOptionalString(*scale, {"maxReplicasPath"})};
  }
  if (const Json* status = Find(j, {"statusDefinition"});
      status != nullptr && status->is_object()) {
    c.status = ToStatus(*status);
  }
  if (const Json* suspend = Find(j, {"suspendDefinition"});
      suspend != nullptr && suspend->is_object()) {
    c.suspend = SuspendDefinition{ToActions(Find(*suspend, {"suspendActions"})),
                                  ToActions(Find(*suspend, {"resumeActions"}))};
  }
  c.instance_id_path = FindOptionalString(j, {"instanceIdPath"});
  if (const Json* sel = Find(j, {"podSelector"}); sel != nullptr && sel->is_object()) {
    PodSelector ps;
    if (const Json* t = Find(*sel, {"componentTypeSelector"}); t != nullptr && t->is_object()) {
      ComponentTypeSelector ts;
      ts.key_path = FindOptionalString(*t, {"keyPath"});
      ts.value = FindOptionalString(*t, {"value"});
      if (const Json* labels = Find(*t, {"matchLabels"});
          labels != nullptr && labels->is_object()) {
        for (const auto& [k, v] : labels->items()) {
          if (v.is_string()) ts.match_labels[k] = v.get<std::string>();
        }
      }
      ps.component_type_selector = ts;
    }
    if (const Json* i = Find(*sel, {"componentInstanceSelector"}); i != nullptr && i->is_object()) {
      ps.instance_id_path = FindOptionalString(*i, {"idPath"});
    }
    if (const Json* r = Find(*sel, {"replicaSelector"}); r != nullptr && r->is_object()) {
      ps.replica_key_path = FindOptionalString(*r, {"keyPath"});
    }
    c.pod_selector = ps;
  }
  return c;
}

GangScheduling ToGang(const Json& j) {
  GangScheduling gang;
  if (const Json* groups = Find(j, {"podGroups"}); groups != nullptr && groups->is_array()) {
    for (const Json& g : *groups) {
      PodGroupsEntry entry;
      entry.name = FindString(g, {"name"});
      if (const Json* members = Find(g, {"members"}); members != nullptr && members->is_array()) {
        for (const Json& m : *members) {
          entry.members.push_back({FindString(m, {"componentName"}),
                                   StringsOf(Find(m, {"groupByKeyPaths"})),
                                   StringsOf(Find(m, {"filters"}))});
        }
      }
      gang.pod_groups.push_back(std::move(entry));
    }
  }
  if (const Json* pg = Find(j, {"podGroup"}); pg != nullptr && pg->is_object()) {
    PodGroupDefinition def;
    def.name = FindString(*pg, {"name"});
    def.topology = ToTopology(Find(*pg, {"topology"}));
    if (const Json* subs = Find(*pg, {"subGroups"}); subs != nullptr && subs->is_array()) {
      for (const Json& s : *subs) {
        def.sub_groups.push_back(
            {FindString(s, {"componentName"}), ToTopology(Find(s, {"topology"}))});
      }
    }
    gang.pod_group = def;
  }
  return gang;
}

// Maps the deprecated `pending` status key of one statusMappings object.
void MapPendingAlias(Json& component, const std::string& path, std::vector<Finding>& findings) {
  if (!component.is_object()) return;
  auto sd = component.find("statusDefinition");
  if (sd == component.end() || !sd->is_object()) return;
  auto mappings = sd->find("statusMappings");
  if (mappings == sd->end() || !mappings->is_object() || !mappings->contains("pending")) return;
  std::string key_path =
      FieldPath(FieldPath(FieldPath(path, "statusDefinition"), "statusMappings"), "pending");
  Json pending = (*mappings)["pending"];
  mappings->erase("pending");
  Json& initializing = (*mappings)["initializing"];
  if (initializing.is_null()) initializing = Json::array();
  if (pending.is_array() && initializing.is_array()) {
    for (auto& m : pending) initializing.push_back(m);
  }
  findings.push_back(
      {S::kWarning, key_path, "deprecated status key \"pending\": read as \"initializing\""});
}

}  // namespace

const Json& KartaSchema() {
  static const Json* schema = [] {
    const auto& files = EmbeddedKartaCrd();
    auto docs = ParseYamlDocuments(files.at(0).second);
    auto* s = new Json();
    if (docs.ok() && !docs->empty()) {
      for (const Json& v : (*docs)[0]["spec"]["versions"]) {
        if (v.value("name", "") == "v1alpha1") *s = v["schema"]["openAPIV3Schema"];
      }
    }
    return s;
  }();
  return *schema;
}

ParsedDefinition ParseDefinition(Json object, Origin origin, const std::string& source) {
  ParsedDefinition result;
  result.source = source;
  if (!object.is_object()) {
    result.findings.push_back({S::kError, "", "a definition must be an object"});
    return result;
  }
  result.name = FindString(object, {"metadata", "name"});
  std::string api_version = FindString(object, {"apiVersion"});
  std::string kind = FindString(object, {"kind"});
  if (api_version != "run.ai/v1alpha1" || kind != "Karta") {
    result.findings.push_back(
        {S::kError, "",
         absl::StrCat("not a Karta definition: apiVersion \"", api_version, "\", kind \"", kind,
                      "\" (want run.ai/v1alpha1 Karta)")});
    return result;
  }
  Json* structure = nullptr;
  if (auto spec = object.find("spec"); spec != object.end() && spec->is_object()) {
    if (auto it = spec->find("structureDefinition"); it != spec->end() && it->is_object()) {
      structure = &*it;
    }
  }
  if (structure != nullptr) {
    Json& sd = *structure;
    if (auto root = sd.find("rootComponent"); root != sd.end()) {
      MapPendingAlias(*root, "spec.structureDefinition.rootComponent", result.findings);
    }
    if (auto children = sd.find("childComponents"); children != sd.end() && children->is_array()) {
      for (size_t i = 0; i < children->size(); ++i) {
        MapPendingAlias((*children)[i], IndexPath("spec.structureDefinition.childComponents", i),
                        result.findings);
      }
    }
  }
  ValidateAgainstSchema(KartaSchema(), object, "", result.findings);
  if (result.name.empty()) {
    result.findings.push_back({S::kError, "metadata.name", "required value"});
  }
  // The CRD does not mark spec required at the top level; we need it.
  for (const auto& [path, node] : std::initializer_list<std::pair<const char*, const Json*>>{
           {"spec", Find(object, {"spec"})},
           {"spec.structureDefinition", Find(object, {"spec", "structureDefinition"})},
           {"spec.structureDefinition.rootComponent",
            Find(object, {"spec", "structureDefinition", "rootComponent"})}}) {
    if (node == nullptr || !node->is_object()) {
      result.findings.push_back({S::kError, path, "required value"});
      break;
    }
  }
  bool structural_error = std::any_of(result.findings.begin(), result.findings.end(),
                                      [](const Finding& f) { return f.is_error(); });
  if (structural_error) return result;

  Definition def;
  def.name = result.name;
  def.origin = origin;
  def.source = source;
  const Json& sd = *Find(object, {"spec", "structureDefinition"});  // checked above
  def.root = ToComponent(*Find(sd, {"rootComponent"}));
  if (const Json* children = Find(sd, {"childComponents"});
      children != nullptr && children->is_array()) {
    for (const Json& c : *children) def.children.push_back(ToComponent(c));
  }
  if (const Json* kinds = Find(sd, {"additionalChildKinds"});
      kinds != nullptr && kinds->is_array()) {
    for (const Json& k : *kinds) def.additional_child_kinds.push_back(ToGvk(k));
  }
  if (const Json* gang = Find(object, {"spec", "optimizationInstructions", "gangScheduling"});
      gang != nullptr) {
    def.gang = ToGang(*gang);
  }
  def.object = std::move(object);
  result.definition = std::move(def);
  return result;
}

absl::StatusOr<std::vector<ParsedDefinition>> LoadDefinitionFiles(const std::string& path,
                                                                  Origin origin) {
  std::vector<std::string> files;
  std::error_code ec;
  if (path != "-" && std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path, ec)) {
      std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
        files.push_back(entry.path().string());
      }
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::vector<ParsedDefinition> out;
  for (const std::string& file : files) {
    absl::StatusOr<std::vector<Json>> docs;
    if (file == "-") {
      std::string text(std::istreambuf_iterator<char>(std::cin), {});
      docs = ParseYamlDocuments(text);
    } else {
      docs = ReadYamlFile(file);
    }
    if (!docs.ok()) return docs.status();
    std::string name = file == "-" ? "stdin" : file;
    for (size_t i = 0; i < docs->size(); ++i) {
      std::string source = docs->size() > 1 ? absl::StrCat(name, "#", i + 1) : name;
      out.push_back(ParseDefinition(std::move((*docs)[i]), origin, source));
    }
  }
  return out;
}

}  // namespace wm::definitions
