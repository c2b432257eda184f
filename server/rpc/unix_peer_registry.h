#ifndef WM_SERVER_RPC_UNIX_PEER_REGISTRY_H_
#define WM_SERVER_RPC_UNIX_PEER_REGISTRY_H_

#include <mutex>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "server/access/identity.h"

namespace wm::rpc {

// The peers of the Unix-socket connections the daemon accepted itself
// (UnixListener), by file descriptor, so that a call can say which process
// made it. gRPC names such a connection's peer "fd:N" (ServerContext::peer),
// and keeps N open while any call of the connection lives, so the entry a
// call finds is its own connection's: a descriptor is only reused, and its
// entry replaced, after every call of the old connection is gone.
// Thread-safe.
class UnixPeerRegistry {
 public:
  using UnixPeer = access::CallerCredentials::UnixPeer;

  // REQUIRES: `fd` is a connection just accepted, not yet handed to gRPC.
  void Remember(int fd, UnixPeer peer);

  // The peer of a call whose ServerContext::peer() is `grpc_peer`; nullopt
  // for calls over other transports (TCP, gRPC's own Unix listener).
  std::optional<UnixPeer> Find(absl::string_view grpc_peer) const;

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<int, UnixPeer> by_fd_;
};

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_UNIX_PEER_REGISTRY_H_
