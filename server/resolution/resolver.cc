#include "server/resolution/resolver.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "server/common/json_path.h"
#include "server/resolution/evaluation.h"
#include "server/resolution/field_error.h"
#include "server/resolution/gang.h"
#include "server/resolution/pods.h"
#include "server/resolution/proto_strings.h"
#include "server/resolution/resources.h"
#include "server/resolution/status.h"
#include "server/resolution/tree.h"

namespace wm::resolution {
namespace {

using definitions::CompiledDefinition;
using definitions::kNone;
using expressions::Session;
namespace v1 = ::workloadmap::v1;

// Node names gathered as views of the pods' own trees (which outlive the
// resolution) and written to `out` once each, sorted: a name is copied
// once, into the answer.
using NodeNames = absl::InlinedVector<absl::string_view, 8>;

void AddSorted(NodeNames& names, google::protobuf::RepeatedPtrField<std::string>& out) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (absl::string_view n : names) out.Add()->assign(n.data(), n.size());
}

// Pod indices (into Resolution::pods_): an instance has a few pods, which
// an inline list holds without an allocation of its own.
using PodList = absl::InlinedVector<int, 4>;

// Pods of the workload with what attribution learned about them.
struct PodEntry {
  // Made in place from the facts: a braced temporary of this size would be
  // zeroed and then moved.
  explicit PodEntry(PodFacts read) : facts(std::move(read)) {}

  PodFacts facts;
  Session::InputId input = -1;  // loaded on first use
  std::string instance_id, replica_key;
};

class Resolution {
 public:
  Resolution(const CompiledDefinition& def, Evaluation& eval, const WorkloadInput& input,
             const ResolveOptions& options, v1::ResolvedWorkload& out)
      : def_(def), eval_(eval), input_(input), options_(options), out_(out) {}

  absl::Status Run() {
    const Json& object = *input_.object;
    SetRef(object);
    root_input_ = eval_.Load(object);
    auto status = EvaluateStatus(eval_, root_input_);
    if (!status.ok()) return status.status();
    SetStatus(*status);
    tree_ = BuildTree(eval_, root_input_);
    CollectPods();
    if (options_.include_gang && !def_.definition->gang.empty()) StartGang();
    // Pods are placed and their gang read a slice at a time. Both read each
    // pod's tree (its labels, mostly); for a large job the trees do not all
    // fit the cache, a slice's do, so the second reading finds them there.
    absl::InlinedVector<int, kPodsPerSlice> slice;
    for (size_t first = 0; first < pods_.size(); first += kPodsPerSlice) {
      slice.clear();
      for (size_t p = first; p < std::min(pods_.size(), first + kPodsPerSlice); ++p) {
        slice.push_back(static_cast<int>(p));
      }
      PlacePods(tree_, slice, "");
      if (gang_) {
        for (int p : slice) AddPodGang(p);
      }
    }
    Resources total;
    BuildComponent(tree_, total, "", *out_.mutable_root());
    if (!arithmetic_.ok()) return arithmetic_;
    ExportResources(total, out_.mutable_resources());
    NodeNames nodes;
    for (const auto& p : pods_) {
      if (!p.facts.node.empty()) nodes.push_back(p.facts.node);
    }
    AddSorted(nodes, *out_.mutable_nodes());
    if (gang_) FinishGang();
    return absl::OkStatus();
  }

