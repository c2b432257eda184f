#ifndef WM_SERVER_RESOLUTION_GANG_H_
#define WM_SERVER_RESOLUTION_GANG_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/resolution/evaluation.h"
#include "server/resolution/tree.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::resolution {

// Gang scheduling exactly as KAI Scheduler's Workload Map fallback computes
// it (consumers.md §1.3): the current `podGroup` form when the definition
// has it, else the alpha `podGroups` form.

// Whether component's type selector accepts the pod: keyPath alone is
// existence (any non-null output), keyPath with value is upstream's
// string-built `keyPath == "value"` (any output exactly true), matchLabels
// is label equality; all that are set must hold. A component without a type
// selector accepts nothing.
absl::StatusOr<bool> TypeSelectorAccepts(Evaluation& eval, int component, const Json& pod,
                                         expressions::Session::InputId pod_input);

// The component a pod belongs to: the only leaf when there is one, else the
// first leaf whose type selector accepts it.
absl::StatusOr<int> InferPodComponent(Evaluation& eval, const Json& pod,
                                      expressions::Session::InputId pod_input);

// CalculateSubtreeScale: with scale definitions anywhere, effective minimums
// of the subtree (one instance's when `instance` is given and the component
// has several), multiplied down through children; without any, the number
// of leaf instances in the subtree. Fails (FailedPrecondition, naming the
// component and its error) when a component of the subtree, or an
// ancestor, could not be resolved: the count would be too small.
absl::StatusOr<int32_t> SubtreeScale(const definitions::CompiledDefinition& def,
                                     const ComponentNode& tree, int component,
                                     const std::string* instance = nullptr);

struct PodGang {
  workloadmap::v1::PodGroup group;
  workloadmap::v1::PodGangAssignment assignment;
};

// What KAI's default grouper reads of the top owner for a PodGroup's
// queue, priority class and topology (its labels kai.scheduler/queue,
// project and priorityClassName; its kai.scheduler/topology annotations);
// "" where absent. A pod's own labels fill what these leave empty.
struct OwnerHints {
  std::string queue, project, priority_class_name;
  std::string topology, required_topology_level, preferred_topology_level;
};
OwnerHints ReadOwnerHints(const Json& root);

// What the gangs of all of a workload's pods share, read once for all of
// them: a large job has thousands of pods.
struct WorkloadGang {
  OwnerHints hints;
  // The top owner's UID, which names its groups ("<uid>" when it has none).
  std::string top_owner_uid;
  // WorkloadPodGroup's answer for a definition with the podGroup form,
  // else NotFound. Set by ReadWorkloadGang: no default error here, whose
  // message would cost an allocation for every resolution.
  absl::StatusOr<workloadmap::v1::PodGroup> group;
};
WorkloadGang ReadWorkloadGang(Evaluation& eval, const ComponentNode& tree, const Json& root);

// GangForPod's default: every pod's answer carries its group.
inline bool ReportEveryGroup(absl::string_view /*name*/) { return true; }

// The PodGroup KAI would create for `pod` of the workload `root` (its top
// owner), and which subgroup the pod joins. `workload`, when given, is
// ReadWorkloadGang(eval, tree, root); otherwise it is read here. In the
// `podGroup` form every pod joins the workload's group; in the `podGroups`
// form the pod's own group is named by its keys.
//
// `report_group(name)` says whether the answer carries the group itself or
// only the pod's assignment to it (then `group` is empty): a resolution
// reports each group once for thousands of pods, and building the group
// again for every pod, only to drop it, was most of a pod's gang cost. A
// group left out is still checked: its errors (a scale that overflows) are
// the pod's.
absl::StatusOr<PodGang> GangForPod(
    Evaluation& eval, const ComponentNode& tree, const Json& root, const Json& pod,
    expressions::Session::InputId pod_input, const WorkloadGang* workload = nullptr,
    absl::FunctionRef<bool(absl::string_view name)> report_group = ReportEveryGroup);

// The workload's PodGroup in the `podGroup` form, which needs no pod; fails
// with NotFound for definitions with only the alpha form.
absl::StatusOr<workloadmap::v1::PodGroup> WorkloadPodGroup(Evaluation& eval,
                                                           const ComponentNode& tree,
                                                           const Json& root);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_GANG_H_
