#ifndef WM_SERVER_ADMISSION_HTTPS_SERVER_H_
#define WM_SERVER_ADMISSION_HTTPS_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/admission/tls_files.h"

typedef struct ssl_st SSL;

namespace wm::admission {

// A small HTTPS/1.1 server for the apiserver's calls to the daemon's
// admission webhook: requests with bodies (POST, Content-Length), answered
// by a handler per exact path, on connections the apiserver keeps alive.
//
// Its one client is the apiserver, which gives a webhook call at most its
// timeoutSeconds (5 in our manifests): so every request must be read whole
// within request_timeout (a client that trickles is cut), a kept-alive
// connection idle for idle_timeout is closed, and at most max_connections
// are served at once (one thread each; more are closed at accept), which
// bounds what a hostile client on the network can hold. The certificate
// comes from TlsFiles at each new connection, so a renewed one is served
// without a restart.
class HttpsServer {
 public:
  struct Request {
    std::string method;
    std::string path;
    std::string query;
    std::string content_type;
    std::string body;
  };
  struct Response {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
  };
  using Handler = std::function<Response(const Request&)>;

  struct Options {
    size_t max_body_bytes = 4 << 20;
    int max_connections = 16;
    absl::Duration request_timeout = absl::Seconds(5);
    absl::Duration idle_timeout = absl::Seconds(60);
  };

  // REQUIRES: `tls` outlives the server.
  HttpsServer(TlsFiles& tls, Options options);
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Serves `path` (exact match) with `handler`, on connection threads.
  // REQUIRES: before Start.
  void Handle(std::string path, Handler handler);
  // Listens on `address` (observability::ListenTcp's forms) and serves.
  absl::Status Start(absl::string_view address);
  int port() const { return port_.load(); }
  // Stops accepting, ends every connection (a request being handled is
  // answered first) and waits for them.
  void Stop();

  // Connections closed at once because max_connections were open.
  int64_t refused() const { return refused_.load(); }

 private:
  void Accept();
  void Serve(int fd);
  // One request-response exchange on an accepted TLS connection; false
  // when the connection is to be closed.
  bool Exchange(SSL* ssl, std::string& buffer);

  TlsFiles& tls_;
  const Options options_;
  std::map<std::string, Handler> handlers_;
  int listen_fd_ = -1;
  std::atomic<int> port_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> refused_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable idle_;
  int active_ = 0;  // connection threads running
};

}  // namespace wm::admission

#endif  // WM_SERVER_ADMISSION_HTTPS_SERVER_H_
