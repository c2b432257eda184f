#include "server/definitions/check.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"

namespace wm::definitions {
namespace {

// spec.structureDefinition.rootComponent.kind as written, when its version
// and kind are strings (group may be empty: the core group).
std::optional<Gvk> RootKindAsWritten(const Json& object) {
  const Json* kind = Find(object, {"spec", "structureDefinition", "rootComponent", "kind"});
  if (kind == nullptr || !kind->is_object()) return std::nullopt;
  std::optional<std::string> group = FindOptionalString(*kind, {"group"});
  std::optional<std::string> version = FindOptionalString(*kind, {"version"});
  std::optional<std::string> name = FindOptionalString(*kind, {"kind"});
  if (!version || !name || version->empty() || name->empty()) return std::nullopt;
  return Gvk{group.value_or(""), *version, *name};
}

}  // namespace

std::string FindingLine(const Finding& finding) {
  // ToString marks warnings; errors are marked here, so each line says.
  std::string line =
      finding.is_error() ? absl::StrCat("error: ", finding.ToString()) : finding.ToString();
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

bool CheckedDefinition::valid() const {
  for (const Finding& f : findings) {
    if (f.is_error()) return false;
  }
  return true;
}

CheckedDefinition CheckDefinition(Json object, Origin origin, const std::string& source,
                                  expressions::Engine& engine) {
  CheckedDefinition checked;
  checked.root_kind = RootKindAsWritten(object);
  ParsedDefinition parsed = ParseDefinition(std::move(object), origin, source);
  checked.name = parsed.name;
  checked.findings = std::move(parsed.findings);
  if (parsed.definition) {
    checked.readable = true;
    checked.name = parsed.definition->name;
    if (parsed.definition->root.kind) checked.root_kind = parsed.definition->root.kind;
    std::vector<Finding> compile_findings;
    (void)CompileDefinition(*std::move(parsed.definition), engine, &compile_findings);
    checked.findings.insert(checked.findings.end(), compile_findings.begin(),
                            compile_findings.end());
  }
  return checked;
}

}  // namespace wm::definitions