 private:
  void SetRef(const Json& object) {
    v1::ObjectRef* ref = out_.mutable_ref();
    SetString(*ref, &v1::ObjectRef::mutable_cluster, options_.cluster);
    absl::string_view api_version = FindStringView(object, {"apiVersion"});
    size_t slash = api_version.find('/');
    if (slash != absl::string_view::npos) {
      SetString(*ref, &v1::ObjectRef::mutable_group, api_version.substr(0, slash));
    }
    SetString(*ref, &v1::ObjectRef::mutable_version,
              slash == absl::string_view::npos ? api_version : api_version.substr(slash + 1));
    SetString(*ref, &v1::ObjectRef::mutable_kind, FindStringView(object, {"kind"}));
    if (const Json* metadata = Find(object, {"metadata"})) {
      SetString(*ref, &v1::ObjectRef::mutable_namespace_, FindStringView(*metadata, {"namespace"}));
      SetString(*ref, &v1::ObjectRef::mutable_name, FindStringView(*metadata, {"name"}));
      SetString(*ref, &v1::ObjectRef::mutable_uid, FindStringView(*metadata, {"uid"}));
      SetString(out_, &v1::ResolvedWorkload::mutable_resource_version,
                FindStringView(*metadata, {"resourceVersion"}));
      SetString(out_, &v1::ResolvedWorkload::mutable_creation_timestamp,
                FindStringView(*metadata, {"creationTimestamp"}));
    }
    out_.mutable_definition()->set_name(def_.definition->name);
    out_.mutable_definition()->set_origin(definitions::OriginName(def_.definition->origin));
  }

  void SetStatus(const StatusResult& status) {
    if (!status.defined) return;
    v1::WorkloadStatus* s = out_.mutable_status();
    s->set_phase(status.phase);
    for (const auto& c : status.conditions) {
      auto* cond = s->add_conditions();
      SetString(*cond, &v1::Condition::mutable_type, c.type);
      SetString(*cond, &v1::Condition::mutable_status, c.status);
      SetString(*cond, &v1::Condition::mutable_message, c.message);
      SetString(*cond, &v1::Condition::mutable_reason, c.reason);
    }
    for (auto m : status.matched) s->add_matched_statuses(definitions::StatusName(m));
  }

