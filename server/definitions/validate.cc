#include "server/definitions/validate.h"

#include <map>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/expressions/jq_scanner.h"

namespace wm::definitions {
namespace {

using S = Finding::Severity;
using expressions::JqToken;

const ComponentDefinition& ComponentAt(const Definition& def, size_t index) {
  return index == 0 ? def.root : def.children[index - 1];
}

// Whether a jq expression may yield several values, read statically from its
// tokens. Generators are iterations `X[]` and subscripts whose index is
// itself a generator (`X[(.k | keys[])]` yields one value per key).
// Parentheses are looked through; array and object constructions and
// function arguments count as one value (they collect, or what they yield
// cannot be told). Keywords are not parsed: `reduce .a[] as $x (...)` counts
// as iterating. Linear in the number of tokens, without recursion.
class YieldReader {
 public:
  explicit YieldReader(const std::vector<JqToken>& tokens)
      : t_(tokens), closing_(tokens.size(), tokens.size()) {
    std::vector<size_t> open;
    for (size_t i = 0; i < t_.size(); ++i) {
      if (IsOp(i, "(") || IsOp(i, "[") || IsOp(i, "{")) open.push_back(i);
      if ((IsOp(i, ")") || IsOp(i, "]") || IsOp(i, "}")) && !open.empty()) {
        closing_[open.back()] = i;
        open.pop_back();
      }
    }
  }

  // True when the expression may yield several values.
  bool Iterates() const { return Iterates(0, t_.size()); }

  // True when a `//` outside parentheses and brackets has a left operand
  // (back to the previous such `|` or `,`) that iterates: `A[].x // d` keeps
  // only the truthy outputs of the generator, so values shift between
  // instances.
  bool CollapsesGenerator() const {
    size_t operand = 0;
    for (size_t i = 0; i < t_.size(); ++i) {
      if (IsOp(i, "(") || IsOp(i, "[") || IsOp(i, "{")) {
        i = closing_[i];
      } else if (IsOp(i, "|") || IsOp(i, ",")) {
        operand = i + 1;
      } else if (IsOp(i, "//")) {
        if (Iterates(operand, i)) return true;
        operand = i + 1;  // the operand so far does not iterate: read on from here
      }
    }
    return false;
  }

 private:
  // Whether tokens [begin, end) may yield several values. Groups and
  // subscript indices are read in place, as part of the range.
  bool Iterates(size_t begin, size_t end) const {
    for (size_t i = begin; i < end; ++i) {
      bool after_term = i > begin && EndsTerm(t_[i - 1]);
      if (IsOp(i, "[") && after_term) {
        if (closing_[i] == i + 1) return true;  // X[]
        continue;                               // X[index]: read the index
      }
      if (IsOp(i, "(") && !after_term) continue;  // a group: read it
      // A call's arguments (`first(.a[])`), an array (`[.a[]]`) or an object.
      if (IsOp(i, "(") || IsOp(i, "[") || IsOp(i, "{")) i = closing_[i];
    }
    return false;
  }

  bool IsOp(size_t i, absl::string_view op) const {
    return t_[i].kind == JqToken::Kind::kOperator && t_[i].text == op;
  }

  // True when `t` can end a term: a `[` after it is a subscript, and a `(`
  // after it (after a function name) holds a call's arguments.
  static bool EndsTerm(const JqToken& t) {
    static const auto* kKeywords = new absl::flat_hash_set<absl::string_view>{
        "if",      "then", "elif",  "else", "and",   "or",     "as",     "reduce",
        "foreach", "try",  "catch", "def",  "label", "import", "include"};
    switch (t.kind) {
      case JqToken::Kind::kField:
      case JqToken::Kind::kVariable:
      case JqToken::Kind::kString:
        return true;
      case JqToken::Kind::kIdentifier:
        return !kKeywords->contains(t.text);
      case JqToken::Kind::kOperator:
        return t.text == "]" || t.text == ")" || t.text == "}" || t.text == "." || t.text == "?";
      default:
        return false;
    }
  }

