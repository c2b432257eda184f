#ifndef WM_SERVER_KUBE_TESTING_SCRIPTED_SERVER_H_
#define WM_SERVER_KUBE_TESTING_SCRIPTED_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"

namespace wm::kube::testing {

// A plain-HTTP/1.1 server on loopback whose answers a test scripts byte by
// byte: for unit-testing how the client frames, times out and recovers.
// (Behaviour of the real apiserver is tested against the real apiserver.)
class ScriptedServer {
 public:
  struct Request {
    std::string method;
    std::string path;  // with the query
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    // The value of query parameter `name`, or "" (no unescaping beyond %2F/%3D).
    std::string Query(const std::string& name) const;
  };

  // Writes the answer of one request. The connection closes after the
  // handler returns, which ends the body.
  class Responder {
   public:
    explicit Responder(int fd) : fd_(fd) {}
    // Status line and headers; the body follows until the connection closes.
    void Head(int status, const std::vector<std::pair<std::string, std::string>>& headers = {});
    // Sends bytes now (returns false once the client went away).
    bool Write(const std::string& bytes);
    void Sleep(absl::Duration duration);

   private:
    int fd_;
  };

  using Handler = std::function<void(const Request&, Responder&)>;

  explicit ScriptedServer(Handler handler);
  ~ScriptedServer();

  // http://127.0.0.1:PORT
  std::string url() const;
  // Every request received so far.
  std::vector<Request> requests() const;
  // Blocks until `count` requests have arrived or `timeout` passes.
  bool WaitForRequests(size_t count, absl::Duration timeout) const;

 private:
  void Accept();
  void Serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  mutable std::mutex mu_;
  mutable std::condition_variable arrived_;
  std::vector<Request> requests_;
  std::vector<std::thread> connections_;
};

}  // namespace wm::kube::testing

#endif  // WM_SERVER_KUBE_TESTING_SCRIPTED_SERVER_H_
