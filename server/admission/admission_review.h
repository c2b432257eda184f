#ifndef WM_SERVER_ADMISSION_ADMISSION_REVIEW_H_
#define WM_SERVER_ADMISSION_ADMISSION_REVIEW_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"

namespace wm::admission {

// One admission.k8s.io/v1 AdmissionReview request, as the apiserver sends
// it to every webhook.
struct AdmissionRequest {
  std::string uid;
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  Json request;           // the review's "request": object, oldObject, ...
};

// InvalidArgument (answered 400) when the body is not JSON, not an
// admission.k8s.io/v1 AdmissionReview, or has no request with a uid.
absl::StatusOr<AdmissionRequest> ParseAdmissionReview(absl::string_view body);

// The AdmissionReview answering the request `uid`, allowed or not; callers
// add status, warnings or a patch to its "response".
Json AdmissionResponse(const std::string& uid, bool allowed);

}  // namespace wm::admission

#endif  // WM_SERVER_ADMISSION_ADMISSION_REVIEW_H_
