#include "server/controllers/catalog_publisher.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"
#include "server/common/yaml_json.h"
#include "server/controllers/karta_status.h"

namespace wm::controllers {
namespace {

constexpr char kKartas[] = "/apis/run.ai/v1alpha1/kartas";

using Outcome = PublishedKarta::Outcome;

// The Karta as we apply it: only what we own (apiVersion, kind, name, our
// labels, the spec), so the fields others set (status, their labels) stay
// theirs.
absl::StatusOr<Json> Applied(const Json& document, const std::string& source) {
  if (FindString(document, {"apiVersion"}) != "run.ai/v1alpha1" ||
      FindString(document, {"kind"}) != "Karta") {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a run.ai/v1alpha1 Karta"));
  }
  std::string name = FindString(document, {"metadata", "name"});
  const Json* spec = Find(document, {"spec"});
  if (name.empty() || spec == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": a Karta needs a name and a spec"));
  }
  Json labels = Json::object();
  if (const Json* given = Find(document, {"metadata", "labels"}); given && given->is_object()) {
    labels = *given;
  }
  labels[kCatalogLabel] = "true";
  // The labels KAI Scheduler's fallback looks Kartas up by, set here too:
  // a cluster where no workloadmapd runs the Karta operator finds them.
  const Json* kind = Find(*spec, {"structureDefinition", "rootComponent", "kind"});
  if (kind != nullptr && kind->is_object()) {
    labels[kKartaGroupLabel] = FindString(*kind, {"group"});
    labels[kKartaVersionLabel] = FindString(*kind, {"version"});
    labels[kKartaKindLabel] = FindString(*kind, {"kind"});
  }
  return Json{{"apiVersion", "run.ai/v1alpha1"},
              {"kind", "Karta"},
              {"metadata", {{"name", name}, {"labels", labels}}},
              {"spec", *spec}};
}

// "kubectl-edit: .spec.a, .spec.b" from a 409 apply conflict's Status.
std::string Conflicts(const std::string& body) {
  absl::StatusOr<Json> status = ParseJson(body);
  std::vector<std::string> fields;
  if (status.ok()) {
    if (const Json* causes = Find(*status, {"details", "causes"}); causes && causes->is_array()) {
      for (const Json& cause : *causes) fields.push_back(FindString(cause, {"field"}));
    }
  }
  std::string message = kube::StatusMessage(body);
  return fields.empty() ? message
                        : absl::StrCat(message, " (fields: ", absl::StrJoin(fields, ", "), ")");
}

// Whether a manager other than ours has changed the spec (an entry of
// managedFields that owns something under f:spec).
std::string OtherSpecManager(const Json& object, const std::string& ours) {
  const Json* entries = Find(object, {"metadata", "managedFields"});
  if (entries == nullptr || !entries->is_array()) return "";
  for (const Json& entry : *entries) {
    std::string manager = FindString(entry, {"manager"});
    if (manager == ours) continue;
    if (Find(entry, {"fieldsV1", "f:spec"}) != nullptr) return manager;
  }
  return "";
}

PublishedKarta Apply(const kube::ApiClient& client, const Json& karta,
                     const PublishOptions& options) {
  std::string name = karta["metadata"]["name"];
  PublishedKarta out{name, Outcome::kFailed, ""};
  std::string path = absl::StrCat(kKartas, "/", name);
  auto before = client.Do({.method = "GET", .path = path});
  if (!before.ok()) {
    out.detail = std::string(before.status().message());
    return out;
  }
  std::string version_before;
  if (before->status == 200) {
    if (auto object = ParseJson(before->body); object.ok()) {
      version_before = FindString(*object, {"metadata", "resourceVersion"});
    }
  }
  kube::HttpRequest request;
  request.method = "PATCH";
  request.path = absl::StrCat(path, "?fieldManager=", kube::QueryEscape(options.field_manager));
  request.content_type = "application/apply-patch+yaml";  // JSON is YAML
  request.body = karta.dump();
  auto response = client.Do(request);
  if (!response.ok()) {
    out.detail = std::string(response.status().message());
    return out;
  }
  if (response->status == 409) {
    out.outcome = Outcome::kKept;
    out.detail = Conflicts(response->body);
    return out;
  }
  if (response->status / 100 != 2) {
    out.detail = absl::StrCat("HTTP ", response->status, ": ", kube::StatusMessage(response->body));
    return out;
  }
  std::string version_after;
  if (auto object = ParseJson(response->body); object.ok()) {
    version_after = FindString(*object, {"metadata", "resourceVersion"});
  }
  out.outcome = version_before.empty()            ? Outcome::kCreated
                : version_after == version_before ? Outcome::kUnchanged
                                                  : Outcome::kConfigured;
  return out;
}

}  // namespace

