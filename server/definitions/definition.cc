#include "server/definitions/definition.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace wm::definitions {

std::string GroupVersionKind::ToString() const {
  return group.empty() ? absl::StrCat(kind, ".", version)
                       : absl::StrCat(kind, ".", version, ".", group);
}

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

std::optional<WorkloadStatus> ParseStatusName(const std::string& name) {
  std::string lower = absl::AsciiStrToLower(name);
  for (int i = 0; i <= static_cast<int>(WorkloadStatus::kUndefined); ++i) {
    if (lower == StatusMappingKey(static_cast<WorkloadStatus>(i))) {
      return static_cast<WorkloadStatus>(i);
    }
  }
  return std::nullopt;
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

const ComponentDefinition* Definition::FindComponent(const std::string& name) const {
  if (root.name == name) return &root;
  for (const auto& c : children) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace wm::definitions
