#ifndef WM_SERVER_DEFINITIONS_REGISTRY_H_
#define WM_SERVER_DEFINITIONS_REGISTRY_H_

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "server/common/openapi_schema.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/definitions/validate.h"
#include "server/expressions/engine.h"

namespace wm::definitions {

// The definitions a process knows, by root kind. A definition from a later
// origin (cluster over file over catalog) replaces those of earlier origins
// for the same root GVK; two from the same origin for one GVK make that GVK
// ambiguous. Definitions are parsed and validated when added and compiled
// on first use (compiling a definition costs libjq tens to hundreds of
// milliseconds; a listing needs none). Adding is not thread-safe: build a
// registry, then share it; ForKind and All are safe from many threads.
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
  // Adds one parsed definition; returns false if it is rejected. With
  // `compile_now` it is compiled at once (so jq compile errors reject it
  // here rather than at first use).
  bool Add(ParsedDefinition parsed, bool compile_now = false);

  // The compiled definition for a root kind: the exact GVK, else the same
  // group and kind at another version. NotFound when none covers it;
  // FailedPrecondition when two of the same origin do, or when it does not
  // compile.
  absl::StatusOr<std::shared_ptr<const CompiledDefinition>> ForKind(const Gvk& gvk) const;

  // Every loaded definition, sorted by name (then origin).
  std::vector<std::shared_ptr<const Definition>> All() const;
  const std::vector<Rejected>& rejected() const { return rejected_; }

 private:
  struct Entry {
    explicit Entry(ValidatedDefinition v) : validated(std::move(v)) {}
    const std::shared_ptr<const Definition>& definition() const { return validated.definition(); }

    ValidatedDefinition validated;  // compiled from on first use
    mutable std::once_flag compiled_once;
    mutable absl::StatusOr<std::shared_ptr<const CompiledDefinition>> compiled;
  };

  absl::StatusOr<std::shared_ptr<const CompiledDefinition>> Compiled(const Entry& e) const;

  // Takes `entry` into entries_ and the index by kind.
  void Keep(std::unique_ptr<Entry> entry);

  expressions::Engine& engine_;
  std::vector<std::unique_ptr<Entry>> entries_;
  // The entries of each root group and kind, any version: ForKind runs on
  // every call by reference, and reads only these.
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, std::vector<const Entry*>>>
      by_group_kind_;
  std::vector<Rejected> rejected_;
};

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_REGISTRY_H_
