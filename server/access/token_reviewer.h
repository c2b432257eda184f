#ifndef WM_SERVER_ACCESS_TOKEN_REVIEWER_H_
#define WM_SERVER_ACCESS_TOKEN_REVIEWER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/access/expiring_cache.h"
#include "server/access/identity.h"
#include "server/kube/api_client.h"

namespace wm::access {

// Authenticates bearer tokens as the apiserver does, by asking it: a
// TokenReview (authentication.k8s.io/v1) per token not seen lately, as
// kube-rbac-proxy and every aggregated API server do. Answers are cached by
// a SHA-256 of the token (the token itself is never kept, logged or put in
// an error): a valid token for `valid_ttl`, a rejected one for
// `invalid_ttl`. A review that could not be made (the apiserver unreachable)
// is not cached. Thread-safe.
class TokenReviewer {
 public:
  struct Options {
    // Audiences the token must be valid for (spec.audiences); empty: the
    // apiserver's own. With audiences set, a token the apiserver accepts
    // for none of them is rejected.
    std::vector<std::string> audiences;
    // The apiserver's webhook token authenticator caches for 2 minutes.
    absl::Duration valid_ttl = absl::Minutes(2);
    absl::Duration invalid_ttl = absl::Seconds(10);
    size_t cache_entries = 10000;
    absl::Duration request_timeout = absl::Seconds(10);
    Clock clock;  // null: absl::Now
  };

  // `client` (which outlives this) talks to the apiserver whose users the
  // daemon's callers are; its credential needs `create` on tokenreviews.
  TokenReviewer(const kube::ApiClient& client, Options options);

  // The identity of `token`: Unauthenticated saying why when the apiserver
  // rejects it (invalid, expired, revoked, another audience); Unavailable
  // when it could not be asked.
  absl::StatusOr<SharedIdentity> Review(absl::string_view token);
  // Review's answer when it is cached; nullopt when Review would ask the
  // apiserver. Never blocks on the network.
  std::optional<absl::StatusOr<SharedIdentity>> Cached(absl::string_view token);

  // What the cache keeps of an answer: the identity, or why the apiserver
  // rejected the token. Not an absl::Status: a Status shares its message
  // through a reference count that Debian's libabsl (not instrumented for
  // TSan) releases, so a Status handed between callers through the cache
  // reads to TSan as a race; each caller builds a Status of its own.
  struct Answer {
    SharedIdentity identity;  // null when rejected
    std::string rejection;    // the Unauthenticated message

    absl::StatusOr<SharedIdentity> ToStatusOr() const;
  };

  ExpiringCache<Answer>::Stats cache_stats() const { return cache_.stats(); }

 private:
  absl::StatusOr<Identity> Ask(absl::string_view token) const;

  const kube::ApiClient& client_;
  const Options options_;
  ExpiringCache<Answer> cache_;
};

// The lowercase hex SHA-256 of `data`: how caches key a secret.
std::string Sha256Hex(absl::string_view data);

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_TOKEN_REVIEWER_H_
