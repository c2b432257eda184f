#include "server/resolution/gang.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/json_path.h"
#include "server/resolution/proto_strings.h"

namespace wm::resolution {
namespace {

using definitions::CompiledDefinition;
using definitions::kNone;
using expressions::Session;

// Objects without a UID (manifests read from files) get a placeholder.
std::string TopOwnerUid(const Json& root) {
  std::string uid = FindString(root, {"metadata", "uid"});
  return uid.empty() ? "<uid>" : uid;
}

// The object's labels (or annotations) object, or null.
const Json* Labels(const Json& object) { return Find(object, {"metadata", "labels"}); }
const Json* Annotations(const Json& object) { return Find(object, {"metadata", "annotations"}); }

// The string under `key` of a labels or annotations object, or "".
std::string Entry(const Json* entries, absl::string_view key) {
  return entries != nullptr ? FindString(*entries, {key}) : "";
}

// REQUIRES: `out` is new.
void SetTopology(const std::optional<definitions::Topology>& t,
                 workloadmap::v1::TopologyConstraint* out) {
  if (!t) return;
  using workloadmap::v1::TopologyConstraint;
  SetString(*out, &TopologyConstraint::mutable_topology, t->topology_name);
  SetString(*out, &TopologyConstraint::mutable_required_topology_level, t->required_topology_level);
  SetString(*out, &TopologyConstraint::mutable_preferred_topology_level,
            t->preferred_topology_level);
}

// What KAI's default grouper, on which its Workload Map grouper builds,
// decides beside the group's shape (pkg/podgrouper/podgrouper/plugins/
// defaultgrouper): the queue from the kai.scheduler/queue label of the top
// owner, else of the pod, else the "project" label (top owner, else pod)
// with "-<kai.scheduler/node-pool>" when the pod has that label, else
// "default-queue"; the priority class from the priorityClassName label of
// the top owner, else of the pod (KAI also checks that the PriorityClass
// exists and else uses a per-kind default: that part is KAI's); and, when
// the definition gives the group no topology, the top owner's
// kai.scheduler/topology annotations. The top owner's part is `owner`
// (ReadOwnerHints). `pod` is null for the workload's group as a whole.
void SetHints(const OwnerHints& owner, const Json* pod, workloadmap::v1::PodGroup& group) {
  const Json* pod_labels = pod != nullptr ? Labels(*pod) : nullptr;
  auto first_label = [&](const std::string& owner_value, absl::string_view key) {
    return owner_value.empty() ? Entry(pod_labels, key) : owner_value;
  };
  std::string queue = first_label(owner.queue, "kai.scheduler/queue");
  if (queue.empty()) {
    std::string project = first_label(owner.project, "project");
    std::string node_pool = Entry(pod_labels, "kai.scheduler/node-pool");
    queue = project.empty()     ? "default-queue"
            : node_pool.empty() ? project
                                : absl::StrCat(project, "-", node_pool);
  }
  group.set_queue(queue);
  group.set_priority_class_name(first_label(owner.priority_class_name, "priorityClassName"));
  if (!group.has_topology() && (!owner.topology.empty() || !owner.required_topology_level.empty() ||
                                !owner.preferred_topology_level.empty())) {
    auto* out = group.mutable_topology();
    out->set_topology(owner.topology);
    out->set_required_topology_level(owner.required_topology_level);
    out->set_preferred_topology_level(owner.preferred_topology_level);
  }
}

bool AnyScaleDefinition(const CompiledDefinition& def) {
  return std::any_of(def.components.begin(), def.components.end(),
                     [](const auto& c) { return c.def->scale.has_value(); });
}

bool IsDescendantOrSelf(const CompiledDefinition& def, int component, int ancestor) {
  for (int c = component; c >= 0; c = def.components[c].parent) {
    if (c == ancestor) return true;
  }
  return false;
}

// A gang size of `a` `op` `b` where it fits a PodGroup's int32 minMember,
// else an error naming the component and the operation.
absl::StatusOr<int64_t> CheckedMembers(int64_t a, absl::string_view op, int64_t b,
                                       const std::string& component) {
  int64_t result = op == "+" ? a + b : a * b;  // operands fit int32: no int64 overflow
  if (result > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("component ", component, ": gang members ", a, " ", op, " ", b,
                     " overflow int32 (a PodGroup's minMember is at most ",
                     std::numeric_limits<int32_t>::max(), ")"));
  }
  return result;
}

absl::StatusOr<int32_t> ScaledSubtree(const CompiledDefinition& def, const ComponentNode& node,
                                      const std::string* instance) {
  const std::string& name = def.components[node.index].def->name;
  int64_t own = 0;
  if (instance != nullptr && node.instances.size() > 1) {
    const InstanceNode* found = FindInstance(node, *instance);
    if (found == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("instance ", *instance, " of component ", name, " not found"));
    }
    own = found->EffectiveMin();
  } else if (def.components[node.index].def->scale) {
    for (const auto& i : node.instances) {
      auto sum = CheckedMembers(own, "+", i.EffectiveMin(), name);
      if (!sum.ok()) return sum.status();
      own = *sum;
    }
  }
  if (node.children.empty()) return static_cast<int32_t>(own);
  int64_t children = 0;
  for (const auto& child : node.children) {
    auto scale = ScaledSubtree(def, child, nullptr);
    if (!scale.ok()) return scale.status();
    auto sum = CheckedMembers(children, "+", *scale, name);
    if (!sum.ok()) return sum.status();
    children = *sum;
  }
  if (children == 0) return static_cast<int32_t>(own);
  if (own == 0) return static_cast<int32_t>(children);
  auto product = CheckedMembers(own, "×", children, name);
  if (!product.ok()) return product.status();
  return static_cast<int32_t>(*product);
}

