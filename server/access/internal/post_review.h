// How the reviewers ask the apiserver. Internal to the access layer.
#ifndef WM_SERVER_ACCESS_INTERNAL_POST_REVIEW_H_
#define WM_SERVER_ACCESS_INTERNAL_POST_REVIEW_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/common/json.h"
#include "server/kube/api_client.h"

namespace wm::access::internal {

// POSTs `review` (a TokenReview, a SubjectAccessReview) to `path` and
// returns the apiserver's answer, the review with its status. Unavailable,
// saying it `cannot <what>`, when no answer came within `timeout`, when the
// apiserver answered other than 200 or 201, or when the answer is not JSON.
absl::StatusOr<Json> PostReview(const kube::ApiClient& client, absl::string_view path,
                                const Json& review, absl::Duration timeout, absl::string_view what);

}  // namespace wm::access::internal

#endif  // WM_SERVER_ACCESS_INTERNAL_POST_REVIEW_H_
