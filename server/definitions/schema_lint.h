#ifndef WM_SERVER_DEFINITIONS_SCHEMA_LINT_H_
#define WM_SERVER_DEFINITIONS_SCHEMA_LINT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/common/json.h"
#include "server/common/openapi_schema.h"
#include "server/definitions/definition.h"

namespace wm::definitions {

// A field path an expression reads, as steps from the document root: field
// names and "[]" for any array element or map value.
using ReadPath = std::vector<std::string>;

// The paths `expression` reads from its input, as far as a static reading
// can tell: chains like `.spec.x[].y`, followed through pipes whose left side
// is such a chain (`(.a // []) | any(.b)` reads .a and .a[].b), into the
// arguments of map/any/all/select/sort_by/... and object and array
// constructions. What it cannot follow (variables, reduce, with_entries,
// two-argument any/all) it leaves out, so it never reports a path the
// expression does not read.
std::vector<ReadPath> ReadPaths(absl::string_view expression);

// Checks every expression a definition evaluates on the workload object
// against the root kind's openAPIV3Schema: one error per path the schema
// does not have. metadata is checked against ObjectMeta's fields only.
std::vector<Finding> LintAgainstSchema(const Definition& def, const Json& schema);

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_SCHEMA_LINT_H_
