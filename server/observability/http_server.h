#ifndef WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_
#define WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wm::observability {

struct HttpServerOptions {
  // From accepting a connection to the end of its request head, however the
  // bytes trickle in; past it the client gets 408 (or, having sent nothing,
  // is closed).
  absl::Duration head_timeout = absl::Seconds(5);
  // For writing the whole response; past it the connection is reset.
  absl::Duration write_timeout = absl::Seconds(5);
  // Request line, headers and the blank line; a longer head gets 431.
  size_t max_head_bytes = 8 * 1024;
  // The request target (path and query); a longer one gets 414.
  size_t max_target_bytes = 2 * 1024;
  // Connections open at once. A new connection past it evicts the oldest
  // connection that is done (lingering after its response), else the oldest
  // still sending its head (answered 503), else the oldest waiting for a
  // handler thread (503), else the oldest being written to (reset), so
  // slow or idle clients cannot keep a probe out. Must exceed
  // handler_threads (connections whose handler runs are never evicted).
  int max_connections = 64;
  // Threads running Handle() handlers; probe handlers run on the I/O thread.
  int handler_threads = 2;
};

// A minimal HTTP/1.1 server for /metrics and health probes on a side port,
// not for the public API: GET and HEAD only, exact-path handlers, one request
// per connection (every response says "Connection: close"), request bodies
// ignored.
//
// One I/O thread accepts and reads and writes every connection
// (non-blocking sockets, poll), so no number of slow clients can hold it;
// complete requests go to a probe handler inline or to a handler thread.
class HttpServer {
 public:
  struct Request {
    std::string method;  // "GET" or "HEAD"
    std::string path;    // without the query, not percent-decoded
    std::string query;   // after '?', without it; "" if none
    // The Authorization header's value ("Bearer ..."); "" if none.
    std::string authorization;
  };
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  using Handler = std::function<Response(const Request&)>;

  explicit HttpServer(HttpServerOptions options = HttpServerOptions());
  // Stops the server.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves `path` (exact match, e.g. "/metrics") with `handler`, called on
  // one of the handler threads, possibly concurrently with itself; requests
  // wait for a free thread. May be called before or after Start(); a later
  // call for the same path (with either method) replaces it.
  void Handle(std::string path, Handler handler);
  // Like Handle(), but `handler` runs on the I/O thread as soon as the
  // request head is in, so it is answered even while every handler thread
  // is busy: for liveness and readiness probes. It must be cheap and must
  // never block (read an atomic, not a lock a slow path may hold).
  void HandleProbe(std::string path, Handler handler);

  // Listens on "HOST:PORT": HOST an IPv4 literal ("127.0.0.1", "0.0.0.0"), a
  // bracketed IPv6 literal ("[::1]"), or empty for all interfaces (IPv6 and
  // IPv4 where available); PORT 0 picks a free port (see port()). Once only.
  // InvalidArgument, naming the field, for options out of range.
  absl::Status Start(absl::string_view address);
  // The bound port, or 0 before Start() succeeded.
  int port() const;

  // Closes the listener and every connection, waiting for handlers already
  // running to return. Idempotent; the server cannot be started again.
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wm::observability

#endif  // WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_
