#ifndef WM_SERVER_ADMISSION_POD_REVIEW_H_
#define WM_SERVER_ADMISSION_POD_REVIEW_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"
#include "server/controllers/pod_groups.h"

namespace wm::admission {

// The group a pod being created joins (the pod as the request holds it,
// and its namespace), or nothing when it cannot be told yet.
using MembershipOf = std::function<std::optional<controllers::PodGroupMembership>(
    const Json& pod, const std::string& namespace_)>;

struct PodReview {
  Json review;          // the AdmissionReview v1 to answer with
  bool placed = false;  // the answer puts the pod into a group
};

// Answers one AdmissionReview v1 request about a pod for the mutating
// webhook: a pod being created whose group `membership_of` knows gets the
// scheduler's marks (KAI's pod-group-name or Volcano's
// scheduling.k8s.io/group-name annotation, the coscheduling label; and the
// subgroup's where known) as a JSONPatch, so no gang scheduler sees it
// outside its group. Every pod is allowed: a pod whose group is not known
// yet is admitted as it is, and the PodGroup role puts it into its group
// once it exists. InvalidArgument when the body is not an AdmissionReview
// (answered 400).
absl::StatusOr<PodReview> ReviewPod(absl::string_view body, const MembershipOf& membership_of);

}  // namespace wm::admission

#endif  // WM_SERVER_ADMISSION_POD_REVIEW_H_
