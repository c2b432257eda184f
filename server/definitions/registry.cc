#include "server/definitions/registry.h"

#include <algorithm>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/yaml_json.h"
#include "server/definitions/parse.h"
#include "server/definitions/validate.h"

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
  // The user's own files are compiled at once, so their errors show now.
  for (auto& p : *parsed) Add(std::move(p), /*compile_now=*/true);
  return absl::OkStatus();
}

bool Registry::Add(ParsedDefinition parsed, bool compile_now) {
  // Validated once, here: compiling (now or on first use) reuses the result.
  std::optional<ValidatedDefinition> validated;
  if (parsed.definition) {
    validated.emplace(*std::move(parsed.definition));
    parsed.findings.insert(parsed.findings.end(), validated->findings().begin(),
                           validated->findings().end());
  }
  bool invalid = !validated || std::any_of(parsed.findings.begin(), parsed.findings.end(),
                                           [](const Finding& f) { return f.is_error(); });
  if (!invalid && compile_now) {
    std::vector<Finding> findings;
    auto compiled = CompileDefinition(*validated, engine_, &findings);
    if (!compiled.ok()) {
      for (auto& f : findings) {
        if (f.is_error()) parsed.findings.push_back(std::move(f));
      }
      invalid = true;
    } else {
      auto entry = std::make_unique<Entry>(*std::move(validated));
      std::call_once(entry->compiled_once, [&] { entry->compiled = *compiled; });
      Keep(std::move(entry));
      return true;
    }
  }
  if (invalid) {
    rejected_.push_back({parsed.source, parsed.name, std::move(parsed.findings)});
    return false;
  }
  Keep(std::make_unique<Entry>(*std::move(validated)));
  return true;
}

void Registry::Keep(std::unique_ptr<Entry> entry) {
  if (const auto& kind = entry->definition()->root.kind) {
    by_group_kind_[kind->group][kind->kind].push_back(entry.get());
  }
  entries_.push_back(std::move(entry));
}

absl::StatusOr<std::shared_ptr<const CompiledDefinition>> Registry::Compiled(const Entry& e) const {
  std::call_once(e.compiled_once, [&] {
    auto compiled = CompileDefinition(e.validated, engine_);
    e.compiled = compiled.ok() ? std::move(compiled)
                               : absl::FailedPreconditionError(compiled.status().message());
  });
  return e.compiled;
}

absl::StatusOr<std::shared_ptr<const CompiledDefinition>> Registry::ForKind(const Gvk& gvk) const {
  static const std::vector<const Entry*> kNone;
  const std::vector<const Entry*>* same_kind = &kNone;
  if (auto group = by_group_kind_.find(gvk.group); group != by_group_kind_.end()) {
    if (auto kind = group->second.find(gvk.kind); kind != group->second.end()) {
      same_kind = &kind->second;
    }
  }
  for (bool exact : {true, false}) {
    absl::InlinedVector<const Entry*, 2> matches;
    for (const Entry* e : *same_kind) {
      if (exact == (e->definition()->root.kind->version == gvk.version)) matches.push_back(e);
    }
    if (matches.empty()) continue;
    Origin best = Origin::kCatalog;
    for (const Entry* m : matches) best = std::max(best, m->definition()->origin);
    absl::InlinedVector<const Entry*, 2> winners;
    for (const Entry* m : matches) {
      if (m->definition()->origin == best) winners.push_back(m);
    }
    if (winners.size() > 1) {
      std::vector<std::string> names;
      for (const Entry* w : winners) {
        names.push_back(absl::StrCat(w->definition()->name, " (", w->definition()->source, ")"));
      }
      return absl::FailedPreconditionError(
          absl::StrCat("ambiguous: ", winners.size(), " ", OriginName(best), " definitions cover ",
                       gvk.ToString(), ": ", absl::StrJoin(names, ", "), "; remove all but one"));
    }
    return Compiled(*winners[0]);
  }
  return absl::NotFoundError(absl::StrCat("no Workload Map definition covers ", gvk.ToString()));
}

std::vector<std::shared_ptr<const Definition>> Registry::All() const {
  std::vector<std::shared_ptr<const Definition>> all;
  for (const auto& e : entries_) all.push_back(e->definition());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a->name, a->origin) < std::tie(b->name, b->origin);
  });
  return all;
}

}  // namespace wm::definitions
