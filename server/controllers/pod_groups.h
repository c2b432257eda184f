#ifndef WM_SERVER_CONTROLLERS_POD_GROUPS_H_
#define WM_SERVER_CONTROLLERS_POD_GROUPS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "server/common/gvk.h"
#include "server/common/json.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::controllers {

// The gang schedulers whose own PodGroup objects the daemon writes, from
// the pod group GetGangInstructions computes (KAI's Workload Map grouper's
// shape). What each scheduler reads, from its own code:
//   - KAI Scheduler: scheduling.run.ai/v2alpha2 PodGroup (minMember or
//     minSubGroup, subGroups, topologyConstraint, queue, priorityClassName,
//     the top owner's labels and annotations plus
//     kai.scheduler/top-owner-metadata); a pod joins it by the annotation
//     pod-group-name and its subgroup by the label
//     kai.scheduler/subgroup-name.
//   - Volcano: scheduling.volcano.sh/v1beta1 PodGroup (minMember, and
//     minTaskMember per task); a pod joins it by the annotation
//     scheduling.k8s.io/group-name, and Volcano names its task by the
//     annotation volcano.sh/task-spec (here the pod's leaf subgroup).
//   - scheduler-plugins coscheduling: scheduling.x-k8s.io/v1alpha1 PodGroup
//     (minMember); a pod joins it by the label scheduling.x-k8s.io/pod-group.
enum class GangScheduler { kKai, kVolcano, kCoscheduling };

// "kai", "volcano", "coscheduling".
absl::string_view GangSchedulerName(GangScheduler scheduler);
// The kind of the scheduler's PodGroup.
Gvk PodGroupGvk(GangScheduler scheduler);

inline constexpr char kKaiPodGroupAnnotation[] = "pod-group-name";
inline constexpr char kKaiSubGroupLabel[] = "kai.scheduler/subgroup-name";
inline constexpr char kKaiSkipAnnotation[] = "kai.scheduler/skip-podgrouper";
inline constexpr char kKaiTopOwnerMetadataAnnotation[] = "kai.scheduler/top-owner-metadata";
inline constexpr char kVolcanoGroupAnnotation[] = "scheduling.k8s.io/group-name";
inline constexpr char kVolcanoTaskAnnotation[] = "volcano.sh/task-spec";
inline constexpr char kCoschedulingGroupLabel[] = "scheduling.x-k8s.io/pod-group";

// What the served PodGroup CRD accepts, read from its schema: KAI added
// minSubGroup (mutually exclusive with minMember) in 2026; a KAI from
// before knows only minMember.
struct PodGroupSchema {
  bool min_sub_group = true;
};

// The facts of the cluster a PodGroup depends on beyond the workload.
struct PodGroupContext {
  PodGroupSchema schema;
  // KAI: the priority class to write (the top owner's priorityClassName
  // label when that PriorityClass exists, else KAI's default "train");
  // the caller checks existence.
  std::string kai_priority_class;
};

// The PodGroup the scheduler needs for `group` of the workload `top_owner`
// (its whole object): apiVersion, kind, metadata (name, namespace, labels,
// annotations, an owner reference to the top owner, without controller, so
// it goes with the workload and no controller chain changes) and spec.
// Only what the daemon owns is set: a PodGroup in the cluster may carry
// more (its status, fields other writers own).
Json DesiredPodGroup(GangScheduler scheduler, const workloadmap::v1::PodGroup& group,
                     const Json& top_owner, const PodGroupContext& context);

// The merge patch that makes `current` carry what `desired` sets (with
// current's resourceVersion, so a patch computed from a stale cache is
// refused), or nothing when it does already. As KAI's own grouper does, a
// queue once set is left alone (users and admission move PodGroups between
// queues), and an empty desired topology keeps the current one. Switching
// between minMember and minSubGroup removes the other.
std::optional<Json> PodGroupPatch(const Json& current, const Json& desired);

// Which group (and subgroup, "" for none) a pod joins, for which scheduler.
struct PodGroupMembership {
  GangScheduler scheduler = GangScheduler::kKai;
  std::string group;
  std::string sub_group;
};

// The merge patch that puts `pod` into `group` (and, where the scheduler
// has them, into `sub_group`, "" for none) for the scheduler, with the
// pod's resourceVersion; nothing when it is there already.
std::optional<Json> PodMembershipPatch(GangScheduler scheduler, const Json& pod,
                                       const std::string& group, const std::string& sub_group);

// Whether KAI's pod-grouper has a plugin of its own for the kind (JobSet,
// PyTorchJob, RayCluster, LeaderWorkerSet, ...; its table at commit
// d5bc503a of kai-scheduler/KAI-Scheduler, pkg/podgrouper/podgrouper/hub):
// for those KAI groups pods itself, and the daemon leaves them alone
// unless told otherwise.
bool KaiHasNativeGrouper(const Gvk& gvk);

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_POD_GROUPS_H_
