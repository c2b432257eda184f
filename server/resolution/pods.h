#ifndef WM_SERVER_RESOLUTION_PODS_H_
#define WM_SERVER_RESOLUTION_PODS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"
#include "server/resolution/resources.h"

namespace wm::resolution {

// What a resolution reads of one pod. The strings are views of `object`,
// which outlives the resolution (ResolveWorkload's input).
struct PodFacts {
  const Json* object = nullptr;
  absl::string_view name, namespace_, uid, phase, reason, node;
  // The uid of the pod's controller ownerReference, or "".
  absl::string_view controller_uid;
  bool ready = false;
  Resources requests;
  // Why `requests` is empty though the spec asks for some, or "".
  std::string requests_problem;

  // Pending, Running or Unknown: counts as a current replica. (A manifest
  // without status has no phase and is no replica yet.)
  bool Active() const { return phase == "Pending" || phase == "Running" || phase == "Unknown"; }
  // Not ready and not finished successfully.
  bool Unhealthy() const { return !ready && phase != "Succeeded"; }
};

PodFacts ReadPod(const Json& pod);

// Objects by UID, for walking controller owner chains. The keys are views
// of the objects' own uids.
using OwnerIndex = absl::flat_hash_map<absl::string_view, const Json*>;

// UID of the object's controller ownerReference, or "": a view into
// `object`.
absl::string_view ControllerUid(const Json& object);

// True when `pod` is the root itself (a Pod workload) or following
// controller ownerReferences from it reaches `root_uid` within `max_depth`
// steps (a missing owner ends the chain). Owners may be pods too: a
// LeaderWorkerSet leader pod owns its group's StatefulSet, a Spark driver
// pod owns its executors. Takes the pod's facts, not its tree: a
// resolution has read them already, and the first step is the one every
// pod takes.
bool OwnedBy(const PodFacts& pod, absl::string_view root_uid, const OwnerIndex& owners,
             int max_depth = 8);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_PODS_H_
