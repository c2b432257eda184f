#ifndef WM_SERVER_RESOLUTION_TREE_H_
#define WM_SERVER_RESOLUTION_TREE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"
#include "server/resolution/evaluation.h"

namespace wm::resolution {

// One instance of a component with what its paths extracted for it.
struct InstanceNode {
  std::string id;  // "" for a single-instance component
  std::optional<int32_t> replicas, min_replicas, max_replicas;
  // What the spec paths yield, null when not extracted; views into the
  // workload where they are parts of it.
  expressions::Output pod_template_spec;
  expressions::Output pod_spec;
  expressions::Output metadata;
  Json fragmented;  // {"schedulerName": ..., "containers": ...} or null

  // Desired replicas for views: replicas, else minReplicas, else 1.
  int32_t Desired() const;
  // Gang minimum: minReplicas if > 0, else replicas if > 0, else 0.
  int32_t EffectiveMin() const;
  // The PodSpec this instance's pods are made from, or null.
  const Json& PodSpec() const;
};

struct ComponentNode {
  int index = 0;  // into CompiledDefinition::components
  // Ids as instanceIdPath yields them (document order, duplicates kept):
  // the order writes zip values in.
  std::vector<std::string> raw_ids;
  std::vector<InstanceNode> instances;  // sorted by id, unique
  // Built once; every instance carries the same children (upstream shape).
  std::vector<ComponentNode> children;
  // Not OK when one of the component's own expressions failed or gave a
  // value the format refuses: a FieldError naming that field
  // ("spec.structureDefinition.childComponents[1].instanceIdPath: Cannot
  // iterate over null"). The node then has no instances and no children
  // (children live under instances); the rest of the tree is built
  // without it.
  absl::Status error;
};

// Builds the component tree of the root object: instance ids, then spec,
// fragmented and scale values zipped to them by index (shorter outputs
// padded with null; counts must match the ids, "instance ids count (n) does
// not match results count (m)"), then the children. A component whose own
// expressions fail is kept with its error (ComponentNode::error) and its
// siblings are built all the same, so one failing expression costs only
// its component's subtree.
ComponentNode BuildTree(Evaluation& eval, expressions::Session::InputId root);

// Converts a scale value: null -> unset; integral number -> value; numeric
// string (base 10, int32) -> value; negative counts and anything else are
// errors.
absl::StatusOr<std::optional<int32_t>> ScaleValue(const Json& value);

// The instance of `node` with id `id`, or null. Binary search: a pod is
// matched to its instance this way, and a large job has thousands of pods
// and of instances.
const InstanceNode* FindInstance(const ComponentNode& node, absl::string_view id);

// Depth-first search for the node of component `index`; null when it is
// not in the tree (below a component that failed).
const ComponentNode* FindNode(const ComponentNode& root, int index);

// The first node of the subtree (depth-first, `root` included) whose error
// is set, or null.
const ComponentNode* FirstFailed(const ComponentNode& root);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_TREE_H_
