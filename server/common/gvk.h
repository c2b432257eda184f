#ifndef WM_SERVER_COMMON_GVK_H_
#define WM_SERVER_COMMON_GVK_H_

// The kind of a Kubernetes object: what definitions name in `kind:`, what the
// cluster caches hold by, and what RPC answers report. One type for every
// layer, so that a kind read from a definition is looked up in a cache as is.

#include <string>
#include <tuple>

#include "absl/strings/string_view.h"

namespace wm {

struct Gvk {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;

  bool operator==(const Gvk&) const = default;
  bool operator<(const Gvk& o) const {
    return std::tie(group, version, kind) < std::tie(o.group, o.version, o.kind);
  }

  // "jobset.x-k8s.io/v1alpha2/JobSet"; "v1/Pod" for the core group. The form
  // of every message that names a kind.
  std::string ToString() const;
  // What an object of this kind carries in `apiVersion`: "apps/v1", "v1".
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

// The kind of an object's apiVersion and kind: "group/version" ("apps/v1")
// or, for the core group, "version" ("v1").
Gvk GvkFromApiVersion(absl::string_view api_version, absl::string_view kind);

// The Pod kind (v1/Pod).
Gvk PodGvk();

}  // namespace wm

#endif  // WM_SERVER_COMMON_GVK_H_
