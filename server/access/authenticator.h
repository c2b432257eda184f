#ifndef WM_SERVER_ACCESS_AUTHENTICATOR_H_
#define WM_SERVER_ACCESS_AUTHENTICATOR_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/access/identity.h"
#include "server/access/token_reviewer.h"
#include "server/access/unix_peers.h"

namespace wm::access {

// Names the caller of a call from what it presents, in the apiserver's
// order: a verified client certificate (user from CN, a group per O, as the
// apiserver maps them), else a bearer token (TokenReview); else, over a Unix
// socket, the peer process's uid or gid through the configured table. Every
// authenticated identity carries the group system:authenticated, which RBAC
// grants rely on. Thread-safe.
class Authenticator {
 public:
  struct Options {
    // A verified client certificate (--tls-client-ca) names the caller.
    bool client_certificates = true;
    // Reviews bearer tokens; null: tokens are not accepted. Outlives this.
    TokenReviewer* tokens = nullptr;
    // Names peers of Unix sockets by uid or gid; null: they need a token
    // like any other caller. Outlives this.
    const UnixPeerTable* unix_peers = nullptr;
  };

  explicit Authenticator(Options options) : options_(options) {}

  // The caller's identity; Unauthenticated saying why (no credentials, a
  // rejected token), or Unavailable when a token could not be reviewed. May
  // block on a TokenReview.
  absl::StatusOr<SharedIdentity> Authenticate(const CallerCredentials& credentials) const;
  // Authenticate's answer when it needs no call to the apiserver (a
  // certificate, no credentials, a token reviewed lately); nullopt when it
  // does. For gRPC's callback threads, which must not block.
  std::optional<absl::StatusOr<SharedIdentity>> AuthenticateWithoutBlocking(
      const CallerCredentials& credentials) const;

 private:
  // The answer for credentials that are not a bearer token to review:
  // nullopt when they are.
  std::optional<absl::StatusOr<SharedIdentity>> WithoutToken(
      const CallerCredentials& credentials) const;

  const Options options_;
};

// The token of an `authorization` header value "Bearer <token>" (the scheme
// in any case, as RFC 6750 allows), a view into `authorization`;
// InvalidArgument for any other form. The error never contains the value.
absl::StatusOr<absl::string_view> ParseBearerToken(absl::string_view authorization);

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_AUTHENTICATOR_H_
