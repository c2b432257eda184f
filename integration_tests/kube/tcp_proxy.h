#ifndef WM_INTEGRATION_TESTS_KUBE_TCP_PROXY_H_
#define WM_INTEGRATION_TESTS_KUBE_TCP_PROXY_H_

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wm::testing {

// A loopback TCP proxy in front of the real apiserver, so a test can cut
// one client off (a network partition) while others keep changing the
// cluster. TLS passes through untouched.
class TcpProxy {
 public:
  explicit TcpProxy(int upstream_port);
  ~TcpProxy();

  int port() const { return port_; }
  // Closes every proxied connection and refuses new ones until Restore().
  void Cut();
  void Restore();

 private:
  void Accept();
  void Pump(int client, int upstream);

  int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> cut_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<int> open_fds_;
  std::vector<std::thread> pumps_;
};

}  // namespace wm::testing

#endif  // WM_INTEGRATION_TESTS_KUBE_TCP_PROXY_H_
