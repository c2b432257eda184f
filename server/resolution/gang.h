#ifndef WM_SERVER_RESOLUTION_GANG_H_
#define WM_SERVER_RESOLUTION_GANG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/resolution/evaluation.h"
#include "server/resolution/tree.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::resolution {

// Gang scheduling exactly as KAI Scheduler's Workload Map fallback computes
// it (consumers.md §1.3): the current `podGroup` form when the definition
// has it, else the alpha `podGroups` form.

// Pod-bearing components: the root first, then children in declaration
// order.
std::vector<int> LeafComponents(const definitions::CompiledDefinition& def);

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

// The PodGroup KAI would create for `pod` of the workload `root` (its top
// owner), and which subgroup the pod joins. `workload_group`, when given, is
// WorkloadPodGroup(eval, tree, root), computed once for all of a workload's
// pods; otherwise it is computed here.
absl::StatusOr<PodGang> GangForPod(
    Evaluation& eval, const ComponentNode& tree, const Json& root, const Json& pod,
    expressions::Session::InputId pod_input,
    const absl::StatusOr<workloadmap::v1::PodGroup>* workload_group = nullptr);

// The workload's PodGroup in the `podGroup` form, which needs no pod; fails
// with NotFound for definitions with only the alpha form.
absl::StatusOr<workloadmap::v1::PodGroup> WorkloadPodGroup(Evaluation& eval,
                                                           const ComponentNode& tree,
                                                           const Json& root);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_GANG_H_
