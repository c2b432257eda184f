#ifndef WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_
#define WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wm::observability {

struct HttpServerOptions {
  // For reading the whole request head (so a client trickling bytes cannot
  // hold a connection open longer), and again for writing the response.
  absl::Duration io_timeout = absl::Seconds(5);
  // Request line and headers; a longer head gets 431.
  size_t max_header_bytes = 8 * 1024;
  // Connections served at once; more wait in the listen backlog until one
  // finishes, so a flood of idle clients cannot exhaust threads.
  int max_connections = 16;
};

// A minimal HTTP/1.1 server for /metrics and health probes on a side port,
// not for the public API: GET and HEAD only, exact-path handlers, one request
// per connection (every response says "Connection: close"), request bodies
// ignored. One accept thread; each connection gets a short-lived thread.
class HttpServer {
 public:
  struct Request {
    std::string method;  // "GET" or "HEAD"
    std::string path;    // without the query, not percent-decoded
    std::string query;   // after '?', without it; "" if none
  };
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  // Called on a connection thread, possibly concurrently with itself.
  using Handler = std::function<Response(const Request&)>;

  explicit HttpServer(HttpServerOptions options = HttpServerOptions());
  // Stops the server.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves `path` (exact match, e.g. "/metrics") with `handler`. May be called
  // before or after Start(); a later call for the same path replaces it.
  void Handle(std::string path, Handler handler);

  // Listens on "HOST:PORT": HOST an IPv4 literal ("127.0.0.1", "0.0.0.0"), a
  // bracketed IPv6 literal ("[::1]"), or empty for all interfaces (IPv6 and
  // IPv4 where available); PORT 0 picks a free port (see port()). Once only.
  absl::Status Start(absl::string_view address);
  // The bound port, or 0 before Start() succeeded.
  int port() const { return port_.load(std::memory_order_relaxed); }

  // Closes the listener and every connection, waiting for handlers already
  // running to return. Idempotent; the server cannot be started again.
  void Stop();

 private:
  struct Connection {
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void AcceptLoop();
  void ReapFinishedLocked();
  void Serve(int fd);
  Response Dispatch(const Request& request);

  const HttpServerOptions options_;
  int listen_fd_ = -1;
  // Readable once Stop() was called; every poll() includes it.
  int stop_fd_ = -1;
  std::atomic<int> port_{0};
  std::thread accept_thread_;

  std::mutex mu_;
  bool started_ = false;
  bool stopped_ = false;
  absl::flat_hash_map<std::string, std::shared_ptr<const Handler>> handlers_;
  std::list<Connection> connections_;
};

}  // namespace wm::observability

#endif  // WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_
