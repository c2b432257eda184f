#include "server/definitions/parse.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/common/yaml_json.h"

namespace wm {
const std::vector<std::pair<std::string, std::string>>& EmbeddedKartaCrd();
}  // namespace wm

namespace wm::definitions {
namespace {

using S = Finding::Severity;

std::optional<std::string> OptString(const Json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string String(const Json& obj, const char* key) { return OptString(obj, key).value_or(""); }

const Json& Field(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::vector<std::string> Strings(const Json& array) {
  std::vector<std::string> out;
  if (!array.is_array()) return out;
  for (const auto& v : array) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

GroupVersionKind ToGvk(const Json& j) {
  return {String(j, "group"), String(j, "version"), String(j, "kind")};
}

std::optional<Topology> ToTopology(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  return Topology{String(j, "topologyName"), String(j, "requiredTopologyLevel"),
                  String(j, "preferredTopologyLevel")};
}

StatusDefinition ToStatus(const Json& j) {
  StatusDefinition status;
  if (const Json& phase = Field(j, "phaseDefinition"); phase.is_object()) {
    status.phase_path = OptString(phase, "path");
  }
  if (const Json& c = Field(j, "conditionsDefinition"); c.is_object()) {
    ConditionsDefinition cond;
    cond.path = String(c, "path");
    cond.type_field_name = String(c, "typeFieldName");
    cond.status_field_name = String(c, "statusFieldName");
    cond.message_field_name = String(c, "messageFieldName");
    cond.reason_field_name = String(c, "reasonFieldName");
    status.conditions = cond;
  }
  const Json& mappings = Field(j, "statusMappings");
  for (int i = 0; i < kMappedStatusCount; ++i) {
    const Json& list = Field(mappings, StatusMappingKey(static_cast<WorkloadStatus>(i)));
    if (!list.is_array()) continue;
    for (const Json& m : list) {
      StatusMatcher matcher;
      matcher.by_phase = String(m, "byPhase");
      for (const Json& c :
           Field(m, "byConditions").is_array() ? Field(m, "byConditions") : Json::array()) {
        matcher.by_conditions.push_back(
            {String(c, "type"), String(c, "status"), String(c, "reason")});
      }
      if (const Json& e = Field(m, "byExpression"); e.is_object()) {
        matcher.by_expression = ByExpression{String(e, "expression"), String(e, "expectedResult")};
      }
      status.mappings[i].push_back(std::move(matcher));
    }
  }
  return status;
}

std::vector<SuspendAction> ToActions(const Json& list) {
  std::vector<SuspendAction> actions;
  if (!list.is_array()) return actions;
  for (const Json& a : list) actions.push_back({String(a, "path"), String(a, "value")});
  return actions;
}

ComponentDefinition ToComponent(const Json& j) {
  ComponentDefinition c;
  c.name = String(j, "name");
  if (const Json& kind = Field(j, "kind"); kind.is_object()) c.kind = ToGvk(kind);
  c.owner_ref = String(j, "ownerRef");
  if (const Json& spec = Field(j, "specDefinition"); spec.is_object()) {
    SpecDefinition s;
    s.pod_template_spec_path = OptString(spec, "podTemplateSpecPath");
    s.pod_spec_path = OptString(spec, "podSpecPath");
    s.metadata_path = OptString(spec, "metadataPath");
    if (const Json& f = Field(spec, "fragmentedPodSpecDefinition"); f.is_object()) {
      FragmentedPodSpec frag;
      for (int i = 0; i < FragmentedPodSpec::kFieldCount; ++i) {
        frag.paths[i] = OptString(f, FragmentedPodSpec::PathKey(FragmentedPodSpec::Field(i)));
      }
      s.fragmented = frag;
    }
    c.spec = s;
  }
  if (const Json& scale = Field(j, "scaleDefinition"); scale.is_object()) {
    c.scale = ScaleDefinition{OptString(scale, "replicasPath"), OptString(scale, "minReplicasPath"),
                              OptString(scale, "maxReplicasPath")};
  }
  if (const Json& status = Field(j, "statusDefinition"); status.is_object()) {
    c.status = ToStatus(status);
  }
  if (const Json& suspend = Field(j, "suspendDefinition"); suspend.is_object()) {
    c.suspend = SuspendDefinition{ToActions(Field(suspend, "suspendActions")),
                                  ToActions(Field(suspend, "resumeActions"))};
  }
  c.instance_id_path = OptString(j, "instanceIdPath");
  if (const Json& sel = Field(j, "podSelector"); sel.is_object()) {
    PodSelector ps;
    if (const Json& t = Field(sel, "componentTypeSelector"); t.is_object()) {
      ComponentTypeSelector ts;
      ts.key_path = OptString(t, "keyPath");
      ts.value = OptString(t, "value");
      if (const Json& labels = Field(t, "matchLabels"); labels.is_object()) {
        for (const auto& [k, v] : labels.items()) {
          if (v.is_string()) ts.match_labels[k] = v.get<std::string>();
        }
      }
      ps.component_type_selector = ts;
    }
    if (const Json& i = Field(sel, "componentInstanceSelector"); i.is_object()) {
      ps.instance_id_path = OptString(i, "idPath");
    }
    if (const Json& r = Field(sel, "replicaSelector"); r.is_object()) {
      ps.replica_key_path = OptString(r, "keyPath");
    }
    c.pod_selector = ps;
  }
  return c;
}

GangScheduling ToGang(const Json& j) {
  GangScheduling gang;
  for (const Json& g : Field(j, "podGroups").is_array() ? Field(j, "podGroups") : Json::array()) {
    PodGroupsEntry entry;
    entry.name = String(g, "name");
    for (const Json& m : Field(g, "members").is_array() ? Field(g, "members") : Json::array()) {
      entry.members.push_back({String(m, "componentName"), Strings(Field(m, "groupByKeyPaths")),
                               Strings(Field(m, "filters"))});
    }
    gang.pod_groups.push_back(std::move(entry));
  }
  if (const Json& pg = Field(j, "podGroup"); pg.is_object()) {
    PodGroupDefinition def;
    def.name = String(pg, "name");
    def.topology = ToTopology(Field(pg, "topology"));
    for (const Json& s :
         Field(pg, "subGroups").is_array() ? Field(pg, "subGroups") : Json::array()) {
      def.sub_groups.push_back({String(s, "componentName"), ToTopology(Field(s, "topology"))});
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
  result.name = String(Field(object, "metadata"), "name");
  if (String(object, "apiVersion") != "run.ai/v1alpha1" || String(object, "kind") != "Karta") {
    result.findings.push_back(
        {S::kError, "",
         absl::StrCat("not a Karta definition: apiVersion \"", String(object, "apiVersion"),
                      "\", kind \"", String(object, "kind"), "\" (want run.ai/v1alpha1 Karta)")});
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
  for (const auto& [path, keys] :
       std::vector<std::pair<std::string, std::vector<absl::string_view>>>{
           {"spec", {"spec"}},
           {"spec.structureDefinition", {"spec", "structureDefinition"}},
           {"spec.structureDefinition.rootComponent",
            {"spec", "structureDefinition", "rootComponent"}}}) {
    const Json* node = &object;
    for (absl::string_view key : keys) {
      node = node != nullptr && node->is_object() && node->contains(std::string(key))
                 ? &(*node)[std::string(key)]
                 : nullptr;
    }
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
  const Json& sd = object["spec"]["structureDefinition"];
  def.root = ToComponent(sd["rootComponent"]);
  for (const Json& c :
       Field(sd, "childComponents").is_array() ? sd["childComponents"] : Json::array()) {
    def.children.push_back(ToComponent(c));
  }
  for (const Json& k :
       Field(sd, "additionalChildKinds").is_array() ? sd["additionalChildKinds"] : Json::array()) {
    def.additional_child_kinds.push_back(ToGvk(k));
  }
  def.gang = ToGang(Field(Field(object["spec"], "optimizationInstructions"), "gangScheduling"));
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
