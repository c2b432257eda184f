#include "server/admission/admission_review.h"

#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"

namespace wm::admission {

absl::StatusOr<AdmissionRequest> ParseAdmissionReview(absl::string_view body) {
  absl::StatusOr<Json> review = ParseJson(body);
  if (!review.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the body is not JSON: ", review.status().message()));
  }
  if (FindString(*review, {"apiVersion"}) != "admission.k8s.io/v1" ||
      FindString(*review, {"kind"}) != "AdmissionReview") {
    return absl::InvalidArgumentError("want an admission.k8s.io/v1 AdmissionReview");
  }
  Json* request = review->contains("request") ? &(*review)["request"] : nullptr;
  std::string uid = request != nullptr ? FindString(*request, {"uid"}) : "";
  if (request == nullptr || !request->is_object() || uid.empty()) {
    return absl::InvalidArgumentError("the AdmissionReview has no request with a uid");
  }
  return AdmissionRequest{uid, FindString(*request, {"operation"}), std::move(*request)};
}

Json AdmissionResponse(const std::string& uid, bool allowed) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"response", {{"uid", uid}, {"allowed", allowed}}}};
}

}  // namespace wm::admission
