#include "server/rpc/unix_peer_registry.h"

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace wm::rpc {

void UnixPeerRegistry::Remember(int fd, UnixPeer peer) {
  std::lock_guard lock(mu_);
  by_fd_[fd] = peer;
}

std::optional<UnixPeerRegistry::UnixPeer> UnixPeerRegistry::Find(
    absl::string_view grpc_peer) const {
  int fd = -1;
  if (!absl::ConsumePrefix(&grpc_peer, "fd:") || !absl::SimpleAtoi(grpc_peer, &fd)) {
    return std::nullopt;
  }
  std::lock_guard lock(mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second;
}

}  // namespace wm::rpc
