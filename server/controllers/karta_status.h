#ifndef WM_SERVER_CONTROLLERS_KARTA_STATUS_H_
#define WM_SERVER_CONTROLLERS_KARTA_STATUS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/common/json.h"
#include "server/definitions/check.h"

namespace wm::controllers {

// The labels by which consumers find the Karta of a kind (KAI Scheduler's
// Workload Map fallback lists Kartas with all three equal to the top
// owner's group, version and kind); values are the root component's kind.
inline constexpr char kKartaGroupLabel[] = "run.ai/karta-group";
inline constexpr char kKartaVersionLabel[] = "run.ai/karta-version";
inline constexpr char kKartaKindLabel[] = "run.ai/karta-kind";

// The condition types upstream's operator writes and consumers read:
// Validated (the spec passes every check; its findings, with their field
// paths, in the message), CRDExists (the root kind is served), and Ready
// (both are True). Reasons are upstream's.
inline constexpr char kValidated[] = "Validated";
inline constexpr char kCrdExists[] = "CRDExists";
inline constexpr char kReady[] = "Ready";

// One metav1.Condition, without its lastTransitionTime (which the patch
// keeps while the status stays, and sets when it changes).
struct Condition {
  std::string type;
  std::string status;  // "True" or "False"
  std::string reason;
  std::string message;
  int64_t observed_generation = 0;

  bool operator==(const Condition&) const = default;
};

// What the operator wants one Karta to carry.
struct DesiredKarta {
  // The three labels' values, from the root component's kind; unset when
  // the spec names none (the labels are then removed) or when a value is
  // not a valid label value.
  std::optional<Gvk> labels;
  std::vector<Condition> conditions;  // Validated, CRDExists, Ready
  // The findings written in Validated's message (at most
  // kMaxReportedFindings): the ones events are emitted for.
  std::vector<Finding> reported;
};

// More findings than this are counted in the message, not listed.
inline constexpr size_t kMaxReportedFindings = 20;

// The state a Karta of metadata.generation `generation` should carry, given
// what checking it found and why its root kind cannot be watched ("" when
// it can: CRDExists=True).
DesiredKarta Desire(int64_t generation, const definitions::CheckedDefinition& checked,
                    const std::string& root_kind_problem);

// The JSON merge patch that gives `object` the desired labels (with its
// resourceVersion, so a patch computed from a stale object is refused), or
// nothing when it carries them already.
std::optional<Json> LabelsPatch(const Json& object, const DesiredKarta& desired);

// The JSON merge patch of the status subresource that gives `object` the
// desired conditions: other writers' conditions kept, lastTransitionTime
// kept while a condition's status stays and `now` when it changes, the
// object's resourceVersion included; nothing when every desired condition
// is there already (so a reconcile that changes nothing writes nothing).
std::optional<Json> StatusPatch(const Json& object, const DesiredKarta& desired, absl::Time now);

// The reported findings that `object`'s Validated condition does not list
// yet: one Warning event each. Read from the object, not remembered, so a
// new leader does not repeat its predecessor's events.
std::vector<Finding> NewFindings(const Json& object, const DesiredKarta& desired);

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_KARTA_STATUS_H_
