#ifndef WM_SERVER_RPC_CALLER_CREDENTIALS_H_
#define WM_SERVER_RPC_CALLER_CREDENTIALS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"
#include "server/access/identity.h"
#include "server/rpc/unix_peer_registry.h"

namespace wm::rpc {

// What a call presents to be authenticated: the bearer token of its
// `authorization` metadata; on a mutual-TLS connection, the verified client
// certificate's subject; over a Unix socket the daemon accepted itself and
// when neither of those came, the peer process `unix_peers` remembers (null:
// none). Unauthenticated when the
// metadata is there but not a bearer token, or appears more than once.
absl::StatusOr<access::CallerCredentials> ReadCallerCredentials(
    const grpc::ServerContextBase& context, const UnixPeerRegistry* unix_peers = nullptr);

// The O attributes of an RFC 2253 subject ("CN=kai,O=schedulers,O=ops", as
// gRPC reports a peer certificate's subject), with escapes undone.
std::vector<std::string> OrganizationsOfSubject(absl::string_view subject);

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_CALLER_CREDENTIALS_H_
