#ifndef WM_SERVER_DEFINITIONS_REGISTRY_H_
#define WM_SERVER_DEFINITIONS_REGISTRY_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "server/common/openapi_schema.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/expressions/engine.h"

namespace wm::definitions {

// The definitions a process knows, by root kind. A definition from a later
// origin (cluster over file over catalog) replaces those of earlier origins
// for the same root GVK; two from the same origin for one GVK make that GVK
// ambiguous. Not thread-safe: build one, then share it read-only.
class Registry {
 public:
  // A definition that could not be loaded, and why.
  struct Rejected {
    std::string source;
    std::string name;
    std::vector<Finding> findings;
  };

  explicit Registry(expressions::Engine& engine) : engine_(engine) {}

  // Adds every definition in YAML/JSON documents given as (source, text).
  // Returns an error only for unparseable text.
  absl::Status AddDocuments(const std::vector<std::pair<std::string, std::string>>& documents,
                            Origin origin);
  // Adds every definition in a file, a directory or "-" (stdin).
  absl::Status AddPath(const std::string& path, Origin origin = Origin::kFile);
  // Adds one parsed definition (compiling it); returns false if rejected.
  bool Add(ParsedDefinition parsed);

  // The definition for a root kind: the exact GVK, else the same group and
  // kind at another version. NotFound when none covers it;
  // FailedPrecondition when two of the same origin do.
  absl::StatusOr<std::shared_ptr<const CompiledDefinition>> ForKind(
      const GroupVersionKind& gvk) const;

  // Every loaded definition, sorted by name.
  std::vector<std::shared_ptr<const CompiledDefinition>> All() const;
  const std::vector<Rejected>& rejected() const { return rejected_; }

 private:
  expressions::Engine& engine_;
  std::vector<std::shared_ptr<const CompiledDefinition>> definitions_;
  std::vector<Rejected> rejected_;
};

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_REGISTRY_H_
