// ListDefinitions and ValidateDefinition.
#include <optional>

#include "absl/strings/str_cat.h"
#include "server/common/yaml_json.h"
#include "server/definitions/check.h"
#include "server/rpc/internal/targets.h"
#include "server/rpc/service.h"
#include "server/sources/definition_set.h"

namespace wm::rpc {

namespace v1 = workloadmap::v1;
using internal::PickCluster;

namespace {

void AddFinding(const Finding& f, google::protobuf::RepeatedPtrField<v1::Finding>* out) {
  v1::Finding* finding = out->Add();
  finding->set_severity(f.is_error() ? "error" : "warning");
  finding->set_path(f.path);
  finding->set_message(f.message);
}

}  // namespace

grpc::ServerUnaryReactor* WorkloadMapService::ServeListDefinitions(
    const UnaryCall& call, const v1::ListDefinitionsRequest* request,
    v1::ListDefinitionsResponse* response) {
  static constexpr char kMethod[] = "ListDefinitions";
  auto cluster = PickCluster(index_, "");
  if (!cluster.ok()) return RunHere(call, kMethod, [&] { return cluster.status(); });
  // The catalog and definition files are the daemon's configuration, shown
  // to any caller; the cluster's Karta objects only to callers who may list
  // them, as kubectl get kartas would.
  auto list = [response, cluster = *cluster](bool show_kartas) -> absl::Status {
    auto registry = cluster->definitions();
    if (!registry) return absl::UnavailableError("definitions are not loaded yet");
    response->set_filtered(!show_kartas);
    for (const auto& def : registry->All()) {
      if (!show_kartas && def->origin == definitions::Origin::kCluster) continue;
      v1::DefinitionInfo* info = response->add_definitions();
      info->set_name(def->name);
      info->set_origin(definitions::OriginName(def->origin));
      info->set_source(def->source);
      if (def->root.kind) {
        info->mutable_root_kind()->set_group(def->root.kind->group);
        info->mutable_root_kind()->set_version(def->root.kind->version);
        info->mutable_root_kind()->set_kind(def->root.kind->kind);
        info->set_synced(cluster->KindProblem(*def->root.kind).empty());
      }
      info->add_components(def->root.name);
      for (const auto& child : def->children) info->add_components(child.name);
      info->set_gang_scheduling(!def->gang.empty());
    }
    auto add_rejected = [&](const definitions::Registry::Rejected& r) {
      if (!show_kartas && sources::IsKartaSource(r.source)) return;
      v1::RejectedDefinition* out = response->add_rejected();
      out->set_name(r.name);
      out->set_source(r.source);
      for (const Finding& f : r.findings) AddFinding(f, out->mutable_findings());
    };
    for (const auto& r : registry->rejected()) add_rejected(r);
    for (const auto& r : cluster->rejected_definitions()) add_rejected(r);
    return absl::OkStatus();
  };
  auto reviewer = options_.access_reviewers.find((*cluster)->name());
  if (call.caller == nullptr || reviewer == options_.access_reviewers.end() ||
      reviewer->second == nullptr) {
    return RunHere(call, kMethod, [&] { return list(true); });
  }
  std::string resource = (*cluster)->Resource(sources::KartaGvk());
  access::ResourceAttributes kartas{.verb = "list",
                                    .group = sources::KartaGvk().group,
                                    .resource = resource.empty() ? "kartas" : resource};
  if (std::optional<access::Decision> known = reviewer->second->Cached(*call.caller, kartas)) {
    return RunHere(call, kMethod, [&] { return list(known->allowed); });
  }
  return Offload(call, kMethod, [list, caller = call.caller, reviewer = reviewer->second, kartas] {
    absl::StatusOr<access::Decision> decision = reviewer->Review(*caller, kartas);
    if (!decision.ok()) return decision.status();
    return list(decision->allowed);
  });
}

grpc::ServerUnaryReactor* WorkloadMapService::ServeValidateDefinition(
    const UnaryCall& call, const v1::ValidateDefinitionRequest* request,
    v1::ValidateDefinitionResponse* response) {
  static constexpr char kMethod[] = "ValidateDefinition";
  return AuthorizedInline(call, kMethod, [this, call, request, response] {
    return Offload(call, kMethod, [this, request, response]() -> absl::Status {
      if (request->definition_yaml().empty()) {
        return absl::InvalidArgumentError("definition_yaml is empty");
      }
      auto add = [&](const Finding& f) { AddFinding(f, response->mutable_findings()); };
      auto docs = ParseYamlDocuments(request->definition_yaml());
      if (!docs.ok()) {
        add({Finding::Severity::kError, "", std::string(docs.status().message())});
        return absl::OkStatus();
      }
      if (docs->empty()) add({Finding::Severity::kError, "", "no document"});
      for (size_t i = 0; i < docs->size(); ++i) {
        definitions::CheckedDefinition checked = definitions::CheckDefinition(
            (*docs)[i], definitions::Origin::kFile, absl::StrCat("document ", i + 1), engine_);
        if (checked.readable) response->add_names(checked.name);
        for (Finding& f : checked.findings) {
          if (docs->size() > 1) f.path = absl::StrCat("[", i, "].", f.path);
          add(f);
        }
      }
      bool valid = true;
      for (const auto& f : response->findings()) valid = valid && f.severity() != "error";
      response->set_valid(valid);
      return absl::OkStatus();
    });
  });
}

}  // namespace wm::rpc