// A gang size counted over a component that could not be resolved would
// be too small: such a subtree is an error, naming the component and why.
absl::Status SubtreeResolved(const CompiledDefinition& def, const ComponentNode& tree,
                             int component) {
  const ComponentNode* failed = nullptr;
  if (const ComponentNode* node = FindNode(tree, component)) {
    failed = FirstFailed(*node);
  } else {
    // Not in the tree: below a component that failed.
    for (int c = def.components[component].parent; c >= 0 && failed == nullptr;
         c = def.components[c].parent) {
      const ComponentNode* ancestor = FindNode(tree, c);
      if (ancestor != nullptr && !ancestor->error.ok()) failed = ancestor;
    }
  }
  if (failed == nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("component ", def.components[failed->index].def->name,
                   " could not be resolved: ", failed->error.message()));
}

int32_t CountLeaves(const CompiledDefinition& def, const ComponentNode& node, bool requested) {
  int32_t count = 0;
  if (def.components[node.index].def->HasPodDefinition()) {
    count += requested ? 1 : static_cast<int32_t>(node.instances.size());
  }
  for (const auto& child : node.children) count += CountLeaves(def, child, false);
  return count;
}

}  // namespace

OwnerHints ReadOwnerHints(const Json& root) {
  const Json* labels = Labels(root);
  const Json* annotations = Annotations(root);
  return {
      .queue = Entry(labels, "kai.scheduler/queue"),
      .project = Entry(labels, "project"),
      .priority_class_name = Entry(labels, "priorityClassName"),
      .topology = Entry(annotations, "kai.scheduler/topology"),
      .required_topology_level = Entry(annotations, "kai.scheduler/topology-required-placement"),
      .preferred_topology_level = Entry(annotations, "kai.scheduler/topology-preferred-placement")};
}

absl::StatusOr<bool> TypeSelectorAccepts(Evaluation& eval, int component, const Json& pod,
                                         Session::InputId pod_input) {
  const auto& compiled = eval.def().components[component];
  const auto& selector = compiled.def->pod_selector;
  if (!selector || !selector->component_type_selector) return false;
  const auto& ts = *selector->component_type_selector;
  for (const auto& [key, value] : ts.match_labels) {
    const Json* label = Find(pod, {"metadata", "labels", key});
    if (label == nullptr || *label != value) return false;
  }
  if (compiled.type_equality != kNone) {
    auto values = eval.Views(compiled.type_equality, pod_input);
    if (!values.ok()) return values.status();
    return std::any_of(values->begin(), values->end(),
                       [](const expressions::Output& v) { return *v == true; });
  }
  if (compiled.type_key != kNone) {
    auto values = eval.Views(compiled.type_key, pod_input);
    if (!values.ok()) return values.status();
    return std::any_of(values->begin(), values->end(),
                       [](const expressions::Output& v) { return !v->is_null(); });
  }
  return true;
}

