#ifndef WM_SERVER_COMMON_OPENAPI_SCHEMA_H_
#define WM_SERVER_COMMON_OPENAPI_SCHEMA_H_

#include <string>
#include <vector>

#include "server/common/json.h"

namespace wm {

// One problem found in a document, located by its field path
// (`spec.structureDefinition.childComponents[1].ownerRef`).
struct Finding {
  enum class Severity { kError, kWarning };
  Severity severity = Severity::kError;
  std::string path;
  std::string message;

  bool is_error() const { return severity == Severity::kError; }
  std::string ToString() const;  // "path: message"
};

// Appends a field name or index to a field path.
std::string FieldPath(const std::string& parent, const std::string& field);
std::string IndexPath(const std::string& parent, size_t index);

// Checks `value` against a Kubernetes structural schema (a CRD's
// openAPIV3Schema) as the API server would, and applies its defaults in
// place. Covers type, nullable, required, enum, minItems/maxItems,
// minLength/maxLength, minProperties, list-map key and set uniqueness,
// x-kubernetes-int-or-string and x-kubernetes-preserve-unknown-fields.
// Fields the schema does not know are reported as warnings (the API server
// prunes them). CEL rules (x-kubernetes-validations) are not evaluated.
void ValidateAgainstSchema(const Json& schema, Json& value, const std::string& path,
                           std::vector<Finding>& findings);

}  // namespace wm

#endif  // WM_SERVER_COMMON_OPENAPI_SCHEMA_H_