const char* OutcomeName(PublishedKarta::Outcome outcome) {
  switch (outcome) {
    case Outcome::kCreated:
      return "created";
    case Outcome::kConfigured:
      return "configured";
    case Outcome::kUnchanged:
      return "unchanged";
    case Outcome::kKept:
      return "kept";
    case Outcome::kPruned:
      return "pruned";
    case Outcome::kFailed:
      return "failed";
  }
  return "failed";
}

absl::StatusOr<std::vector<PublishedKarta>> PublishKartas(
    const kube::ApiClient& client,
    const std::vector<std::pair<std::string, std::string>>& documents,
    const PublishOptions& options) {
  std::vector<Json> kartas;
  for (const auto& [source, text] : documents) {
    absl::StatusOr<std::vector<Json>> parsed = ParseYamlDocuments(text);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": ", parsed.status().message()));
    }
    for (const Json& document : *parsed) {
      if (document.is_null()) continue;
      absl::StatusOr<Json> karta = Applied(document, source);
      if (!karta.ok()) return karta.status();
      kartas.push_back(*std::move(karta));
    }
  }
  auto may_write = [&] { return !options.may_write || options.may_write(); };
  std::vector<PublishedKarta> results;
  std::set<std::string> shipped;
  for (const Json& karta : kartas) {
    shipped.insert(karta["metadata"]["name"].get<std::string>());
    if (!may_write()) return results;
    results.push_back(Apply(client, karta, options));
  }
  if (!options.prune) return results;

  auto list = client.Do(
      {.method = "GET",
       .path = absl::StrCat(
           kKartas, "?labelSelector=", kube::QueryEscape(absl::StrCat(kCatalogLabel, "=true")))});
  if (!list.ok()) return list.status();
  if (list->status != 200) {
    return absl::UnavailableError(absl::StrCat("listing catalog Kartas to prune: HTTP ",
                                               list->status, ": ",
                                               kube::StatusMessage(list->body)));
  }
  absl::StatusOr<Json> items = ParseJson(list->body);
  if (!items.ok()) return items.status();
  const Json* listed = Find(*items, {"items"});
  for (const Json& object : listed != nullptr && listed->is_array() ? *listed : Json::array()) {
    std::string name = FindString(object, {"metadata", "name"});
    if (name.empty() || shipped.contains(name)) continue;
    PublishedKarta out{name, Outcome::kFailed, ""};
    if (std::string manager = OtherSpecManager(object, options.field_manager); !manager.empty()) {
      out.outcome = Outcome::kKept;
      out.detail = absl::StrCat("no longer in the catalog, but its spec was changed by ", manager);
      results.push_back(std::move(out));
      continue;
    }
    if (!may_write()) return results;
    kube::HttpRequest request;
    request.method = "DELETE";
    request.path = absl::StrCat(kKartas, "/", name);
    request.content_type = "application/json";
    request.body =
        Json{{"apiVersion", "v1"},
             {"kind", "DeleteOptions"},
             {"preconditions",
              {{"resourceVersion", FindString(object, {"metadata", "resourceVersion"})}}}}
            .dump();
    auto response = client.Do(request);
    if (!response.ok()) {
      out.detail = std::string(response.status().message());
    } else if (response->status / 100 == 2 || response->status == 404) {
      out.outcome = Outcome::kPruned;
    } else {
      out.detail =
          absl::StrCat("HTTP ", response->status, ": ", kube::StatusMessage(response->body));
    }
    results.push_back(std::move(out));
  }
  return results;
}

}  // namespace wm::controllers
