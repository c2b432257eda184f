#ifndef WM_SERVER_DEFINITIONS_VALIDATE_H_
#define WM_SERVER_DEFINITIONS_VALIDATE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/common/openapi_schema.h"
#include "server/definitions/definition.h"

namespace wm::definitions {

// Field path of component `index` (0 = root, i = childComponents[i-1]).
std::string ComponentPath(size_t index);

// Calls fn(field path, expression, is_pod_expression) for every jq
// expression the format tags for validation, in a fixed order.
void ForEachExpression(
    const Definition& def,
    const std::function<void(const std::string& path, const std::string& expression)>& fn);

// The most bytes one expression may have (16 KiB).
inline constexpr size_t kMaxExpressionBytes = 16 * 1024;

// What is wrong with one jq expression on its own, without compiling it:
// empty, longer than kMaxExpressionBytes, not scannable as jq, or using a
// construct of the read-only blacklist or a blocked builtin
// (expressions::FindForbiddenConstructs). One message per problem, in
// source order, without a field path (Validate puts the field's in front);
// empty when the expression may be compiled. `wmctl eval` applies it to
// its EXPR, so authors see the messages the daemon would give.
std::vector<std::string> ExpressionProblems(absl::string_view expression);

// Semantic validation, without compiling: upstream's validator rules in its
// order (unique names, which aborts; the root's kind, owner and status; each
// child's owner; one spec shape; instanceIdPath <=> instance selector;
// ownership cycles; gang members), the CRD's CEL rules, the read-only jq
// blacklist and blocked builtins on every tagged expression, and ours:
// podGroup subgroups name existing components, scale definitions set a
// path, expressions are at most 16 KiB, and instance, spec and scale paths
// agree on how many values they yield (warnings, since only the object can
// prove them wrong). Compile errors are added by CompileDefinition.
std::vector<Finding> Validate(const Definition& def);

// A definition with what Validate found in it. Making one runs Validate, so
// CompileDefinition takes it without validating again (the registry
// validates a definition when it is added and compiles it on first use).
class ValidatedDefinition {
 public:
  explicit ValidatedDefinition(Definition def);

  const std::shared_ptr<const Definition>& definition() const { return definition_; }
  // Validate's findings, errors and warnings.
  const std::vector<Finding>& findings() const { return findings_; }
  // True when no finding is an error.
  bool ok() const;

 private:
  std::shared_ptr<const Definition> definition_;
  std::vector<Finding> findings_;
};

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_VALIDATE_H_