  const std::vector<JqToken>& t_;
  std::vector<size_t> closing_;  // per opening bracket, its closer; else t_.size()
};

bool CollapsesGenerator(const std::string& expr) {
  auto tokens = expressions::ScanJq(expr);
  return tokens.ok() && YieldReader(*tokens).CollapsesGenerator();
}

bool Iterates(const std::string& expr) {
  auto tokens = expressions::ScanJq(expr);
  return tokens.ok() && YieldReader(*tokens).Iterates();
}

void CheckComponent(const Definition& def, size_t index, std::vector<Finding>& out) {
  const ComponentDefinition& c = ComponentAt(def, index);
  std::string path = ComponentPath(index);
  if (c.name.empty()) out.push_back({S::kError, FieldPath(path, "name"), "component has no name"});
  if (c.spec) {
    int shapes = (c.spec->pod_template_spec_path ? 1 : 0) + (c.spec->pod_spec_path ? 1 : 0) +
                 (c.spec->fragmented ? 1 : 0);
    if (shapes > 1) {
      out.push_back({S::kError, FieldPath(path, "specDefinition"),
                     absl::StrCat("component '", c.name,
                                  "' has more than one pod spec definition (podTemplateSpecPath, "
                                  "podSpecPath, fragmentedPodSpecDefinition)")});
    }
  }
  bool has_instance_selector = c.pod_selector && c.pod_selector->instance_id_path;
  if (c.instance_id_path && !has_instance_selector) {
    out.push_back({S::kError, FieldPath(path, "instanceIdPath"),
                   absl::StrCat("component '", c.name,
                                "' has instance id path but no pod component instance selector")});
  }
  if (!c.instance_id_path && has_instance_selector) {
    out.push_back({S::kError,
                   FieldPath(FieldPath(path, "podSelector"), "componentInstanceSelector"),
                   absl::StrCat("component '", c.name,
                                "' has pod component instance selector but no instance id path")});
  }
  if (c.pod_selector && c.pod_selector->component_type_selector) {
    const auto& ts = *c.pod_selector->component_type_selector;
    std::string ts_path = FieldPath(FieldPath(path, "podSelector"), "componentTypeSelector");
    if (!ts.key_path && ts.match_labels.empty()) {
      out.push_back({S::kError, ts_path, "must set keyPath or matchLabels"});
    }
    if (ts.value && !ts.key_path) {
      out.push_back({S::kError, FieldPath(ts_path, "value"), "value requires keyPath"});
    }
  }
  if (c.scale && !c.scale->replicas_path && !c.scale->min_replicas_path &&
      !c.scale->max_replicas_path) {
    out.push_back({S::kError, FieldPath(path, "scaleDefinition"),
                   "sets no path: set replicasPath, minReplicasPath or maxReplicasPath"});
  }
  // Instance/value consistency (warnings: only an object can prove them).
  std::vector<std::pair<std::string, std::string>> value_paths;
  if (c.scale) {
    std::string sp = FieldPath(path, "scaleDefinition");
    if (c.scale->replicas_path)
      value_paths.push_back({FieldPath(sp, "replicasPath"), *c.scale->replicas_path});
    if (c.scale->min_replicas_path)
      value_paths.push_back({FieldPath(sp, "minReplicasPath"), *c.scale->min_replicas_path});
    if (c.scale->max_replicas_path)
      value_paths.push_back({FieldPath(sp, "maxReplicasPath"), *c.scale->max_replicas_path});
  }
  if (c.spec) {
    std::string sp = FieldPath(path, "specDefinition");
    if (c.spec->pod_template_spec_path)
      value_paths.push_back(
          {FieldPath(sp, "podTemplateSpecPath"), *c.spec->pod_template_spec_path});
    if (c.spec->pod_spec_path)
      value_paths.push_back({FieldPath(sp, "podSpecPath"), *c.spec->pod_spec_path});
  }
  for (const auto& [field, expr] : value_paths) {
    if (CollapsesGenerator(expr)) {
      out.push_back({S::kWarning, field,
                     "`A[].x // d` keeps only the truthy outputs of the generator, so values "
                     "shift between instances: write `A[] | (.x // d)`"});
    } else if (c.instance_id_path && Iterates(*c.instance_id_path) && !Iterates(expr)) {
      out.push_back({S::kWarning, field,
                     "yields a single value but the component has one instance per id of "
                     "instanceIdPath"});
    } else if (!c.instance_id_path && Iterates(expr)) {
      out.push_back({S::kWarning, field,
                     "may yield several values but the component has a single instance (no "
                     "instanceIdPath)"});
    }
  }
}

void CheckTopology(const std::optional<Topology>& t, const std::string& path,
                   std::vector<Finding>& out) {
  if (!t) return;
  if (t->topology_name.empty())
    out.push_back({S::kError, FieldPath(path, "topologyName"), "required value"});
  if (t->required_topology_level.empty() && t->preferred_topology_level.empty()) {
    out.push_back({S::kError, path, "set requiredTopologyLevel or preferredTopologyLevel"});
  }
}

}  // namespace

std::string ComponentPath(size_t index) {
  return index == 0 ? "spec.structureDefinition.rootComponent"
                    : IndexPath("spec.structureDefinition.childComponents", index - 1);
}

void ForEachExpression(
    const Definition& def,
    const std::function<void(const std::string& path, const std::string& expression)>& fn) {
  for (size_t i = 0; i <= def.children.size(); ++i) {
    const ComponentDefinition& c = ComponentAt(def, i);
    std::string path = ComponentPath(i);
    if (c.instance_id_path) fn(FieldPath(path, "instanceIdPath"), *c.instance_id_path);
    if (c.spec) {
      std::string sp = FieldPath(path, "specDefinition");
      if (c.spec->pod_template_spec_path)
        fn(FieldPath(sp, "podTemplateSpecPath"), *c.spec->pod_template_spec_path);
      if (c.spec->pod_spec_path) fn(FieldPath(sp, "podSpecPath"), *c.spec->pod_spec_path);
      if (c.spec->metadata_path) fn(FieldPath(sp, "metadataPath"), *c.spec->metadata_path);
      if (c.spec->fragmented) {
        std::string fp = FieldPath(sp, "fragmentedPodSpecDefinition");
        for (int f = 0; f < FragmentedPodSpec::kFieldCount; ++f) {
          const auto& p = c.spec->fragmented->paths[f];
          if (p) fn(FieldPath(fp, FragmentedPodSpec::PathKey(FragmentedPodSpec::Field(f))), *p);
        }
      }
    }
    if (c.scale) {
      std::string sp = FieldPath(path, "scaleDefinition");
      if (c.scale->replicas_path) fn(FieldPath(sp, "replicasPath"), *c.scale->replicas_path);
      if (c.scale->min_replicas_path)
        fn(FieldPath(sp, "minReplicasPath"), *c.scale->min_replicas_path);
      if (c.scale->max_replicas_path)
        fn(FieldPath(sp, "maxReplicasPath"), *c.scale->max_replicas_path);
    }
    if (c.pod_selector) {
      std::string sp = FieldPath(path, "podSelector");
      if (c.pod_selector->component_type_selector &&
          c.pod_selector->component_type_selector->key_path) {
        fn(FieldPath(FieldPath(sp, "componentTypeSelector"), "keyPath"),
           *c.pod_selector->component_type_selector->key_path);
      }
      if (c.pod_selector->instance_id_path) {
        fn(FieldPath(FieldPath(sp, "componentInstanceSelector"), "idPath"),
           *c.pod_selector->instance_id_path);
      }
      if (c.pod_selector->replica_key_path) {
        fn(FieldPath(FieldPath(sp, "replicaSelector"), "keyPath"),
           *c.pod_selector->replica_key_path);
      }
    }
    if (c.status) {
      std::string sp = FieldPath(path, "statusDefinition");
      if (c.status->phase_path)
        fn(FieldPath(FieldPath(sp, "phaseDefinition"), "path"), *c.status->phase_path);
      if (c.status->conditions)
        fn(FieldPath(FieldPath(sp, "conditionsDefinition"), "path"), c.status->conditions->path);
      for (int s = 0; s < kMappedStatusCount; ++s) {
        const auto& matchers = c.status->mappings[s];
        for (size_t m = 0; m < matchers.size(); ++m) {
          if (matchers[m].by_expression) {
            fn(FieldPath(IndexPath(FieldPath(FieldPath(sp, "statusMappings"),
                                             StatusMappingKey(WorkloadStatus(s))),
                                   m),
                         "byExpression") +
                   ".expression",
               matchers[m].by_expression->expression);
          }
        }
      }
    }
    if (c.suspend) {
      std::string sp = FieldPath(path, "suspendDefinition");
      for (size_t a = 0; a < c.suspend->suspend_actions.size(); ++a) {
        fn(FieldPath(IndexPath(FieldPath(sp, "suspendActions"), a), "path"),
           c.suspend->suspend_actions[a].path);
      }
      for (size_t a = 0; a < c.suspend->resume_actions.size(); ++a) {
        fn(FieldPath(IndexPath(FieldPath(sp, "resumeActions"), a), "path"),
           c.suspend->resume_actions[a].path);
      }
    }
  }
  const std::string gang = "spec.optimizationInstructions.gangScheduling";
  for (size_t g = 0; g < def.gang.pod_groups.size(); ++g) {
    const auto& group = def.gang.pod_groups[g];
    for (size_t m = 0; m < group.members.size(); ++m) {
      std::string mp =
          IndexPath(FieldPath(IndexPath(FieldPath(gang, "podGroups"), g), "members"), m);
      for (size_t k = 0; k < group.members[m].group_by_key_paths.size(); ++k) {
        fn(IndexPath(FieldPath(mp, "groupByKeyPaths"), k), group.members[m].group_by_key_paths[k]);
      }
      for (size_t k = 0; k < group.members[m].filters.size(); ++k) {
        fn(IndexPath(FieldPath(mp, "filters"), k), group.members[m].filters[k]);
      }
    }
  }
}

std::vector<Finding> Validate(const Definition& def) {
  std::vector<Finding> out;
  // 1. Unique names; a duplicate aborts validation.
  std::map<std::string, size_t> names;
  for (size_t i = 0; i <= def.children.size(); ++i) {
    const std::string& name = ComponentAt(def, i).name;
    if (!names.emplace(name, i).second) {
      out.push_back({S::kError, FieldPath(ComponentPath(i), "name"),
                     absl::StrCat("component name ", name, " is not unique")});
      return out;
    }
  }
  // 2. Root.
  std::string root = ComponentPath(0);
  const auto& kind = def.root.kind;
  if (!kind || kind->version.empty() || kind->kind.empty() ||
      (kind->group.empty() && kind->kind != "Pod")) {
    out.push_back({S::kError, FieldPath(root, "kind"), "root component must have full kind"});
  }
  if (!def.root.owner_ref.empty()) {
    out.push_back(
        {S::kError, FieldPath(root, "ownerRef"), "root component must not have an owner ref"});
  }
  if (!def.root.status) {
    out.push_back({S::kError, FieldPath(root, "statusDefinition"),
                   "root component must have a status definition"});
  }
  CheckComponent(def, 0, out);
  // 3. Children.
  for (size_t i = 1; i <= def.children.size(); ++i) {
    const ComponentDefinition& c = def.children[i - 1];
    if (c.owner_ref.empty()) {
      out.push_back({S::kError, FieldPath(ComponentPath(i), "ownerRef"),
                     absl::StrCat("child component '", c.name, "' has no owner ref")});
    } else if (!names.contains(c.owner_ref)) {
      out.push_back({S::kError, FieldPath(ComponentPath(i), "ownerRef"),
                     absl::StrCat("owner ref '", c.owner_ref, "' of component '", c.name,
                                  "' names no component")});
    }
    CheckComponent(def, i, out);
  }
  // 4. Ownership cycles, only on an otherwise sound structure.
  bool sound = std::none_of(out.begin(), out.end(), [](const Finding& f) { return f.is_error(); });
  if (sound) {
    for (size_t i = 1; i <= def.children.size(); ++i) {
      std::vector<std::string> chain = {def.children[i - 1].name};
      std::set<std::string> seen = {chain[0]};
      std::string owner = def.children[i - 1].owner_ref;
      while (owner != def.root.name) {
        chain.push_back(owner);
        if (!seen.insert(owner).second) {
          out.push_back({S::kError, FieldPath(ComponentPath(i), "ownerRef"),
                         absl::StrCat("ownership cycle: ", absl::StrJoin(chain, " -> "))});
          break;
        }
        owner = ComponentAt(def, names[owner]).owner_ref;
      }
    }
  }
  // 5. Gang instructions.
  const std::string gang = "spec.optimizationInstructions.gangScheduling";
  for (size_t g = 0; g < def.gang.pod_groups.size(); ++g) {
    const auto& group = def.gang.pod_groups[g];
    for (size_t m = 0; m < group.members.size(); ++m) {
      if (!names.contains(group.members[m].component_name)) {
        out.push_back(
            {S::kError,
             FieldPath(
                 IndexPath(FieldPath(IndexPath(FieldPath(gang, "podGroups"), g), "members"), m),
                 "componentName"),
             absl::StrCat("pod group '", group.name, "' member component '",
                          group.members[m].component_name, "' not found")});
      }
    }
  }
  if (def.gang.pod_group) {
    std::string pg = FieldPath(gang, "podGroup");
    CheckTopology(def.gang.pod_group->topology, FieldPath(pg, "topology"), out);
    for (size_t s = 0; s < def.gang.pod_group->sub_groups.size(); ++s) {
      const auto& sub = def.gang.pod_group->sub_groups[s];
      std::string sp = IndexPath(FieldPath(pg, "subGroups"), s);
      if (!names.contains(sub.component_name)) {
        out.push_back({S::kError, FieldPath(sp, "componentName"),
                       absl::StrCat("subgroup component '", sub.component_name, "' not found")});
      }
      CheckTopology(sub.topology, FieldPath(sp, "topology"), out);
    }
  }
  // 6. Expressions: blacklist, blocked builtins, size.
  ForEachExpression(def, [&](const std::string& path, const std::string& expression) {
    for (std::string& message : ExpressionProblems(expression)) {
      out.push_back({S::kError, path, std::move(message)});
    }
  });
  return out;
}

std::vector<std::string> ExpressionProblems(absl::string_view expression) {
  if (expression.size() > kMaxExpressionBytes) {
    return {absl::StrCat("expression is ", expression.size(), " bytes; at most ",
                         kMaxExpressionBytes, " are allowed")};
  }
  if (expression.empty()) return {"empty expression"};
  auto tokens = expressions::ScanJq(expression);
  if (!tokens.ok()) return {absl::StrCat("invalid jq: ", tokens.status().message())};
  return expressions::FindForbiddenConstructs(expression);
}

ValidatedDefinition::ValidatedDefinition(Definition def)
    : definition_(std::make_shared<const Definition>(std::move(def))),
      findings_(Validate(*definition_)) {}

bool ValidatedDefinition::ok() const {
  return std::none_of(findings_.begin(), findings_.end(),
                      [](const Finding& f) { return f.is_error(); });
}

}  // namespace wm::definitions
