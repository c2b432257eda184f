#ifndef WM_SERVER_EXPRESSIONS_NATIVE_PATH_PLAN_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_PATH_PLAN_H_

// A fast lane for the commonest expressions of a definition: plain walks
// from the input such as `.metadata.labels["jobset.sigs.k8s.io/job-index"]`
// or `.spec.replicatedJobs[].name` (object keys and `[]`, nothing else).
// Pod selectors are such walks and run once per pod; walking them directly
// skips the interpreter's setup, continuations and bounds.
//
// The lane only takes the easy road: keys into objects (a missing key or a
// null gives null) and `[]` over arrays and objects. Anything else on the
// way (a key into an array, `[]` over null, more outputs than allowed) is
// not decided here, and the caller runs the interpreter, which gives the
// same outputs or error as always. So the lane can change speed, never
// meaning.

#include <optional>
#include <string>
#include <vector>

#include "server/common/json.h"
#include "server/expressions/native/program.h"

namespace wm::expressions::native {

class PathPlan {
 public:
  // The plan of `op`, or nullopt when `op` is not a plain walk (an
  // optional step, a computed key, a slice, anything but `.`, `.key`,
  // `.["key"]` and `.[]`).
  static std::optional<PathPlan> Of(const Op& op);

  // Appends to `outputs` views of every output, in the interpreter's order,
  // and returns true; or returns false, `outputs` unchanged, when the walk
  // meets what only the interpreter decides, or yields more than
  // `max_outputs` values. The views point into `input`.
  bool Walk(const Json& input, size_t max_outputs, std::vector<const Json*>& outputs) const;

 private:
  struct Step {
    bool iterate = false;  // `[]`, else `.key`
    std::string key;
  };

  bool WalkFrom(size_t step, const Json& value, size_t max_outputs,
                std::vector<const Json*>& outputs) const;

  std::vector<Step> steps_;
};

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_PATH_PLAN_H_
