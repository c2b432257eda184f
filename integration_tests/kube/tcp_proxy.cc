#include "integration_tests/kube/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "server/kube/testing/loopback.h"

namespace wm::testing {
namespace {

int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

TcpProxy::TcpProxy(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = kube::testing::ListenOnLoopback(&port_);
  accept_thread_ = std::thread([this] { Accept(); });
}

TcpProxy::~TcpProxy() {
  stopping_.store(true);
  Cut();
  accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> pumps;
  {
    std::unique_lock lock(mu_);
    pumps.swap(pumps_);
  }
  for (std::thread& t : pumps) t.join();
}

void TcpProxy::Cut() {
  cut_.store(true);
  std::unique_lock lock(mu_);
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
}

void TcpProxy::Restore() { cut_.store(false); }

void TcpProxy::Accept() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int client = ::accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    int upstream = cut_.load() ? -1 : ConnectLoopback(upstream_port_);
    if (upstream < 0) {
      ::close(client);
      continue;
    }
    std::unique_lock lock(mu_);
    open_fds_.push_back(client);
    open_fds_.push_back(upstream);
    pumps_.emplace_back([this, client, upstream] { Pump(client, upstream); });
  }
}

void TcpProxy::Pump(int client, int upstream) {
  char buffer[65536];
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  bool open = true;
  while (open && !stopping_.load()) {
    if (::poll(fds, 2, 200) < 0) break;
    for (int i = 0; i < 2 && open; ++i) {
      if (fds[i].revents == 0) continue;
      ssize_t n = ::recv(fds[i].fd, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      int to = i == 0 ? upstream : client;
      for (ssize_t sent = 0; sent < n;) {
        ssize_t m = ::send(to, buffer + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);
        if (m <= 0) {
          open = false;
          break;
        }
        sent += m;
      }
    }
  }
  std::unique_lock lock(mu_);
  for (int fd : {client, upstream}) {
    open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
    ::close(fd);
  }
}

}  // namespace wm::testing
