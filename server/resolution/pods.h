#ifndef WM_SERVER_RESOLUTION_PODS_H_
#define WM_SERVER_RESOLUTION_PODS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/common/json.h"
#include "server/resolution/resources.h"

namespace wm::resolution {

// What views need of one pod.
struct PodFacts {
  const Json* object = nullptr;
  std::string name, namespace_, uid, phase, reason, node;
  bool ready = false;
  Resources requests;

  // Pending, Running or Unknown: counts as a current replica.
  bool Active() const { return phase != "Succeeded" && phase != "Failed"; }
  // Not ready and not finished successfully.
  bool Unhealthy() const { return !ready && phase != "Succeeded"; }
};

PodFacts ReadPod(const Json& pod);

// Objects by UID, for walking controller owner chains.
using OwnerIndex = absl::flat_hash_map<std::string, const Json*>;

// UID of the object's controller ownerReference, or "".
std::string ControllerUid(const Json& object);

// True when following controller ownerReferences from `pod` reaches
// `root_uid` within `max_depth` steps (a missing owner ends the chain).
bool OwnedBy(const Json& pod, const std::string& root_uid, const OwnerIndex& owners,
             int max_depth = 8);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_PODS_H_
