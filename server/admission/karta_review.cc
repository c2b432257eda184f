#include "server/admission/karta_review.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/admission/admission_review.h"
#include "server/common/json_path.h"
#include "server/definitions/check.h"

namespace wm::admission {
namespace {

// Findings listed in the message beyond this many are counted: the
// apiserver passes the message to kubectl whole, but no one reads 500 lines.
constexpr size_t kMaxListedFindings = 50;
// The apiserver keeps at most this many warnings of a webhook's answer.
constexpr size_t kMaxWarnings = 20;

}  // namespace

absl::StatusOr<KartaReview> ReviewKarta(absl::string_view body, expressions::Engine& engine) {
  absl::StatusOr<AdmissionRequest> parsed = ParseAdmissionReview(body);
  if (!parsed.ok()) return parsed.status();
  const Json& request = parsed->request;
  KartaReview out{AdmissionResponse(parsed->uid, true), Verdict::kAllowed};
  const std::string& operation = parsed->operation;
  const Json* object = Find(request, {"object"});
  if ((operation != "CREATE" && operation != "UPDATE") || object == nullptr) return out;
  if (operation == "UPDATE") {
    const Json* old_object = Find(request, {"oldObject"});
    const Json* old_spec = old_object != nullptr ? Find(*old_object, {"spec"}) : nullptr;
    const Json* spec = Find(*object, {"spec"});
    if (old_spec != nullptr && spec != nullptr && *old_spec == *spec) return out;
  }

  definitions::CheckedDefinition checked =
      definitions::CheckDefinition(*object, definitions::Origin::kCluster, "admission", engine);
  std::vector<std::string> lines, warnings;
  for (bool errors : {true, false}) {
    for (const Finding& f : checked.findings) {
      if (f.is_error() != errors) continue;
      if (lines.size() < kMaxListedFindings) lines.push_back(definitions::FindingLine(f));
      if (!f.is_error() && warnings.size() < kMaxWarnings)
        warnings.push_back(definitions::FindingLine(f));
    }
  }
  if (checked.findings.size() > lines.size()) {
    lines.push_back(absl::StrCat("and ", checked.findings.size() - lines.size(), " more findings"));
  }
  Json& response = out.review["response"];
  if (!warnings.empty()) response["warnings"] = warnings;
  if (checked.valid()) return out;
  std::string name = FindString(*object, {"metadata", "name"});
  response["allowed"] = false;
  response["status"] = {
      {"code", 422},
      {"reason", "Invalid"},
      {"message", absl::StrCat("Karta \"", name, "\" is invalid:\n", absl::StrJoin(lines, "\n"))}};
  out.verdict = Verdict::kDenied;
  return out;
}

}  // namespace wm::admission
