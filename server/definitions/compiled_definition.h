#ifndef WM_SERVER_DEFINITIONS_COMPILED_DEFINITION_H_
#define WM_SERVER_DEFINITIONS_COMPILED_DEFINITION_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/common/openapi_schema.h"
#include "server/definitions/definition.h"
#include "server/definitions/validate.h"
#include "server/expressions/engine.h"

namespace wm::definitions {

// Index of an expression in CompiledDefinition::program; kNone when the
// definition has no such expression.
using ExprIndex = int;
constexpr ExprIndex kNone = -1;

// Every expression of one component, compiled. Reads are the expression as
// written; writes are `path(X)` (the locations X reads, for mutation).
struct CompiledComponent {
  const ComponentDefinition* def = nullptr;
  int parent = -1;            // component index; -1 for the root
  std::vector<int> children;  // component indices, in declaration order

  ExprIndex instance_ids = kNone;
  ExprIndex pod_template_spec = kNone, pod_template_spec_paths = kNone;
  ExprIndex pod_spec = kNone, pod_spec_paths = kNone;
  ExprIndex metadata = kNone, metadata_paths = kNone;
  std::array<ExprIndex, FragmentedPodSpec::kFieldCount> fragmented;
  std::array<ExprIndex, FragmentedPodSpec::kFieldCount> fragmented_paths;
  ExprIndex replicas = kNone, min_replicas = kNone, max_replicas = kNone;

  // On the pod: keyPath (existence), `keyPath == "value"` (upstream builds
  // the equality by string concatenation, quirk included), instance id and
  // replica key.
  ExprIndex type_key = kNone, type_equality = kNone;
  ExprIndex instance_selector = kNone, replica_selector = kNone;
  // Whether the type selector is only `keyPath`, the same expression as the
  // instance selector's (JobSet's role label names both): then a pod with
  // an instance id has a type key, and placement need not evaluate both.
  bool type_key_is_instance_id = false;

  std::vector<ExprIndex> suspend_paths, resume_paths;  // path(action.path)

  // Status (read on the root only): phase, conditions, and per status and
  // matcher `(expression) | tostring` or kNone.
  ExprIndex phase = kNone, conditions = kNone;
  std::array<std::vector<ExprIndex>, kMappedStatusCount> matcher_expressions;

  CompiledComponent() {
    fragmented.fill(kNone);
    fragmented_paths.fill(kNone);
  }
};

struct CompiledGangMember {
  std::vector<ExprIndex> group_by_key_paths;  // on the pod
  std::vector<ExprIndex> filters;             // on the pod
};

// A validated definition with all its expressions compiled into one program.
// Immutable; shared by every resolution that uses it.
struct CompiledDefinition {
  std::shared_ptr<const Definition> definition;
  std::shared_ptr<const expressions::Program> program;
  std::vector<CompiledComponent> components;  // [0] is the root
  // The components with a pod definition (pod-bearing), the root first,
  // then children in declaration order: where a pod may belong.
  std::vector<int> pod_components;
  // [group][member], parallel to definition->gang.pod_groups.
  std::vector<std::vector<CompiledGangMember>> pod_group_members;
  // The definition field each program expression came from (for errors).
  std::vector<std::string> field_paths;
  // Warnings found while validating.
  std::vector<Finding> warnings;

  // -1 when there is no component of that name.
  int ComponentIndex(const std::string& name) const;
  // The number of components with a specDefinition.
  int SpecCount() const;
};

// Compiles a validated definition with `engine` (sharing its Definition).
// On failure (a validation error, or an expression jq does not compile)
// returns InvalidArgument and fills `findings` (errors and warnings, each
// with its field path); on success `findings` holds the warnings.
absl::StatusOr<std::shared_ptr<const CompiledDefinition>> CompileDefinition(
    const ValidatedDefinition& def, expressions::Engine& engine,
    std::vector<Finding>* findings = nullptr);

// Validates `def` (Validate) and compiles it, as above.
absl::StatusOr<std::shared_ptr<const CompiledDefinition>> CompileDefinition(
    Definition def, expressions::Engine& engine, std::vector<Finding>* findings = nullptr);

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_COMPILED_DEFINITION_H_
