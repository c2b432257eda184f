#include "server/controllers/pod_groups.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"

namespace wm::controllers {
namespace {

namespace v1 = workloadmap::v1;

// KAI's queue annotation-free choice is made by GetGangInstructions; Volcano
// reads its queue from this annotation of the workload.
constexpr char kVolcanoQueueAnnotation[] = "scheduling.volcano.sh/queue-name";

// The fewest pods that satisfy a node of the gang: its minMember, or the
// smallest minSubGroup of its children's needs added up.
class GangNeeds {
 public:
  explicit GangNeeds(const v1::PodGroup& group) : group_(group) {
    for (const v1::SubGroup& sub : group.sub_groups()) children_[sub.parent()].push_back(&sub);
  }

  int64_t OfGroup() const {
    return group_.has_min_member() ? group_.min_member() : OfChildren("", group_.min_sub_group());
  }
  int64_t Of(const v1::SubGroup& sub) const {
    return sub.has_min_member() ? sub.min_member() : OfChildren(sub.name(), sub.min_sub_group());
  }
  // Subgroups no other subgroup names as parent: the ones pods join.
  bool IsLeaf(const v1::SubGroup& sub) const { return !children_.contains(sub.name()); }
  // True when some node counts subgroups rather than pods.
  bool CountsSubGroups() const {
    if (group_.has_min_sub_group()) return true;
    return std::any_of(group_.sub_groups().begin(), group_.sub_groups().end(),
                       [](const v1::SubGroup& sub) { return sub.has_min_sub_group(); });
  }

 private:
  int64_t OfChildren(const std::string& parent, int32_t wanted) const {
    auto it = children_.find(parent);
    if (it == children_.end()) return 0;
    std::vector<int64_t> needs;
    for (const v1::SubGroup* child : it->second) needs.push_back(Of(*child));
    std::sort(needs.begin(), needs.end());
    int64_t total = 0;
    for (size_t i = 0; i < needs.size() && i < static_cast<size_t>(std::max(wanted, 0)); ++i) {
      total += needs[i];
    }
    return total;
  }