  void CollectPods() {
    if (!options_.include_pods && !options_.include_gang) return;
    absl::string_view root_uid = FindStringView(*input_.object, {"metadata", "uid"});
    // Each pod's facts (identity, owner, phase, requests) are read in one
    // pass: for a large job the pods' trees do not fit the cache, and every
    // pass over them misses it again (placement and gang, which read the
    // labels, go a slice at a time: Run). Ownership and the index of owners
    // take the pods' uids from their facts.
    std::vector<PodFacts> candidates;
    candidates.reserve(input_.pods.size() + 1);
    for (const Json* pod : input_.pods) candidates.push_back(ReadPod(*pod));
    OwnerIndex owners;
    owners.reserve(input_.owners.size() + candidates.size());
    for (const Json* o : input_.owners) {
      absl::string_view uid = FindStringView(*o, {"metadata", "uid"});
      if (!uid.empty()) owners.try_emplace(uid, o);
    }
    for (const PodFacts& pod : candidates) {
      if (!pod.uid.empty()) owners.try_emplace(pod.uid, pod.object);
    }
    // A Pod workload is its own pod.
    if (FindStringView(*input_.object, {"kind"}) == "Pod" &&
        (root_uid.empty() || !owners.contains(root_uid))) {
      candidates.push_back(ReadPod(*input_.object));
    }
    // The owned pods' facts, in name order, moved once.
    std::vector<int> order;
    order.reserve(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (root_uid.empty() || OwnedBy(candidates[i], root_uid, owners)) {
        order.push_back(static_cast<int>(i));
      }
    }
    // By name, equal names in input order (std::sort on the pair: stable
    // without stable_sort's buffer).
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return candidates[a].name != candidates[b].name ? candidates[a].name < candidates[b].name
                                                      : a < b;
    });
    pods_.reserve(order.size());
    for (int i : order) {
      pods_.emplace_back(std::move(candidates[i]));
      const PodFacts& facts = pods_.back().facts;
      if (!facts.requests_problem.empty()) {
        Warn(absl::StrCat("pod ", facts.name, ": ", facts.requests_problem,
                          "; its requests are left out"));
      }
    }
  }

  Session::InputId PodInput(int pod) {
    if (pods_[pod].input < 0) pods_[pod].input = eval_.Load(*pods_[pod].facts.object);
    return pods_[pod].input;
  }

  // Keeps the first arithmetic problem; Run fails with it once the tree is
  // built, so no total ever wraps or saturates unseen.
  void Fail(std::string message) {
    if (arithmetic_.ok()) arithmetic_ = absl::InvalidArgumentError(std::move(message));
  }
  // `where` and `what` name the failed step; they are joined only on a
  // failure (a resolution checks every instance's arithmetic).
  void Check(const absl::Status& status, absl::FunctionRef<std::string()> where,
             absl::string_view what) {
    if (!status.ok()) Fail(absl::StrCat(where(), what, ": ", status.message()));
  }

  void Warn(std::string message) {
    if (out_.warnings_size() < 50) out_.add_warnings(std::move(message));
  }

  // Top-down placement (format §2.7): pod-bearing components claim what
  // their type selector accepts (all pods when the definition has a single
  // spec), grouping components pass their set down, multi-instance
  // components split by instance id. A grouping component with an instance
  // selector (a LeaderWorkerSet group) narrows what each instance's children
  // see, so placements are kept per `scope`: the instances of the splitting
  // components above (SplitScope; "" when none splits, the common case).
  void PlacePods(const ComponentNode& node, absl::Span<const int> candidates,
                 const std::string& scope) {
    // No instance to hold a pod; or no pod (a slice has pods of a few of
    // thousands of instances: the others are not visited).
    if (!node.error.ok() || candidates.empty()) return;
    const auto& compiled = def_.components[node.index];
    const auto& cdef = *compiled.def;
    bool has_type_selector =
        cdef.HasPodDefinition() && cdef.pod_selector && cdef.pod_selector->component_type_selector;
    bool claims_all = cdef.HasPodDefinition() && !has_type_selector && def_.SpecCount() == 1;
    bool multi = compiled.instance_selector != kNone;
    std::map<std::string, PodList>& placed = placement_[PlacementKey(scope, node.index)];
    // One pass, each pod asked everything in turn while its tree is in the
    // cache: for a large job the pods' trees do not all fit.
    for (int p : candidates) {
      bool claimed = claims_all;
      if (has_type_selector && compiled.type_key_is_instance_id &&
          eval_.Single(compiled.instance_selector, PodInput(p)).ok()) {
        claimed = true;  // its instance id is the type key's one output
      } else if (has_type_selector) {
        auto accepts = TypeSelectorAccepts(eval_, node.index, *pods_[p].facts.object, PodInput(p));
        if (!accepts.ok()) {
          Warn(absl::StrCat("pod ", pods_[p].facts.name, ": ", accepts.status().message()));
        }
        claimed = accepts.ok() && *accepts;
      }
      // Descendants inherit the replica key of the nearest ancestor that
      // declares a replica selector: the key is kept per pod.
      if (compiled.replica_selector != kNone) {
        auto key = eval_.Single(compiled.replica_selector, PodInput(p));
        if (key.ok()) pods_[p].replica_key = *key;
      }
      if (!claimed) continue;
      if (!multi) {
        placed[""].push_back(p);
        continue;
      }
      auto id = eval_.Single(compiled.instance_selector, PodInput(p));
      if (!id.ok()) {
        Warn(absl::StrCat("pod ", pods_[p].facts.name, ": ", id.status().message()));
        continue;
      }
      if (FindInstance(node, *id) == nullptr) {
        Warn(absl::StrCat("pod ", pods_[p].facts.name, ": could not match instance id ", *id,
                          " of component ", cdef.name));
        continue;
      }
      pods_[p].instance_id = *id;
      placed[*id].push_back(p);
    }
    if (SplitsChildren(node)) {
      std::map<std::string, PodList> by_instance;
      for (int p : candidates) {
        auto id = eval_.Single(compiled.instance_selector, PodInput(p));
        if (id.ok()) by_instance[*id].push_back(p);
      }
      for (const auto& [id, pods] : by_instance) {
        if (FindInstance(node, id) == nullptr) continue;  // no instance to hold them
        for (const auto& child : node.children) {
          PlacePods(child, pods, SplitScope(scope, node, id));
        }
      }
      return;
    }
    for (const auto& child : node.children) PlacePods(child, candidates, scope);
  }

  // A grouping (not pod-bearing) component with an instance selector gives
  // each of its instances its own children.
  bool SplitsChildren(const ComponentNode& node) const {
    const auto& compiled = def_.components[node.index];
    return !compiled.def->HasPodDefinition() && compiled.instance_selector != kNone &&
           !node.children.empty();
  }

  // The scope of the children of `node`'s instance `instance`, when `node`
  // splits them. A component appears once in the tree, so its index and the
  // instances of the splitting components above it name its placement; the
  // others add nothing to the scope (and cost no string).
  static std::string SplitScope(const std::string& scope, const ComponentNode& node,
                                const std::string& instance) {
    return absl::StrCat(scope, node.index, "[", instance, "]/");
  }

  // Where PlacePods keeps the pods of component `index` within `scope`.
  using PlacementKey = std::pair<std::string, int>;

  static void SetCounts(v1::ReplicaCounts* counts, int desired, int current, int ready) {
    counts->set_desired(desired);
    counts->set_current(current);
    counts->set_ready(ready);
  }

  // Builds the component in `out`, in place: on the answer's arena when it
  // has one, every part of it is allocated there and nothing is copied.
  void BuildComponent(const ComponentNode& node, Resources& total, const std::string& scope,
                      v1::Component& out) {
    const auto& compiled = def_.components[node.index];
    const auto& cdef = *compiled.def;
    out.set_name(cdef.name);
    if (cdef.kind) {
      v1::GroupVersionKind& kind = *out.mutable_kind();
      SetString(kind, &v1::GroupVersionKind::mutable_group, cdef.kind->group);
      SetString(kind, &v1::GroupVersionKind::mutable_version, cdef.kind->version);
      SetString(kind, &v1::GroupVersionKind::mutable_kind, cdef.kind->kind);
    }
    out.set_has_pod_definition(cdef.HasPodDefinition());
    if (!node.error.ok()) {
      out.mutable_error()->set_field_path(FieldPathOf(node.error));
      out.mutable_error()->set_message(DetailOf(node.error));
      SetCounts(out.mutable_replicas(), 0, 0, 0);
      return;
    }
    // Children once; each instance carries a copy (upstream's shape),
    // unless the component splits its children's pods per instance.
    bool split = SplitsChildren(node);
    google::protobuf::RepeatedPtrField<v1::Component> children(out.GetArena());
    Resources children_total;
    auto build_children = [&](const std::string& child_scope) {
      children.Clear();
      children_total.clear();
      for (const auto& child : node.children) {
        BuildComponent(child, children_total, child_scope, *children.Add());
      }
    };
    if (!split) build_children(scope);
    Resources component_total;
    int desired_sum = 0, current_sum = 0, ready_sum = 0;
    // The pods PlacePods put in each instance of this component.
    const PodList no_pods;
    const std::map<std::string, PodList>* placed = nullptr;
    if (auto it = placement_.find(PlacementKey(scope, node.index)); it != placement_.end()) {
      placed = &it->second;
    }
    NodeNames component_nodes;
    for (const auto& instance : node.instances) {
      v1::ComponentInstance* inst = out.add_instances();
      SetString(*inst, &v1::ComponentInstance::mutable_id, instance.id);
      if (instance.replicas) inst->mutable_scale()->set_replicas(*instance.replicas);
      if (instance.min_replicas) inst->mutable_scale()->set_min_replicas(*instance.min_replicas);
      if (instance.max_replicas) inst->mutable_scale()->set_max_replicas(*instance.max_replicas);
      if (split) build_children(SplitScope(scope, node, instance.id));
      auto where = [&] {
        return absl::StrCat("component ", cdef.name,
                            instance.id.empty() ? "" : " instance " + instance.id);
      };
      Resources per_pod;
      if (cdef.HasPodDefinition()) {
        auto requests = instance.fragmented.is_object() ? FragmentedRequests(instance.fragmented)
                                                        : PodSpecRequests(instance.PodSpec());
        if (requests.ok()) {
          per_pod = *std::move(requests);
        } else {
          Fail(absl::StrCat(where(), instance.fragmented.is_object() ? " fragmented" : " pod spec",
                            ": ", requests.status().message()));
        }
      }
      ExportResources(per_pod, inst->mutable_pod_resources());
      int desired = cdef.HasPodDefinition() || cdef.scale ? instance.Desired() : 0;
      Resources instance_total;
      Check(AddScaled(instance_total, per_pod, desired), where, " resources × replicas");
      Check(AddScaled(instance_total, children_total, 1), where, " resources");
      ExportResources(instance_total, inst->mutable_resources());
      Check(AddScaled(component_total, instance_total, 1), where, " resources");

      const PodList* pods = &no_pods;
      if (placed != nullptr) {
        if (auto it = placed->find(instance.id); it != placed->end()) pods = &it->second;
      }
      int current = 0, ready = 0;
      NodeNames nodes;
      for (int p : *pods) {
        const PodFacts& f = pods_[p].facts;
        current += f.Active() ? 1 : 0;
        ready += f.ready ? 1 : 0;
        if (!f.node.empty()) nodes.push_back(f.node);
      }
      SetCounts(inst->mutable_replicas(), desired, current, ready);
      if (__builtin_add_overflow(desired_sum, desired, &desired_sum)) {
        Fail(absl::StrCat("component ", cdef.name,
                          ": desired replicas of its instances overflow "
                          "int32 (at most 2147483647)"));
      }
      current_sum += current;
      ready_sum += ready;
      component_nodes.insert(component_nodes.end(), nodes.begin(), nodes.end());
      AddSorted(nodes, *inst->mutable_nodes());
      if (options_.include_pods) AddPods(*pods, inst);
      // The last instance (or each, when split) takes the children
      // themselves; the others take copies.
      if (split || &instance == &node.instances.back()) {
        inst->mutable_children()->Swap(&children);
      } else {
        *inst->mutable_children() = children;
      }
    }
    SetCounts(out.mutable_replicas(), desired_sum, current_sum, ready_sum);
    ExportResources(component_total, out.mutable_resources());
    AddSorted(component_nodes, *out.mutable_nodes());
    Check(
        AddScaled(total, component_total, 1), [&] { return absl::StrCat("component ", cdef.name); },
        " resources");
  }

  void AddPods(absl::Span<const int> all, v1::ComponentInstance* inst) {
    absl::Span<const int> pods = all;
    PodList listed;  // the first pod_limit pods, unhealthy first, when limited
    if (options_.pod_limit > 0 && static_cast<int>(all.size()) > options_.pod_limit) {
      listed.assign(all.begin(), all.end());
      std::stable_sort(listed.begin(), listed.end(), [&](int a, int b) {
        return pods_[a].facts.Unhealthy() && !pods_[b].facts.Unhealthy();
      });
      listed.resize(options_.pod_limit);
      std::sort(listed.begin(), listed.end());
      pods = listed;
    }
    for (int p : pods) {
      const PodEntry& e = pods_[p];
      v1::Pod* pod = inst->add_pods();
      SetString(*pod, &v1::Pod::mutable_name, e.facts.name);
      SetString(*pod, &v1::Pod::mutable_namespace_, e.facts.namespace_);
      SetString(*pod, &v1::Pod::mutable_uid, e.facts.uid);
      SetString(*pod, &v1::Pod::mutable_phase, e.facts.phase);
      pod->set_ready(e.facts.ready);
      SetString(*pod, &v1::Pod::mutable_reason, e.facts.reason);
      SetString(*pod, &v1::Pod::mutable_node, e.facts.node);
      ExportResources(e.facts.requests, pod->mutable_resources());
      SetString(*pod, &v1::Pod::mutable_instance_id, e.instance_id);
      SetString(*pod, &v1::Pod::mutable_replica_key, e.replica_key);
    }
  }

  // The gang instructions, assembled as the pods are read (Run).
  void StartGang() {
    gang_.emplace();
    gang_->workload = ReadWorkloadGang(eval_, tree_, *input_.object);
    const WorkloadGang& workload = gang_->workload;
    if (def_.definition->gang.pod_group && !workload.group.ok()) {
      Warn(absl::StrCat("gang: ", workload.group.status().message()));
    }
  }

  // Whether the group `name` is yet to be reported: the workload's own
  // (the podGroup form) is, once, by FinishGang; another, by the first pod
  // of it (GangForPod's `report_group`).
  bool Unreported(absl::string_view name) const {
    const absl::StatusOr<v1::PodGroup>& own = gang_->workload.group;
    return !(own.ok() && own->name() == name) && !gang_->groups.contains(name);
  }

  void AddPodGang(int p) {
    v1::GangInstructions* gang = out_.mutable_gang();
    const PodFacts& facts = pods_[p].facts;
    // A name's first group is the one reported: the workload's in the
    // podGroup form, else the first pod's.
    auto result =
        GangForPod(eval_, tree_, *input_.object, *facts.object, PodInput(p), &gang_->workload,
                   [&](absl::string_view name) { return Unreported(name); });
    if (!result.ok()) {
      v1::PodGangAssignment* a = gang->add_assignments();
      SetString(*a, &v1::PodGangAssignment::mutable_pod, facts.name);
      a->set_error(std::string(result.status().message()));
      return;
    }
    *gang->add_assignments() = std::move(result->assignment);
    if (!result->group.name().empty()) {
      std::string name = result->group.name();
      gang_->groups.emplace(std::move(name), std::move(result->group));
    }
  }

  // In name order. In the podGroup form the workload's group is the only
  // one (its pods report no other); it is moved in, not copied.
  void FinishGang() {
    v1::GangInstructions* gang = out_.mutable_gang();
    if (def_.definition->gang.pod_group && gang_->workload.group.ok()) {
      *gang->add_pod_groups() = *std::move(gang_->workload.group);
    }
    for (auto& [name, group] : gang_->groups) *gang->add_pod_groups() = std::move(group);
  }

  // See Run: a slice's pod trees fit the cache (a pod's tree is ~10 KB).
  static constexpr size_t kPodsPerSlice = 32;

  const CompiledDefinition& def_;
  Evaluation& eval_;
  const WorkloadInput& input_;
  const ResolveOptions& options_;
  v1::ResolvedWorkload& out_;
  Session::InputId root_input_ = -1;
  ComponentNode tree_;
  std::vector<PodEntry> pods_;
  absl::Status arithmetic_;  // the first overflow or bad quantity met while building
  struct GangState {
    WorkloadGang workload;
    // The pods' own groups (podGroups form) by name.
    std::map<std::string, v1::PodGroup, std::less<>> groups;
  };
  std::optional<GangState> gang_;  // when gang instructions are asked for
  // (scope, component index) -> instance id -> pod indices
  std::map<PlacementKey, std::map<std::string, PodList>> placement_;
};

