#include "server/admission/pod_review.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "server/admission/admission_review.h"
#include "server/common/json_path.h"

namespace wm::admission {
namespace {

// A JSON Pointer token (RFC 6901): "~" and "/" escaped.
std::string PointerToken(absl::string_view key) {
  return absl::StrReplaceAll(key, {{"~", "~0"}, {"/", "~1"}});
}

// The JSONPatch operations that apply `merge` (the metadata labels and
// annotations of a membership merge patch) to `pod`.
Json PatchOperations(const Json& pod, const Json& merge) {
  Json operations = Json::array();
  for (const char* map : {"labels", "annotations"}) {
    const Json* entries = Find(merge, {"metadata", map});
    if (entries == nullptr || entries->empty()) continue;
    const Json* present = Find(pod, {"metadata", map});
    if (present == nullptr || !present->is_object()) {
      operations.push_back(
          {{"op", "add"}, {"path", absl::StrCat("/metadata/", map)}, {"value", *entries}});
      continue;
    }
    for (const auto& [key, value] : entries->items()) {
      operations.push_back({{"op", "add"},
                            {"path", absl::StrCat("/metadata/", map, "/", PointerToken(key))},
                            {"value", value}});
    }
  }
  return operations;
}

}  // namespace

absl::StatusOr<PodReview> ReviewPod(absl::string_view body, const MembershipOf& membership_of) {
  absl::StatusOr<AdmissionRequest> parsed = ParseAdmissionReview(body);
  if (!parsed.ok()) return parsed.status();
  PodReview out{AdmissionResponse(parsed->uid, true)};
  const Json* pod = Find(parsed->request, {"object"});
  if (parsed->operation != "CREATE" || pod == nullptr || !pod->is_object()) return out;
  std::string namespace_ = FindString(parsed->request, {"namespace"});
  if (namespace_.empty()) namespace_ = FindString(*pod, {"metadata", "namespace"});
  std::optional<controllers::PodGroupMembership> membership = membership_of(*pod, namespace_);
  if (!membership) return out;
  std::optional<Json> merge = controllers::PodMembershipPatch(
      membership->scheduler, *pod, membership->group, membership->sub_group);
  if (!merge) return out;  // its controller put it there already
  Json operations = PatchOperations(*pod, *merge);
  if (operations.empty()) return out;
  Json& response = out.review["response"];
  response["patchType"] = "JSONPatch";
  response["patch"] = absl::Base64Escape(operations.dump());
  out.placed = true;
  return out;
}

}  // namespace wm::admission