  const v1::PodGroup& group_;
  std::map<std::string, std::vector<const v1::SubGroup*>> children_;
};

Json TopologyJson(const v1::TopologyConstraint& t) {
  Json out = Json::object();
  if (!t.topology().empty()) out["topology"] = t.topology();
  if (!t.required_topology_level().empty()) {
    out["requiredTopologyLevel"] = t.required_topology_level();
  }
  if (!t.preferred_topology_level().empty()) {
    out["preferredTopologyLevel"] = t.preferred_topology_level();
  }
  return out;
}

// A YAML scalar as gopkg.in/yaml.v3 writes a Go string: plain unless it
// would read back as something else (empty, a number, a bool, null) or
// holds characters YAML gives a meaning.
std::string YamlString(const std::string& value) {
  double number;
  std::string lower = absl::AsciiStrToLower(value);
  bool plain = !value.empty() && !absl::SimpleAtod(value, &number) && lower != "true" &&
               lower != "false" && lower != "null" && lower != "~" && lower != "yes" &&
               lower != "no" && lower != "on" && lower != "off" &&
               value.find_first_of(":#'\"{}[],&*!|>%@`\n") == std::string::npos &&
               value.front() != ' ' && value.back() != ' ' && value.front() != '-';
  return plain ? value : Json(value).dump();
}

// kai.scheduler/top-owner-metadata: the top owner's name, uid, group,
// version and kind as YAML, in KAI's field order.
std::string TopOwnerMetadata(const Json& top_owner) {
  Gvk gvk =
      GvkFromApiVersion(FindString(top_owner, {"apiVersion"}), FindString(top_owner, {"kind"}));
  return absl::StrCat("name: ", YamlString(FindString(top_owner, {"metadata", "name"})),
                      "\nuid: ", YamlString(FindString(top_owner, {"metadata", "uid"})),
                      "\ngroup: ", YamlString(gvk.group), "\nversion: ", YamlString(gvk.version),
                      "\nkind: ", YamlString(gvk.kind), "\n");
}

Json StringMap(const Json* map) {
  Json out = Json::object();
  if (map == nullptr || !map->is_object()) return out;
  for (const auto& [key, value] : map->items()) {
    if (value.is_string()) out[key] = value;
  }
  return out;
}

Json KaiSpec(const v1::PodGroup& group, const GangNeeds& needs, const PodGroupContext& context) {
  const bool sub_groups_counted = context.schema.min_sub_group;
  Json spec = Json::object();
  spec["queue"] = group.queue();
  if (!context.kai_priority_class.empty()) {
    spec["priorityClassName"] = context.kai_priority_class;
  }
  if (group.has_min_sub_group() && sub_groups_counted) {
    spec["minSubGroup"] = group.min_sub_group();
  } else {
    spec["minMember"] = needs.OfGroup();
  }
  Json sub_groups = Json::array();
  for (const v1::SubGroup& sub : group.sub_groups()) {
    Json entry = {{"name", sub.name()}};
    if (!sub.parent().empty()) entry["parent"] = sub.parent();
    if (sub.has_min_sub_group() && sub_groups_counted) {
      entry["minSubGroup"] = sub.min_sub_group();
    } else {
      entry["minMember"] = needs.Of(sub);
    }
    Json topology = TopologyJson(sub.topology());
    if (!topology.empty()) entry["topologyConstraint"] = std::move(topology);
    sub_groups.push_back(std::move(entry));
  }
  spec["subGroups"] = std::move(sub_groups);
  Json topology = TopologyJson(group.topology());
  if (!topology.empty()) spec["topologyConstraint"] = std::move(topology);
  return spec;
}

Json VolcanoSpec(const v1::PodGroup& group, const GangNeeds& needs, const Json& top_owner) {
  Json spec = {{"minMember", needs.OfGroup()}};
  // Per task only when every subgroup counts pods: a subgroup that may be
  // left out (minSubGroup) has no minimum of its own.
  if (!needs.CountsSubGroups()) {
    Json tasks = Json::object();
    for (const v1::SubGroup& sub : group.sub_groups()) {
      if (needs.IsLeaf(sub)) tasks[sub.name()] = needs.Of(sub);
    }
    if (!tasks.empty()) spec["minTaskMember"] = std::move(tasks);
  }
  std::string queue = FindString(top_owner, {"metadata", "annotations", kVolcanoQueueAnnotation});
  if (!queue.empty()) spec["queue"] = queue;
  return spec;
}

// Sets `map[key] = value` in `patch` when `object`'s map lacks it.
void Want(const Json& object, const char* map, const std::string& key, const std::string& value,
          Json& patch) {
  std::string current = FindString(object, {"metadata", map, key});
  const Json* present = Find(object, {"metadata", map, key});
  if (present == nullptr || current != value) patch["metadata"][map][key] = value;
}

}  // namespace

absl::string_view GangSchedulerName(GangScheduler scheduler) {
  switch (scheduler) {
    case GangScheduler::kKai:
      return "kai";
    case GangScheduler::kVolcano:
      return "volcano";
    case GangScheduler::kCoscheduling:
      return "coscheduling";
  }
  return "";
}

Gvk PodGroupGvk(GangScheduler scheduler) {
  switch (scheduler) {
    case GangScheduler::kKai:
      return {"scheduling.run.ai", "v2alpha2", "PodGroup"};
    case GangScheduler::kVolcano:
      return {"scheduling.volcano.sh", "v1beta1", "PodGroup"};
    case GangScheduler::kCoscheduling:
      return {"scheduling.x-k8s.io", "v1alpha1", "PodGroup"};
  }
  return {};
}

Json DesiredPodGroup(GangScheduler scheduler, const v1::PodGroup& group, const Json& top_owner,
                     const PodGroupContext& context) {
  Gvk gvk = PodGroupGvk(scheduler);
  GangNeeds needs(group);
  Json metadata = {
      {"name", group.name()},
      {"namespace", FindString(top_owner, {"metadata", "namespace"})},
      {"ownerReferences", Json::array({{{"apiVersion", FindString(top_owner, {"apiVersion"})},
                                        {"kind", FindString(top_owner, {"kind"})},
                                        {"name", FindString(top_owner, {"metadata", "name"})},
                                        {"uid", FindString(top_owner, {"metadata", "uid"})}}})}};
  Json spec;
  switch (scheduler) {
    case GangScheduler::kKai: {
      // As KAI's default grouper: the top owner's labels and annotations,
      // and who the top owner is.
      metadata["labels"] = StringMap(Find(top_owner, {"metadata", "labels"}));
      Json annotations = StringMap(Find(top_owner, {"metadata", "annotations"}));
      annotations[kKaiTopOwnerMetadataAnnotation] = TopOwnerMetadata(top_owner);
      metadata["annotations"] = std::move(annotations);
      spec = KaiSpec(group, needs, context);
      break;
    }
    case GangScheduler::kVolcano:
      spec = VolcanoSpec(group, needs, top_owner);
      break;
    case GangScheduler::kCoscheduling:
      spec = {{"minMember", needs.OfGroup()}};
      break;
  }
  if (metadata.contains("labels") && metadata["labels"].empty()) metadata.erase("labels");
  return {{"apiVersion", gvk.group + "/" + gvk.version},
          {"kind", gvk.kind},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)}};
}