void CollectComponentErrors(const v1::Component& component, std::vector<std::string>& out) {
  if (component.has_error()) {
    out.push_back(absl::StrCat(component.name(), " ", component.error().field_path(), ": ",
                               component.error().message()));
  }
  for (const auto& instance : component.instances()) {
    for (const auto& child : instance.children()) CollectComponentErrors(child, out);
  }
}

}  // namespace

std::vector<std::string> ComponentErrors(const v1::ResolvedWorkload& workload) {
  std::vector<std::string> errors;
  CollectComponentErrors(workload.root(), errors);
  return errors;
}

absl::StatusOr<v1::ResolvedWorkload> ResolveWorkload(const CompiledDefinition& def,
                                                     expressions::Engine& engine,
                                                     const WorkloadInput& input,
                                                     const ResolveOptions& options) {
  v1::ResolvedWorkload out;
  if (absl::Status status = ResolveWorkloadInto(def, engine, input, options, out); !status.ok()) {
    return status;
  }
  return out;
}

absl::Status ResolveWorkloadInto(const CompiledDefinition& def, expressions::Engine& engine,
                                 const WorkloadInput& input, const ResolveOptions& options,
                                 v1::ResolvedWorkload& out) {
  if (input.object == nullptr || !input.object->is_object()) {
    return absl::InvalidArgumentError("the workload must be a JSON object");
  }
  return engine.Run([&](Session& session) {
    Evaluation eval(def, session);
    Resolution resolution(def, eval, input, options, out);
    return resolution.Run();
  });
}

}  // namespace wm::resolution