absl::StatusOr<int> InferPodComponent(Evaluation& eval, const Json& pod,
                                      Session::InputId pod_input) {
  const std::vector<int>& leaves = eval.def().pod_components;
  if (leaves.size() == 1) return leaves[0];
  for (int leaf : leaves) {
    auto accepts = TypeSelectorAccepts(eval, leaf, pod, pod_input);
    if (!accepts.ok()) return accepts.status();
    if (*accepts) return leaf;
  }
  return absl::NotFoundError(
      absl::StrCat("no component found for pod ", FindString(pod, {"metadata", "name"})));
}

absl::StatusOr<int32_t> SubtreeScale(const CompiledDefinition& def, const ComponentNode& tree,
                                     int component, const std::string* instance) {
  if (absl::Status resolved = SubtreeResolved(def, tree, component); !resolved.ok()) {
    return resolved;
  }
  const ComponentNode* node = FindNode(tree, component);
  if (node == nullptr) {
    return absl::NotFoundError(absl::StrCat("component ", component, " not found"));
  }
  if (AnyScaleDefinition(def)) return ScaledSubtree(def, *node, instance);
  return CountLeaves(def, *node, instance != nullptr);
}

namespace {

// WorkloadPodGroup with the owner's hints and uid (TopOwnerUid) already
// read.
absl::StatusOr<workloadmap::v1::PodGroup> PodGroupWithHints(Evaluation& eval,
                                                            const ComponentNode& tree,
                                                            const OwnerHints& hints,
                                                            absl::string_view top_owner_uid) {
  const CompiledDefinition& def = eval.def();
  const auto& form = def.definition->gang.pod_group;
  if (!form) return absl::NotFoundError("the definition has no podGroup gang instructions");
  workloadmap::v1::PodGroup group;
  group.set_name(absl::StrCat("pg-", top_owner_uid, "-", form->name));
  group.set_form("podGroup");
  if (form->topology) SetTopology(form->topology, group.mutable_topology());
  for (const auto& sub : form->sub_groups) {
    int component = def.ComponentIndex(sub.component_name);
    auto scale = SubtreeScale(def, tree, component);
    if (!scale.ok()) return scale.status();
    if (*scale == 0) {
      return absl::FailedPreconditionError(absl::StrCat("component ", sub.component_name,
                                                        " must expose a replica scale definition"));
    }
    auto* out = group.add_sub_groups();
    out->set_name(sub.component_name);
    out->set_min_member(*scale);
    if (sub.topology) SetTopology(sub.topology, out->mutable_topology());
  }
  if (form->sub_groups.empty()) {
    auto scale = SubtreeScale(def, tree, 0);
    if (!scale.ok()) return scale.status();
    group.set_min_member(*scale);
  } else {
    group.set_min_sub_group(static_cast<int32_t>(form->sub_groups.size()));
  }
  SetHints(hints, nullptr, group);
  return group;
}

}  // namespace

absl::StatusOr<workloadmap::v1::PodGroup> WorkloadPodGroup(Evaluation& eval,
                                                           const ComponentNode& tree,
                                                           const Json& root) {
  return PodGroupWithHints(eval, tree, ReadOwnerHints(root), TopOwnerUid(root));
}

WorkloadGang ReadWorkloadGang(Evaluation& eval, const ComponentNode& tree, const Json& root) {
  WorkloadGang workload;
  workload.hints = ReadOwnerHints(root);
  workload.top_owner_uid = TopOwnerUid(root);
  workload.group = eval.def().definition->gang.pod_group
                       ? PodGroupWithHints(eval, tree, workload.hints, workload.top_owner_uid)
                       : absl::NotFoundError("the definition has no podGroup form");
  return workload;
}

