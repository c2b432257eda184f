#include "client/wmctl/definitions_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wm::wmctl {

std::string DefinitionsTable(
    const std::vector<std::shared_ptr<const definitions::Definition>>& defs, int component_limit) {
  std::vector<std::vector<std::string>> rows = {{"NAME", "KIND", "ORIGIN", "COMPONENTS"}};
  for (const auto& d : defs) {
    const auto& def = *d;
    std::vector<std::string> components = {def.root.name};
    size_t shown = component_limit > 0
                       ? std::min(def.children.size(), static_cast<size_t>(component_limit))
                       : def.children.size();
    for (size_t i = 0; i < shown; ++i) components.push_back(def.children[i].name);
    if (shown < def.children.size()) {
      components.push_back(absl::StrCat("+", def.children.size() - shown, " more"));
    }
    rows.push_back({def.name, def.root.kind ? def.root.kind->kind : "<none>",
                    definitions::OriginName(def.origin), absl::StrJoin(components, ", ")});
  }
  std::vector<size_t> widths(4, 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < 4; ++c) widths[c] = std::max(widths[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    for (size_t c = 0; c < 3; ++c) out += r[c] + std::string(widths[c] - r[c].size() + 3, ' ');
    out += r[3] + "\n";
  }
  return out;
}

}  // namespace wm::wmctl
