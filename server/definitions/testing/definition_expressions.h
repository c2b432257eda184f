#ifndef WM_SERVER_DEFINITIONS_TESTING_DEFINITION_EXPRESSIONS_H_
#define WM_SERVER_DEFINITIONS_TESTING_DEFINITION_EXPRESSIONS_H_

// The jq expressions of a directory of definitions, for tests that hold
// them to an engine: taken exactly as CompileDefinition hands them to an
// engine (with its `path(...)` and `== value` wrappings), through an engine
// that only records them.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace wm::definitions::testing {

struct DefinitionExpressions {
  std::string file;                      // ParsedDefinition::source
  std::string name;                      // the definition's name
  std::vector<std::string> sources;      // in program order
  std::vector<std::string> field_paths;  // the definition field of each source
};

// Every definition of the *.yaml files directly in `dir` (not below it:
// catalog/ keeps test cases and schemas in subdirectories), in file order.
// Fails on the first file or definition that does not load or compile,
// naming it.
absl::StatusOr<std::vector<DefinitionExpressions>> ExpressionsOfDefinitionsIn(
    const std::string& dir);

}  // namespace wm::definitions::testing

#endif  // WM_SERVER_DEFINITIONS_TESTING_DEFINITION_EXPRESSIONS_H_