absl::StatusOr<PodGang> GangForPod(Evaluation& eval, const ComponentNode& tree, const Json& root,
                                   const Json& pod, Session::InputId pod_input,
                                   const WorkloadGang* workload,
                                   absl::FunctionRef<bool(absl::string_view name)> report_group) {
  const CompiledDefinition& def = eval.def();
  std::optional<WorkloadGang> read_here;
  if (workload == nullptr) workload = &read_here.emplace(ReadWorkloadGang(eval, tree, root));
  PodGang result;
  absl::string_view pod_name = FindStringView(pod, {"metadata", "name"});
  result.assignment.set_pod(pod_name.data(), pod_name.size());
  auto component = InferPodComponent(eval, pod, pod_input);

  if (def.definition->gang.pod_group) {
    if (!workload->group.ok()) return workload->group.status();
    if (report_group(workload->group->name())) {
      result.group = *workload->group;
      SetHints(workload->hints, &pod, result.group);
    }
    if (component.ok()) result.assignment.set_component(def.components[*component].def->name);
    // As KAI does: the pod joins the first subgroup whose component or a
    // descendant has a type selector accepting it; a subtree without any
    // type selector takes the pods inferred to belong to it.
    for (const auto& sub : def.definition->gang.pod_group->sub_groups) {
      int top = def.ComponentIndex(sub.component_name);
      bool any_selector = false, member = false;
      for (size_t c = 0; c < def.components.size() && !member; ++c) {
        const auto& selector = def.components[c].def->pod_selector;
        if (!IsDescendantOrSelf(def, static_cast<int>(c), top) || !selector ||
            !selector->component_type_selector) {
          continue;
        }
        any_selector = true;
        auto accepts = TypeSelectorAccepts(eval, static_cast<int>(c), pod, pod_input);
        if (!accepts.ok()) return accepts.status();
        member = *accepts;
      }
      if (!any_selector) member = component.ok() && IsDescendantOrSelf(def, *component, top);
      if (member) {
        result.assignment.set_sub_group(sub.component_name);
        break;
      }
    }
    result.assignment.set_pod_group(workload->group->name());
    return result;
  }
  if (def.definition->gang.pod_groups.empty()) {
    return absl::NotFoundError("the definition has no gang scheduling instructions");
  }
  if (!component.ok()) return component.status();
  result.assignment.set_component(def.components[*component].def->name);

  // Candidates: members naming the component, then its ancestors, in group
  // and member order; direct mentions first.
  struct Candidate {
    size_t group, member;
  };
  std::vector<Candidate> candidates;
  for (int level = *component; level >= 0; level = def.components[level].parent) {
    const std::string& name = def.components[level].def->name;
    for (size_t g = 0; g < def.definition->gang.pod_groups.size(); ++g) {
      const auto& members = def.definition->gang.pod_groups[g].members;
      for (size_t m = 0; m < members.size(); ++m) {
        if (members[m].component_name == name) candidates.push_back({g, m});
      }
    }
  }
  const Candidate* effective = nullptr;
  for (const auto& c : candidates) {
    bool pass = true;
    for (auto filter : def.pod_group_members[c.group][c.member].filters) {
      auto values = eval.Views(filter, pod_input);
      if (!values.ok()) return values.status();
      if (values->size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            def.field_paths[filter], ": expected single query result, got ", values->size()));
      }
      pass = pass && *(*values)[0] == true;
    }
    if (pass) {
      effective = &c;
      break;
    }
  }
  if (effective == nullptr) {
    return absl::NotFoundError(absl::StrCat("pod ", result.assignment.pod(),
                                            " does not match any Karta pod group member "
                                            "definition"));
  }
  const auto& member = def.definition->gang.pod_groups[effective->group].members[effective->member];
  int effective_component = def.ComponentIndex(member.component_name);
  std::string instance;
  bool has_instance = false;
  const auto& own = def.components[*component];
  if (effective_component == *component && own.instance_selector != kNone) {
    if (absl::Status resolved = SubtreeResolved(def, tree, *component); !resolved.ok()) {
      return resolved;
    }
    auto id = eval.Single(own.instance_selector, pod_input);
    if (!id.ok()) return id.status();
    const ComponentNode* node = FindNode(tree, *component);
    if (node == nullptr || FindInstance(*node, *id) == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("could not match instance id ", *id, " of pod ", result.assignment.pod()));
    }
    instance = *id;
    has_instance = true;
    result.assignment.set_instance_id(instance);
  }
  std::vector<std::string> keys;
  for (auto key_path :
       def.pod_group_members[effective->group][effective->member].group_by_key_paths) {
    auto key = eval.Single(key_path, pod_input);
    if (!key.ok()) return key.status();
    keys.push_back(*key);
  }
  auto scale = SubtreeScale(def, tree, effective_component, has_instance ? &instance : nullptr);
  if (!scale.ok()) return scale.status();
  std::string name = absl::StrCat("pg-", workload->top_owner_uid);
  if (!keys.empty()) absl::StrAppend(&name, "-", absl::StrJoin(keys, "-"));
  if (report_group(name)) {
    result.group.set_name(name);
    result.group.set_form("podGroups");
    result.group.set_min_member(*scale);
    SetHints(workload->hints, &pod, result.group);
  }
  result.assignment.set_pod_group(std::move(name));
  return result;
}

}  // namespace wm::resolution
