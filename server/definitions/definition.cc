#include "server/definitions/definition.h"

namespace wm::definitions {

const char* FragmentedPodSpec::PathKey(Field f) {
  static constexpr const char* kKeys[] = {
      "schedulerNamePath", "priorityClassNamePath", "imagePath",       "labelsPath",
      "annotationsPath",   "resourcesPath",         "podAffinityPath", "nodeAffinityPath",
      "containerPath",     "resourceClaimsPath",    "containersPath"};
  return kKeys[f];
}

const char* FragmentedPodSpec::ValueKey(Field f) {
  static constexpr const char* kKeys[] = {"schedulerName",  "priorityClassName", "image",
                                          "labels",         "annotations",       "resources",
                                          "podAffinity",    "nodeAffinity",      "container",
                                          "resourceClaims", "containers"};
  return kKeys[f];
}

const char* StatusName(WorkloadStatus s) {
  static constexpr const char* kNames[] = {"Resuming",     "Suspending", "Suspended",
                                           "Running",      "Failed",     "Completed",
                                           "Initializing", "Degraded",   "Undefined"};
  return kNames[static_cast<int>(s)];
}

const char* StatusMappingKey(WorkloadStatus s) {
  static constexpr const char* kKeys[] = {"resuming",     "suspending", "suspended",
                                          "running",      "failed",     "completed",
                                          "initializing", "degraded",   "undefined"};
  return kKeys[static_cast<int>(s)];
}

const char* OriginName(Origin o) {
  switch (o) {
    case Origin::kCatalog:
      return "catalog";
    case Origin::kFile:
      return "file";
    case Origin::kCluster:
      return "cluster";
  }
  return "unknown";
}

}  // namespace wm::definitions
