#include "server/definitions/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/yaml_json.h"
#include "server/definitions/parse.h"

namespace wm::definitions {

absl::Status Registry::AddDocuments(
    const std::vector<std::pair<std::string, std::string>>& documents, Origin origin) {
  for (const auto& [source, text] : documents) {
    auto docs = ParseYamlDocuments(text);
    if (!docs.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": ", docs.status().message()));
    }
    for (size_t i = 0; i < docs->size(); ++i) {
      Add(ParseDefinition(std::move((*docs)[i]), origin,
                          docs->size() > 1 ? absl::StrCat(source, "#", i + 1) : source));
    }
  }
  return absl::OkStatus();
}

absl::Status Registry::AddPath(const std::string& path, Origin origin) {
  auto parsed = LoadDefinitionFiles(path, origin);
  if (!parsed.ok()) return parsed.status();
  for (auto& p : *parsed) Add(std::move(p));
  return absl::OkStatus();
}

bool Registry::Add(ParsedDefinition parsed) {
  if (!parsed.definition) {
    rejected_.push_back({parsed.source, parsed.name, std::move(parsed.findings)});
    return false;
  }
  std::vector<Finding> findings;
  auto compiled = CompileDefinition(*std::move(parsed.definition), engine_, &findings);
  if (!compiled.ok()) {
    for (auto& f : findings) parsed.findings.push_back(std::move(f));
    rejected_.push_back({parsed.source, parsed.name, std::move(parsed.findings)});
    return false;
  }
  definitions_.push_back(*std::move(compiled));
  return true;
}

absl::StatusOr<std::shared_ptr<const CompiledDefinition>> Registry::ForKind(
    const GroupVersionKind& gvk) const {
  for (bool exact : {true, false}) {
    std::vector<std::shared_ptr<const CompiledDefinition>> matches;
    for (const auto& d : definitions_) {
      const auto& kind = d->definition->root.kind;
      if (!kind || kind->group != gvk.group || kind->kind != gvk.kind) continue;
      if (exact != (kind->version == gvk.version)) continue;
      matches.push_back(d);
    }
    if (matches.empty()) continue;
    Origin best = Origin::kCatalog;
    for (const auto& m : matches) best = std::max(best, m->definition->origin);
    std::vector<std::shared_ptr<const CompiledDefinition>> winners;
    for (const auto& m : matches) {
      if (m->definition->origin == best) winners.push_back(m);
    }
    if (winners.size() > 1) {
      std::vector<std::string> names;
      for (const auto& w : winners) {
        names.push_back(absl::StrCat(w->definition->name, " (", w->definition->source, ")"));
      }
      return absl::FailedPreconditionError(
          absl::StrCat("ambiguous: ", winners.size(), " ", OriginName(best), " definitions cover ",
                       gvk.ToString(), ": ", absl::StrJoin(names, ", "), "; remove all but one"));
    }
    return winners[0];
  }
  return absl::NotFoundError(absl::StrCat("no Workload Map definition covers ", gvk.ToString()));
}

std::vector<std::shared_ptr<const CompiledDefinition>> Registry::All() const {
  auto all = definitions_;
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a->definition->name, a->definition->origin) <
           std::tie(b->definition->name, b->definition->origin);
  });
  return all;
}

}  // namespace wm::definitions
