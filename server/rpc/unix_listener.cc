#include "server/rpc/unix_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "grpcpp/server_posix.h"

namespace wm::rpc {
namespace {

absl::Status SystemError(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("cannot ", what, " Unix socket ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<UnixListener>> UnixListener::Listen(const std::string& path,
                                                                   mode_t mode) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Unix socket path \"", path, "\" must hold 1 to ", sizeof(address.sun_path) - 1, " bytes"));
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return SystemError("create", path);
  ::unlink(path.c_str());  // a stale socket of an earlier run
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    absl::Status error = SystemError("bind", path);
    ::close(fd);
    return error;
  }
  // bind creates the file under the umask; the configured mode applies
  // before anyone can connect (listen has not been called yet).
  if (::chmod(path.c_str(), mode) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    absl::Status error = SystemError("set the mode of or listen on", path);
    ::close(fd);
    return error;
  }
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    absl::Status error = SystemError("make the wake-up descriptor of", path);
    ::close(fd);
    return error;
  }
  return std::unique_ptr<UnixListener>(new UnixListener(path, fd, wake));
}

UnixListener::~UnixListener() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void UnixListener::Serve(grpc::Server& server, UnixPeerRegistry& peers) {
  acceptor_ = std::thread([this, &server, &peers] { AcceptUntilStopped(server, peers); });
}

void UnixListener::Stop() {
  if (acceptor_.joinable()) {
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
    acceptor_.join();
  }
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    ::unlink(path_.c_str());
  }
}

void UnixListener::AcceptUntilStopped(grpc::Server& server, UnixPeerRegistry& peers) {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  int timeout_ms = -1;
  while (true) {
    int ready = ::poll(fds, 2, timeout_ms);
    if (ready < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;  // Stop
    timeout_ms = -1;
    while (true) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of descriptors or memory: wait a little rather than spin on a
        // connection that stays pending; otherwise (EAGAIN, a connection
        // reset before it was taken) poll again.
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          timeout_ms = 100;
          fds[0].events = 0;
        }
        break;
      }
      ucred credentials{};
      socklen_t size = sizeof(credentials);
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
        ::close(fd);  // a peer nobody can name is not served
        continue;
      }
      peers.Remember(fd, {.uid = credentials.uid,
                          .gid = credentials.gid,
                          .pid = static_cast<int32_t>(credentials.pid)});
      grpc::AddInsecureChannelFromFd(&server, fd);
    }
    if (timeout_ms < 0) fds[0].events = POLLIN;
  }
}

}  // namespace wm::rpc
