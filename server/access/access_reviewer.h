#ifndef WM_SERVER_ACCESS_ACCESS_REVIEWER_H_
#define WM_SERVER_ACCESS_ACCESS_REVIEWER_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/access/expiring_cache.h"
#include "server/access/identity.h"
#include "server/kube/api_client.h"

namespace wm::access {

// A request on a Kubernetes resource, as RBAC names it; or, when `path` is
// set, a request on a URL that is not a resource ("get /metrics", as RBAC's
// nonResourceURLs name it: how kube-rbac-proxy guards a metrics endpoint).
struct ResourceAttributes {
  std::string verb;        // "get", "list", "watch", "patch"
  std::string group;       // "" for the core group
  std::string resource;    // the plural: "jobsets"
  std::string namespace_;  // "": every namespace (a cluster-wide grant)
  std::string name;        // "": any object
  std::string path;        // a non-resource URL; the fields above but verb unset

  // "get jobsets.jobset.x-k8s.io in namespace team-a", "get /metrics": the
  // words of a PERMISSION_DENIED message.
  std::string Describe() const;
};

struct Decision {
  bool allowed = false;
  std::string reason;  // the apiserver's, when it gave one
};

// Authorizes as the apiserver does, by asking it: a SubjectAccessReview
// (authorization.k8s.io/v1) for the caller's identity and the request's
// attributes, so RBAC (or whatever authorizer the cluster runs) decides.
// Decisions are cached, allowed ones for `allowed_ttl` and denied ones for
// `denied_ttl` (the apiserver's webhook authorizer uses 5 min and 30 s): a
// revoked binding takes effect within `allowed_ttl`. A review that could
// not be made is not cached. Thread-safe.
class AccessReviewer {
 public:
  struct Options {
    absl::Duration allowed_ttl = absl::Minutes(5);
    absl::Duration denied_ttl = absl::Seconds(30);
    size_t cache_entries = 10000;
    absl::Duration request_timeout = absl::Seconds(10);
    Clock clock;  // null: absl::Now
  };

  // `client` (which outlives this) talks to the apiserver of the cluster the
  // attributes are about; its credential needs `create` on
  // subjectaccessreviews.
  AccessReviewer(const kube::ApiClient& client, Options options);

  // Whether `who` may do `what`; Unavailable when the apiserver could not
  // be asked.
  absl::StatusOr<Decision> Review(const Identity& who, const ResourceAttributes& what);
  // Review's answer when it is cached; nullopt when Review would ask.
  std::optional<Decision> Cached(const Identity& who, const ResourceAttributes& what);

  // Review's answer as the status of a call: OK when allowed;
  // PermissionDenied "user "alice" may not get jobsets.jobset.x-k8s.io
  // "demo" in namespace "team-b"[: reason]" when denied; Unavailable when the
  // apiserver could not be asked.
  absl::Status Check(const Identity& who, const ResourceAttributes& what);
  // Check's answer when the decision is cached; nullopt when Check would ask.
  std::optional<absl::Status> CheckCached(const Identity& who, const ResourceAttributes& what);

  ExpiringCache<Decision>::Stats cache_stats() const { return cache_.stats(); }

 private:
  absl::StatusOr<Decision> Ask(const Identity& who, const ResourceAttributes& what) const;

  const kube::ApiClient& client_;
  const Options options_;
  ExpiringCache<Decision> cache_;
};

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_ACCESS_REVIEWER_H_
