#ifndef WM_SERVER_KUBE_API_RESOURCE_H_
#define WM_SERVER_KUBE_API_RESOURCE_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace wm::kube {

// One listable resource of the apiserver, as discovery describes it.
struct ApiResource {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;
  std::string plural;  // the resource name in URLs: "pods", "jobsets"
  bool namespaced = true;
  std::vector<std::string> verbs;

  std::string GroupVersion() const { return group.empty() ? version : group + "/" + version; }
  // "jobsets.v1alpha2.jobset.x-k8s.io", "pods.v1": for logs and metrics.
  std::string Name() const {
    return group.empty() ? absl::StrCat(plural, ".", version)
                         : absl::StrCat(plural, ".", version, ".", group);
  }
  // The collection URL path, across namespaces when `namespace_` is empty.
  std::string CollectionPath(const std::string& namespace_ = "") const {
    std::string base =
        group.empty() ? "/api/" + version : absl::StrCat("/apis/", group, "/", version);
    if (namespaced && !namespace_.empty()) absl::StrAppend(&base, "/namespaces/", namespace_);
    return absl::StrCat(base, "/", plural);
  }
  bool Supports(const std::string& verb) const {
    for (const std::string& v : verbs) {
      if (v == verb) return true;
    }
    return false;
  }
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_API_RESOURCE_H_
