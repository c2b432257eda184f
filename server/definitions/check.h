#ifndef WM_SERVER_DEFINITIONS_CHECK_H_
#define WM_SERVER_DEFINITIONS_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "server/common/json.h"
#include "server/common/openapi_schema.h"
#include "server/definitions/definition.h"
#include "server/expressions/engine.h"

namespace wm::definitions {

// What checking one Karta object found.
struct CheckedDefinition {
  std::string name;  // metadata.name, when readable
  // Whether the object reads as a definition (no structural error against
  // the CRD's schema); semantic and compile errors may remain.
  bool readable = false;
  // The root component's kind, when the spec names one (even when the
  // definition is invalid otherwise: the operator labels by it).
  std::optional<Gvk> root_kind;
  // Errors and warnings, each with its field path, in the order found.
  std::vector<Finding> findings;

  // True when no finding is an error.
  bool valid() const;
};

// Everything the daemon would find in one Karta object: reading it against
// the CRD's schema (ParseDefinition), Validate, and compiling every
// expression with `engine`. The one check behind the ValidateDefinition
// RPC, the Karta operator's Validated condition and the admission webhook,
// so all three say the same thing about the same object.
CheckedDefinition CheckDefinition(Json object, Origin origin, const std::string& source,
                                  expressions::Engine& engine);

// How one finding reads on a line of its own, in the Karta operator's
// Validated condition, its events and the webhook's refusal:
// "error: spec.x: message" or "warning: spec.x: message", line breaks in
// the message made spaces.
std::string FindingLine(const Finding& finding);

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_CHECK_H_
