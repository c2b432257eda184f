#ifndef WM_SERVER_KUBE_DISCOVERY_H_
#define WM_SERVER_KUBE_DISCOVERY_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/kube/api_client.h"
#include "server/kube/api_resource.h"

namespace wm::kube {

// The resources an apiserver serves, from aggregated discovery (one request
// each for /api and /apis, apidiscovery.k8s.io/v2) or, on servers without
// it, the legacy per-group-version documents. Subresources are left out.
// Plurals and scopes always come from here, never from guessing.
class Discovery {
 public:
  static absl::StatusOr<Discovery> Fetch(const ApiClient& client);
  // Parses the two aggregated documents (tests).
  static absl::StatusOr<Discovery> FromAggregated(const Json& core, const Json& groups);

  // The resource serving group/version/kind, or nullptr.
  const ApiResource* Find(const std::string& group, const std::string& version,
                          const std::string& kind) const;
  // The versions served for a group and kind, preferred first (to explain a
  // definition whose version is not served).
  std::vector<std::string> ServedVersions(const std::string& group, const std::string& kind) const;
  // Why group/version/kind cannot be listed and watched ("" when it can):
  // not served at all (its CRD is not installed), served at other versions
  // (named), or served without list and watch.
  std::string WhyNotWatchable(const std::string& group, const std::string& version,
                              const std::string& kind) const;

  const std::vector<ApiResource>& resources() const { return resources_; }
  bool aggregated() const { return aggregated_; }

 private:
  void Index();

  std::vector<ApiResource> resources_;  // preferred versions first within a group
  absl::flat_hash_map<std::string, size_t> by_gvk_;
  bool aggregated_ = false;
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_DISCOVERY_H_
