#include "client/wmctl/definitions_view.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/wmctl/describe_view.h"

namespace wm::wmctl {

void SortDefinitions(std::vector<DefinitionRow>& rows) {
  auto key = [](const DefinitionRow& r) {
    bool resolvable = !r.kind.empty() && !r.version.empty();
    return std::make_tuple(!resolvable, std::cref(r.name), std::cref(r.origin));
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const DefinitionRow& a, const DefinitionRow& b) { return key(a) < key(b); });
}

std::string DefinitionsTable(const std::vector<DefinitionRow>& rows, int component_limit) {
  std::vector<std::vector<std::string>> lines = {{"NAME", "KIND", "ORIGIN", "COMPONENTS"}};
  for (const DefinitionRow& d : rows) {
    size_t children = d.components.empty() ? 0 : d.components.size() - 1;
    size_t shown =
        component_limit > 0 ? std::min(children, static_cast<size_t>(component_limit)) : children;
    std::vector<std::string> components(
        d.components.begin(), d.components.begin() + std::min(d.components.size(), shown + 1));
    if (shown < children) components.push_back(absl::StrCat("+", children - shown, " more"));
    lines.push_back(
        {d.name, d.kind.empty() ? "<none>" : d.kind, d.origin, absl::StrJoin(components, ", ")});
  }
  return AlignColumns(lines, 3);
}

std::string RejectedWarnings(const std::vector<RejectedRow>& rejected) {
  std::string out;
  for (const RejectedRow& r : rejected) {
    absl::StrAppend(&out, "warning: definition ", r.name.empty() ? r.source : r.name, " (",
                    r.source, ") is invalid and was skipped:\n");
    for (const std::string& f : r.findings) absl::StrAppend(&out, "  ", f, "\n");
  }
  return out;
}

Json DefinitionsJson(const std::vector<DefinitionRow>& rows,
                     const std::vector<RejectedRow>& rejected) {
  Json items = Json::array();
  for (const DefinitionRow& d : rows) items.push_back(d.object);
  Json skipped = Json::array();
  for (const RejectedRow& r : rejected) {
    skipped.push_back({{"name", r.name}, {"source", r.source}, {"findings", r.findings}});
  }
  return {{"items", items}, {"count", items.size()}, {"rejected", skipped}};
}

}  // namespace wm::wmctl
