#ifndef WM_CLIENT_WMCTL_DEFINITIONS_VIEW_H_
#define WM_CLIENT_WMCTL_DEFINITIONS_VIEW_H_

#include <string>
#include <vector>

#include "server/common/json.h"

namespace wm::wmctl {

// One definition as `wmctl definitions` shows it, from the daemon's
// ListDefinitions or from the in-process registry (--offline).
struct DefinitionRow {
  std::string name;
  std::string group, version, kind;     // the root kind; empty kind: none
  std::string origin;                   // catalog, file or cluster
  std::vector<std::string> components;  // the root first, then the children
  // For -o json|yaml: the Karta (offline), or the daemon's view of it.
  Json object;
};

// A definition that was not loaded, and its error findings ("path: message").
struct RejectedRow {
  std::string name, source;
  std::vector<std::string> findings;
};

// kli's order: by name, then origin; those without a root kind (or its
// version) last, as they never resolve.
void SortDefinitions(std::vector<DefinitionRow>& rows);

// kli's definitions table: NAME KIND ORIGIN COMPONENTS, the components
// listed root first, `component_limit` children after it ("+N more"; 0 =
// all).
std::string DefinitionsTable(const std::vector<DefinitionRow>& rows, int component_limit);

// "warning: definition NAME (SOURCE) is invalid and was skipped:" and its
// findings indented, for stderr after the output.
std::string RejectedWarnings(const std::vector<RejectedRow>& rejected);

// The -o json|yaml listing: {"items": [object...], "count": N, "rejected":
// [{name, source, findings}]}.
Json DefinitionsJson(const std::vector<DefinitionRow>& rows,
                     const std::vector<RejectedRow>& rejected);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_DEFINITIONS_VIEW_H_
