// `wmctl definitions [NAME]` and `wmctl definitions apply`.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "client/wmctl/apply_command.h"
#include "client/wmctl/invocation.h"

namespace wm::wmctl {

namespace v1 = ::workloadmap::v1;

namespace {

// Which copy of a definition is in force: cluster over file over catalog.
int OriginRank(absl::string_view origin) {
  return origin == "cluster" ? 2 : origin == "file" ? 1 : 0;
}

}  // namespace

std::string Invocation::CheckKindFilter() const {
  if (args_.Has("--kind") && !args_.Has("--group")) return "--kind needs --group";
  if (args_.Has("--version") && !args_.Has("--kind")) return "--version needs --kind";
  if (args_.positional.size() > 1) return "definitions takes at most one NAME";
  return "";
}

bool Invocation::KindFilterKeeps(const DefinitionRow& row) const {
  auto keeps = [&](const char* flag, const std::string& value) {
    return !args_.Has(flag) || args_.Last(flag) == value;
  };
  return keeps("--group", row.group) && keeps("--kind", row.kind) &&
         keeps("--version", row.version);
}

int Invocation::PrintDefinitions(std::vector<DefinitionRow> rows,
                                 const std::vector<RejectedRow>& rejected) {
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const DefinitionRow& r) { return !KindFilterKeeps(r); }),
             rows.end());
  SortDefinitions(rows);
  int component_limit = std::stoi(args_.Last("--component-limit", "3"));
  if (!args_.positional.empty()) {
    const std::string& name = args_.positional[0];
    // The copy in force: cluster over file over catalog.
    const DefinitionRow* found = nullptr;
    for (const DefinitionRow& r : rows) {
      if (r.name == name && (!found || OriginRank(r.origin) > OriginRank(found->origin))) {
        found = &r;
      }
    }
    if (found == nullptr) return Fail(3, absl::StrCat("definition ", name, " not found"));
    if (settings_.output == "table") {
      out_ << DefinitionsTable({*found}, component_limit);
    } else {
      // Offline, the Karta itself, so that it round-trips into validate.
      Print(found->object);
    }
    return 0;
  }
  if (settings_.output != "table") {
    Print(DefinitionsJson(rows, rejected));
  } else if (rows.empty()) {
    err_ << "No Karta definitions found.\n";
  } else {
    out_ << DefinitionsTable(rows, component_limit);
  }
  err_ << RejectedWarnings(rejected);
  return 0;
}

int Invocation::DefinitionsApply() {
  if (!args_.positional.empty()) {
    return Usage("definitions apply takes no arguments: it applies the built-in catalog");
  }
  if (int code = LoadKubeconfig(false)) return code;
  kube::ApiClient client(*cluster_connection_);
  return RunDefinitionsApply(client, args_.Has("--prune"), out_, err_);
}

int Invocation::Definitions() {
  if (std::string bad = CheckKindFilter(); !bad.empty()) return Usage(bad);
  if (int code = Connect()) return code;
  v1::ListDefinitionsResponse response;
  grpc::Status status = client_->ListDefinitions({}, &response);
  if (!status.ok()) return CallFailed(status);
  PrintSessionWarnings();
  std::vector<DefinitionRow> rows;
  for (const v1::DefinitionInfo& d : response.definitions()) {
    DefinitionRow row{d.name(),
                      d.root_kind().group(),
                      d.root_kind().version(),
                      d.root_kind().kind(),
                      d.origin(),
                      {d.components().begin(), d.components().end()},
                      {}};
    // The daemon's API carries what it made of the Karta, not the Karta.
    row.object = {{"name", d.name()},
                  {"origin", d.origin()},
                  {"source", d.source()},
                  {"rootKind",
                   {{"group", d.root_kind().group()},
                    {"version", d.root_kind().version()},
                    {"kind", d.root_kind().kind()}}},
                  {"components", row.components},
                  {"gangScheduling", d.gang_scheduling()},
                  {"synced", d.synced()}};
    rows.push_back(std::move(row));
  }
  std::vector<RejectedRow> rejected;
  for (const v1::RejectedDefinition& r : response.rejected()) {
    RejectedRow row{r.name(), r.source(), {}};
    for (const v1::Finding& f : r.findings()) {
      if (f.severity() == "error") row.findings.push_back(FindingText(f));
    }
    rejected.push_back(std::move(row));
  }
  return PrintDefinitions(std::move(rows), rejected);
}

int Invocation::OfflineDefinitions() {
  if (std::string bad = CheckKindFilter(); !bad.empty()) return Usage(bad);
  auto registry = LoadRegistry();
  if (!registry.ok()) return Fail(1, std::string(registry.status().message()));
  std::vector<DefinitionRow> rows;
  for (const auto& d : (*registry)->All()) {
    DefinitionRow row{d->name,        "",       "", "", definitions::OriginName(d->origin),
                      {d->root.name}, d->object};
    if (d->root.kind) {
      row.group = d->root.kind->group;
      row.version = d->root.kind->version;
      row.kind = d->root.kind->kind;
    }
    for (const auto& child : d->children) row.components.push_back(child.name);
    rows.push_back(std::move(row));
  }
  return PrintDefinitions(std::move(rows), RegistryRejected());
}

}  // namespace wm::wmctl
