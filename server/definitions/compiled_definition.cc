#include "server/definitions/compiled_definition.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "server/definitions/validate.h"

namespace wm::definitions {
namespace {

// Collects sources and remembers where each came from.
class ProgramBuilder {
 public:
  ExprIndex Add(const std::string& field_path, std::string source) {
    sources_.push_back(std::move(source));
    field_paths_.push_back(field_path);
    return static_cast<ExprIndex>(sources_.size() - 1);
  }
  ExprIndex Read(const std::string& field_path, const std::optional<std::string>& expr) {
    return expr ? Add(field_path, *expr) : kNone;
  }
  ExprIndex Paths(const std::string& field_path, const std::optional<std::string>& expr) {
    return expr ? Add(field_path, absl::StrCat("path(", *expr, "\n)")) : kNone;
  }
  std::vector<std::string>& sources() { return sources_; }
  std::vector<std::string>& field_paths() { return field_paths_; }

 private:
  std::vector<std::string> sources_;
  std::vector<std::string> field_paths_;
};

void CompileComponent(const ComponentDefinition& c, const std::string& path, ProgramBuilder& b,
                      CompiledComponent& out) {
  out.def = &c;
  out.instance_ids = b.Read(FieldPath(path, "instanceIdPath"), c.instance_id_path);
  if (c.spec) {
    std::string sp = FieldPath(path, "specDefinition");
    std::string pts = FieldPath(sp, "podTemplateSpecPath");
    out.pod_template_spec = b.Read(pts, c.spec->pod_template_spec_path);
    out.pod_template_spec_paths = b.Paths(pts, c.spec->pod_template_spec_path);
    std::string ps = FieldPath(sp, "podSpecPath");
    out.pod_spec = b.Read(ps, c.spec->pod_spec_path);
    out.pod_spec_paths = b.Paths(ps, c.spec->pod_spec_path);
    std::string md = FieldPath(sp, "metadataPath");
    out.metadata = b.Read(md, c.spec->metadata_path);
    out.metadata_paths = b.Paths(md, c.spec->metadata_path);
    if (c.spec->fragmented) {
      std::string fp = FieldPath(sp, "fragmentedPodSpecDefinition");
      for (int f = 0; f < FragmentedPodSpec::kFieldCount; ++f) {
        std::string field = FieldPath(fp, FragmentedPodSpec::PathKey(FragmentedPodSpec::Field(f)));
        out.fragmented[f] = b.Read(field, c.spec->fragmented->paths[f]);
        out.fragmented_paths[f] = b.Paths(field, c.spec->fragmented->paths[f]);
      }
    }
  }
  if (c.scale) {
    std::string sp = FieldPath(path, "scaleDefinition");
    out.replicas = b.Read(FieldPath(sp, "replicasPath"), c.scale->replicas_path);
    out.min_replicas = b.Read(FieldPath(sp, "minReplicasPath"), c.scale->min_replicas_path);
    out.max_replicas = b.Read(FieldPath(sp, "maxReplicasPath"), c.scale->max_replicas_path);
  }
  if (c.pod_selector) {
    std::string sp = FieldPath(path, "podSelector");
    if (const auto& ts = c.pod_selector->component_type_selector; ts && ts->key_path) {
      std::string kp = FieldPath(FieldPath(sp, "componentTypeSelector"), "keyPath");
      out.type_key = b.Add(kp, *ts->key_path);
      if (ts->value)
        out.type_equality = b.Add(kp, *ts->key_path + " == " + Json(*ts->value).dump());
    }
    out.instance_selector = b.Read(FieldPath(FieldPath(sp, "componentInstanceSelector"), "idPath"),
                                   c.pod_selector->instance_id_path);
    out.replica_selector = b.Read(FieldPath(FieldPath(sp, "replicaSelector"), "keyPath"),
                                  c.pod_selector->replica_key_path);
    const auto& ts = c.pod_selector->component_type_selector;
    out.type_key_is_instance_id = ts && ts->key_path && !ts->value && ts->match_labels.empty() &&
                                  ts->key_path == c.pod_selector->instance_id_path;
  }
  if (c.suspend) {
    std::string sp = FieldPath(path, "suspendDefinition");
    for (size_t a = 0; a < c.suspend->suspend_actions.size(); ++a) {
      out.suspend_paths.push_back(
          b.Paths(FieldPath(IndexPath(FieldPath(sp, "suspendActions"), a), "path"),
                  c.suspend->suspend_actions[a].path));
    }
    for (size_t a = 0; a < c.suspend->resume_actions.size(); ++a) {
      out.resume_paths.push_back(
          b.Paths(FieldPath(IndexPath(FieldPath(sp, "resumeActions"), a), "path"),
                  c.suspend->resume_actions[a].path));
    }
  }
  if (c.status) {
    std::string sp = FieldPath(path, "statusDefinition");
    out.phase = b.Read(FieldPath(FieldPath(sp, "phaseDefinition"), "path"), c.status->phase_path);
    if (c.status->conditions) {
      out.conditions = b.Add(FieldPath(FieldPath(sp, "conditionsDefinition"), "path"),
                             c.status->conditions->path);
    }
    for (int s = 0; s < kMappedStatusCount; ++s) {
      for (size_t m = 0; m < c.status->mappings[s].size(); ++m) {
        const auto& e = c.status->mappings[s][m].by_expression;
        out.matcher_expressions[s].push_back(
            e ? b.Add(FieldPath(IndexPath(FieldPath(FieldPath(sp, "statusMappings"),
                                                    StatusMappingKey(WorkloadStatus(s))),
                                          m),
                                "byExpression") +
                          ".expression",
                      absl::StrCat("(", e->expression, "\n) | tostring"))
              : kNone);
      }
    }
  }
}

}  // namespace

int CompiledDefinition::ComponentIndex(const std::string& name) const {
  for (size_t i = 0; i < components.size(); ++i) {
    if (components[i].def->name == name) return static_cast<int>(i);
  }
  return -1;
}

int CompiledDefinition::SpecCount() const {
  int count = 0;
  for (const auto& c : components) count += c.def->spec ? 1 : 0;
  return count;
}

absl::StatusOr<std::shared_ptr<const CompiledDefinition>> CompileDefinition(
    const ValidatedDefinition& def, expressions::Engine& engine, std::vector<Finding>* findings) {
  std::vector<Finding> found = def.findings();
  auto is_error = [](const Finding& f) { return f.is_error(); };
  auto fail = [&](std::vector<Finding> all) -> absl::Status {
    size_t errors = std::count_if(all.begin(), all.end(), is_error);
    std::string first;
    for (const auto& f : all) {
      if (f.is_error()) {
        first = f.ToString();
        break;
      }
    }
    if (findings != nullptr) *findings = std::move(all);
    return absl::InvalidArgumentError(absl::StrCat("invalid definition ", def.definition()->name,
                                                   ": ", errors, " finding(s), first: ", first));
  };
  if (!def.ok()) return fail(std::move(found));

  auto compiled = std::make_shared<CompiledDefinition>();
  compiled->definition = def.definition();
  const Definition& d = *compiled->definition;
  ProgramBuilder builder;
  compiled->components.resize(d.children.size() + 1);
  for (size_t i = 0; i <= d.children.size(); ++i) {
    const ComponentDefinition& c = i == 0 ? d.root : d.children[i - 1];
    CompileComponent(c, ComponentPath(i), builder, compiled->components[i]);
  }
  for (size_t i = 0; i < compiled->components.size(); ++i) {
    if (compiled->components[i].def->HasPodDefinition()) {
      compiled->pod_components.push_back(static_cast<int>(i));
    }
  }
  for (size_t i = 1; i <= d.children.size(); ++i) {
    int parent = compiled->ComponentIndex(d.children[i - 1].owner_ref);
    compiled->components[i].parent = parent;
    compiled->components[parent].children.push_back(static_cast<int>(i));
  }
  const std::string gang = "spec.optimizationInstructions.gangScheduling";
  for (size_t g = 0; g < d.gang.pod_groups.size(); ++g) {
    auto& members = compiled->pod_group_members.emplace_back();
    for (size_t m = 0; m < d.gang.pod_groups[g].members.size(); ++m) {
      const auto& member = d.gang.pod_groups[g].members[m];
      std::string mp =
          IndexPath(FieldPath(IndexPath(FieldPath(gang, "podGroups"), g), "members"), m);
      CompiledGangMember cm;
      for (size_t k = 0; k < member.group_by_key_paths.size(); ++k) {
        cm.group_by_key_paths.push_back(builder.Add(IndexPath(FieldPath(mp, "groupByKeyPaths"), k),
                                                    member.group_by_key_paths[k]));
      }
      for (size_t k = 0; k < member.filters.size(); ++k) {
        cm.filters.push_back(
            builder.Add(IndexPath(FieldPath(mp, "filters"), k), member.filters[k]));
      }
      members.push_back(std::move(cm));
    }
  }
  std::vector<expressions::Engine::CompileError> errors;
  auto program = engine.Compile(builder.sources(), &errors);
  if (!program.ok()) {
    if (errors.empty()) return program.status();
    std::set<std::string> reported;
    for (const auto& e : errors) {
      const std::string& field = builder.field_paths()[e.index];
      if (reported.insert(field).second) {
        found.push_back(
            {Finding::Severity::kError, field, absl::StrCat("jq does not compile: ", e.message)});
      }
    }
    return fail(std::move(found));
  }
  compiled->program = *std::move(program);
  compiled->field_paths = std::move(builder.field_paths());
  compiled->warnings = found;
  if (findings != nullptr) *findings = std::move(found);
  return std::shared_ptr<const CompiledDefinition>(std::move(compiled));
}

absl::StatusOr<std::shared_ptr<const CompiledDefinition>> CompileDefinition(
    Definition def, expressions::Engine& engine, std::vector<Finding>* findings) {
  return CompileDefinition(ValidatedDefinition(std::move(def)), engine, findings);
}

}  // namespace wm::definitions
