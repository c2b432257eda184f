#ifndef WM_SERVER_RPC_UNIX_LISTENER_H_
#define WM_SERVER_RPC_UNIX_LISTENER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "server/rpc/unix_peer_registry.h"

namespace wm::rpc {

// Serves a gRPC server on a Unix socket whose connections it accepts itself,
// so that each connection's peer process (SO_PEERCRED: uid, gid, pid) is
// known to the calls made over it, through a UnixPeerRegistry: gRPC's own
// Unix listener does not say who connected. One thread accepts; each
// connection is then gRPC's (plaintext, under the server's channel
// arguments), as if its own listener had accepted it.
class UnixListener {
 public:
  // Binds a socket at `path` (removing an earlier socket file there), gives
  // it file mode `mode` and listens. Unavailable naming the path and the
  // error when it cannot.
  static absl::StatusOr<std::unique_ptr<UnixListener>> Listen(const std::string& path, mode_t mode);
  ~UnixListener();  // Stop()
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  // Accepts connections on a thread of its own until Stop: remembers each
  // one's peer in `peers`, then hands it to `server`.
  // REQUIRES: `server` is started; `server` and `peers` outlive Stop();
  // called at most once.
  void Serve(grpc::Server& server, UnixPeerRegistry& peers);

  // Stops accepting and closes the listening socket (connections already
  // handed over stay with gRPC, which ends them at its Shutdown). Call it
  // before the server's Shutdown. Idempotent.
  void Stop();

  const std::string& path() const { return path_; }

 private:
  UnixListener(std::string path, int listen_fd, int wake_fd)
      : path_(std::move(path)), listen_fd_(listen_fd), wake_fd_(wake_fd) {}

  void AcceptUntilStopped(grpc::Server& server, UnixPeerRegistry& peers);

  const std::string path_;
  int listen_fd_;
  int wake_fd_;  // an eventfd: written once by Stop
  std::thread acceptor_;
};

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_UNIX_LISTENER_H_
