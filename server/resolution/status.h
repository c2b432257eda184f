#ifndef WM_SERVER_RESOLUTION_STATUS_H_
#define WM_SERVER_RESOLUTION_STATUS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/definitions/definition.h"
#include "server/resolution/evaluation.h"

namespace wm::resolution {

struct ConditionValue {
  std::string type, status, message, reason;
};

struct StatusResult {
  bool defined = false;  // the root has a status definition
  std::string phase;
  std::vector<ConditionValue> conditions;
  // In the fixed order; {kUndefined} when nothing matched.
  std::vector<definitions::WorkloadStatus> matched;
};

// Evaluates the root's status definition (format §2.5): phase (first
// output, null -> ""), conditions (arrays of objects, concatenated; only
// string fields are read; last duplicate type wins in the lookup), then
// every status in the fixed order, each an OR of matchers, each matcher a
// short-circuit AND of byPhase, byConditions and byExpression. Any error in
// an evaluated matcher fails the whole call.
absl::StatusOr<StatusResult> EvaluateStatus(Evaluation& eval, expressions::Session::InputId root);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_STATUS_H_