std::optional<Json> PodGroupPatch(const Json& current, const Json& desired) {
  Json patch = Json::object();
  for (const char* map : {"labels", "annotations"}) {
    const Json* wanted = Find(desired, {"metadata", map});
    if (wanted == nullptr) continue;
    for (const auto& [key, value] : wanted->items()) {
      Want(current, map, key, value.get<std::string>(), patch);
    }
  }
  const Json* owners = Find(desired, {"metadata", "ownerReferences"});
  const Json* current_owners = Find(current, {"metadata", "ownerReferences"});
  std::string owner_uid =
      owners != nullptr && !owners->empty() ? FindString((*owners)[0], {"uid"}) : "";
  bool owned = current_owners != nullptr && current_owners->is_array() &&
               std::any_of(current_owners->begin(), current_owners->end(),
                           [&](const Json& o) { return FindString(o, {"uid"}) == owner_uid; });
  if (owners != nullptr && !owned) patch["metadata"]["ownerReferences"] = *owners;

  const Json* spec = Find(desired, {"spec"});
  const Json* current_spec = Find(current, {"spec"});
  static const Json kNull;
  auto current_field = [&](const std::string& key) -> const Json& {
    return current_spec != nullptr && current_spec->is_object() && current_spec->contains(key)
               ? (*current_spec)[key]
               : kNull;
  };
  if (spec != nullptr) {
    for (const auto& [key, value] : spec->items()) {
      const Json& now = current_field(key);
      // A queue once set is the users' and admission's to move (KAI's
      // grouper leaves it too).
      if (key == "queue" && now.is_string() && !now.get<std::string>().empty()) continue;
      if (now != value) patch["spec"][key] = value;
    }
    // minMember and minSubGroup exclude each other.
    for (auto [set, other] :
         {std::pair{"minMember", "minSubGroup"}, std::pair{"minSubGroup", "minMember"}}) {
      if (spec->contains(set) && !spec->contains(other) && !current_field(other).is_null()) {
        patch["spec"][other] = nullptr;
      }
    }
  }
  if (patch.empty()) return std::nullopt;
  patch["metadata"]["resourceVersion"] = FindString(current, {"metadata", "resourceVersion"});
  return patch;
}

