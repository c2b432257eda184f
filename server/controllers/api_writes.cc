#include "server/controllers/api_writes.h"

#include "absl/strings/str_cat.h"
#include "server/common/json_reader.h"

namespace wm::controllers {
namespace {

absl::StatusOr<Json> Send(const kube::ApiClient& client, const std::string& method,
                          const std::string& path, const std::string& content_type,
                          const Json& body, const std::string& field_manager) {
  kube::HttpRequest request;
  request.method = method;
  // Strict: a field the object's schema lacks (a PodGroup CRD older than
  // the field) fails the write, which is logged and retried, instead of
  // being dropped in silence with a warning nobody reads.
  request.path = absl::StrCat(path, "?fieldManager=", kube::QueryEscape(field_manager),
                              "&fieldValidation=Strict");
  request.content_type = content_type;
  request.body = body.dump();
  auto response = client.Do(request);
  if (!response.ok()) return response.status();
  std::string message = kube::StatusMessage(response->body);
  switch (response->status) {
    case 200:
    case 201:
      break;
    case 404:
      return absl::NotFoundError(message);
    case 409:
      return request.method == "POST"
                 ? absl::AlreadyExistsError(absl::StrCat("already exists: ", message))
                 : absl::AbortedError(absl::StrCat("conflict: ", message));
    default:
      return absl::UnavailableError(absl::StrCat(request.method, " ", request.path, ": HTTP ",
                                                 response->status, ": ", message));
  }
  absl::StatusOr<Json> object = ParseJson(response->body);
  if (!object.ok()) {
    return absl::InternalError(
        absl::StrCat("the apiserver answered with invalid JSON: ", object.status().message()));
  }
  return object;
}

}  // namespace

absl::StatusOr<Json> MergePatch(const kube::ApiClient& client, const std::string& path,
                                const Json& patch, const std::string& field_manager) {
  return Send(client, "PATCH", path, "application/merge-patch+json", patch, field_manager);
}

absl::StatusOr<Json> Create(const kube::ApiClient& client, const std::string& collection_path,
                            const Json& object, const std::string& field_manager) {
  return Send(client, "POST", collection_path, "application/json", object, field_manager);
}

}  // namespace wm::controllers
