#ifndef WM_SERVER_DEFINITIONS_PARSE_H_
#define WM_SERVER_DEFINITIONS_PARSE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/common/openapi_schema.h"
#include "server/definitions/definition.h"

namespace wm::definitions {

// A definition as read, with what reading it found. `definition` is set
// when there is no error-severity finding among the structural checks
// (semantic validation is Validate's job).
struct ParsedDefinition {
  std::optional<Definition> definition;
  std::vector<Finding> findings;
  std::string source;  // file (and document index) or object name
  std::string name;    // metadata.name, when readable
};

// Reads one Karta object: checks apiVersion and kind, maps the deprecated
// status key `pending` to `initializing` (warning), checks the object
// against the Karta CRD's schema and applies its defaults (condition field
// names included: upstream gets those only through the API server, we apply
// them to files too), then converts it.
ParsedDefinition ParseDefinition(Json object, Origin origin, const std::string& source);

// Reads every document of a YAML/JSON file, or of every *.yaml, *.yml and
// *.json file below a directory (sorted by path). "-" reads standard input.
// Fails only when a file cannot be read or parsed as YAML at all.
absl::StatusOr<std::vector<ParsedDefinition>> LoadDefinitionFiles(const std::string& path,
                                                                  Origin origin = Origin::kFile);

// The Karta CRD's openAPIV3Schema (v1alpha1), embedded from
// deploy/crds/run.ai_kartas.yaml.
const Json& KartaSchema();

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_PARSE_H_