std::optional<Json> PodMembershipPatch(GangScheduler scheduler, const Json& pod,
                                       const std::string& group, const std::string& sub_group) {
  Json patch = Json::object();
  switch (scheduler) {
    case GangScheduler::kKai:
      Want(pod, "annotations", kKaiPodGroupAnnotation, group, patch);
      if (!sub_group.empty()) Want(pod, "labels", kKaiSubGroupLabel, sub_group, patch);
      break;
    case GangScheduler::kVolcano:
      Want(pod, "annotations", kVolcanoGroupAnnotation, group, patch);
      // A task name the pod has (from its own controller) is kept.
      if (!sub_group.empty() &&
          Find(pod, {"metadata", "annotations", kVolcanoTaskAnnotation}) == nullptr) {
        patch["metadata"]["annotations"][kVolcanoTaskAnnotation] = sub_group;
      }
      break;
    case GangScheduler::kCoscheduling:
      Want(pod, "labels", kCoschedulingGroupLabel, group, patch);
      break;
  }
  if (patch.empty()) return std::nullopt;
  patch["metadata"]["resourceVersion"] = FindString(pod, {"metadata", "resourceVersion"});
  return patch;
}

bool KaiHasNativeGrouper(const Gvk& gvk) {
  struct Entry {
    const char* group;
    const char* version;  // "*": every version
    const char* kind;
  };
  static constexpr Entry kTable[] = {
      {"apps", "v1", "Deployment"},
      {"machinelearning.seldon.io", "v1alpha2", "SeldonDeployment"},
      {"machinelearning.seldon.io", "v1", "SeldonDeployment"},
      {"kubevirt.io", "v1", "VirtualMachineInstance"},
      {"kubeflow.org", "v1", "TFJob"},
      {"kubeflow.org", "v1", "PyTorchJob"},
      {"kubeflow.org", "v1", "XGBoostJob"},
      {"kubeflow.org", "v1", "JAXJob"},
      {"kubeflow.org", "v1", "MPIJob"},
      {"kubeflow.org", "v2beta1", "MPIJob"},
      {"kubeflow.org", "v1beta1", "Notebook"},
      {"batch", "v1", "Job"},
      {"apps", "v1", "StatefulSet"},
      {"apps", "v1", "ReplicaSet"},
      {"run.ai", "v1", "RunaiJob"},
      {"", "v1", "Pod"},
      {"amlarc.azureml.com", "v1alpha1", "AmlJob"},
      {"serving.knative.dev", "v1", "Service"},
      {"batch", "v1", "CronJob"},
      {"workspace.devfile.io", "v1alpha2", "DevWorkspace"},
      {"ray.io", "v1alpha1", "RayCluster"},
      {"ray.io", "v1alpha1", "RayJob"},
      {"ray.io", "v1alpha1", "RayService"},
      {"ray.io", "v1", "RayCluster"},
      {"ray.io", "v1", "RayJob"},
      {"ray.io", "v1", "RayService"},
      {"kubeflow.org", "v1alpha1", "ScheduledWorkflow"},
      {"tekton.dev", "v1", "PipelineRun"},
      {"tekton.dev", "v1", "TaskRun"},
      {"egx.nvidia.io", "v1", "SPOTRequest"},
      {"leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"},
      {"jobset.x-k8s.io", "v1alpha2", "JobSet"},
      {"grove.io", "v1alpha1", "PodGangSet"},
      {"grove.io", "v1alpha1", "PodCliqueSet"},
      {"argoproj.io", "v1alpha1", "Workflow"},
      {"run.ai", "*", "InferenceWorkload"},
      {"run.ai", "*", "TrainingWorkload"},
      {"run.ai", "*", "DistributedWorkload"},
      {"run.ai", "*", "InteractiveWorkload"},
      {"run.ai", "*", "DistributedInferenceWorkload"},
      {"trainer.kubeflow.org", "v1alpha1", "TrainJob"},
      {"nvidia.com", "*", "DynamoGraphDeployment"},
  };
  return std::any_of(std::begin(kTable), std::end(kTable), [&](const Entry& e) {
    return gvk.group == e.group && gvk.kind == e.kind &&
           (std::string_view(e.version) == "*" || gvk.version == e.version);
  });
}

}  // namespace wm::controllers
