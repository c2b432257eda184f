#ifndef WM_SERVER_CONTROLLERS_API_WRITES_H_
#define WM_SERVER_CONTROLLERS_API_WRITES_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/kube/api_client.h"

namespace wm::controllers {

// The writes the controllers make, with the apiserver's answers turned
// into codes a reconcile loop acts on: NotFound (gone meanwhile: nothing
// to do), Aborted (a conflict: the cache brings the newer object, which is
// looked at again), AlreadyExists (created meanwhile: likewise),
// Unavailable (anything else, retried with backoff). Each returns the
// object as written. Fields are validated strictly: a field the served
// schema does not know is an error, never dropped.

// A JSON merge patch of the object (or subresource) at `path`.
absl::StatusOr<Json> MergePatch(const kube::ApiClient& client, const std::string& path,
                                const Json& patch, const std::string& field_manager);

// Creates `object` in the collection at `collection_path`.
absl::StatusOr<Json> Create(const kube::ApiClient& client, const std::string& collection_path,
                            const Json& object, const std::string& field_manager);

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_API_WRITES_H_
