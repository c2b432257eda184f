#ifndef WM_SERVER_ADMISSION_KARTA_REVIEW_H_
#define WM_SERVER_ADMISSION_KARTA_REVIEW_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"
#include "server/expressions/engine.h"

namespace wm::admission {

// What the webhook decided, for its metrics.
enum class Verdict { kAllowed, kDenied };

struct KartaReview {
  Json review;  // the AdmissionReview v1 to answer with
  Verdict verdict = Verdict::kAllowed;
};

// Answers one AdmissionReview v1 request about a Karta. The object is
// checked as the daemon checks every definition (CheckDefinition: the CRD's
// schema, validation, compiling each expression with `engine`): an error
// refuses it with every finding and its field path in status.message
// (kubectl prints it after "denied the request:"), warnings go back as
// admission warnings (kubectl prints those too). Only a change of the spec
// is judged: an UPDATE that keeps the spec (labels, finalizers, the
// operator's own writes to an object that was valid under older rules) and
// a DELETE are allowed. InvalidArgument when the body is not an
// admission.k8s.io/v1 AdmissionReview with a request (answered 400).
absl::StatusOr<KartaReview> ReviewKarta(absl::string_view body, expressions::Engine& engine);

}  // namespace wm::admission

#endif  // WM_SERVER_ADMISSION_KARTA_REVIEW_H_
