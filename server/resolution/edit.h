#ifndef WM_SERVER_RESOLUTION_EDIT_H_
#define WM_SERVER_RESOLUTION_EDIT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/definitions/compiled_definition.h"
#include "server/expressions/engine.h"

namespace wm::resolution {

// A change to the pod templates of some instances of a workload, in pod
// template terms whatever shape the definition gives its pods (template,
// spec plus metadata, or fragmented paths): what MutatePodSpecs carries.
struct PodTemplateEdit {
  // Component name; "" selects every component with a pod definition.
  std::string component;
  // Instance id; "" selects every instance.
  std::string instance_id;
  // An RFC 7386 merge patch on the template ({"metadata": {...}, "spec":
  // {...}}): maps merge, lists and scalars replace, null deletes.
  Json merge_patch;
  // Container name -> {"requests": {...}, "limits": {...}}, merged into
  // that container (spec.containers, else spec.initContainers).
  std::map<std::string, Json> container_resources;
  // The whole template, applied before the patch; null for none.
  Json replacement;
  // Where the edit is in the caller's request ("changes[0]"): the errors
  // of what only the edited template shows (a request above the limit the
  // container already has, annotations past their total) name it.
  std::string field;
};

struct WorkloadEdit {
  std::vector<PodTemplateEdit> templates;
  // Suspend (true) or resume (false) through every component's actions.
  std::optional<bool> suspend;
};

// Applies `edit` to `object` through its definition and returns the changed
// copy. Fails with InvalidArgument naming the component, instance or field
// when an edit selects nothing or writes a field the definition has no path
// for, or leaves an edited container's resources or a template's
// annotations as the apiserver would refuse them (pod_spec_validation.h:
// the values themselves are the caller's to check); with
// FailedPrecondition when a component cannot be suspended.
absl::StatusOr<Json> EditWorkload(const definitions::CompiledDefinition& def,
                                  expressions::Engine& engine, const Json& object,
                                  const WorkloadEdit& edit);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_EDIT_H_
