#ifndef WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_
#define WM_SERVER_OBSERVABILITY_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/observability/response_stream.h"

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
  // Streaming responses (Response::stream) open at once; past it a new one
  // is answered 503. At most half of max_connections, whatever it says, so
  // that streams cannot take every slot.
  int max_streams = 32;
  // Bytes a streaming response may have waiting for a slow client before
  // the connection is reset (ResponseStream).
  size_t max_stream_queued_bytes = 1 << 20;
  // A streaming response that has sent nothing for this long sends the
  // response's `keepalive` bytes (so that proxies keep an idle stream).
  absl::Duration stream_keepalive_interval = absl::Seconds(15);
};

// A small HTTP/1.1 server for the daemon's HTTP port: /metrics, the health
// probes, the read-only JSON API and its web page. GET and HEAD only,
// handlers by exact path or by path prefix, one request per connection
// (every response says "Connection: close"), request bodies ignored; a
// response is either whole (Content-Length) or a stream that a producer
// writes over time and that ends when the connection closes (server-sent
// events).
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
    // The Last-Event-ID header's value; "" if none.
    std::string last_event_id;
  };
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
    // More header lines, each "Name: value" without CRLF (Cache-Control).
    std::vector<std::string> headers;
    // When set, the response is a stream: the server sends the status and
    // headers (no Content-Length; `body` is ignored), and calls `stream`
    // once, on the handler thread, with the ResponseStream the producer
    // writes the body into. The producer may write it all there (the
    // handler thread is its own until it returns; ResponseStream::WriteWait)
    // or keep the stream and write from any thread until a write fails.
    // For HEAD, or when max_streams are open (503), `stream` is not called.
    std::function<void(std::shared_ptr<ResponseStream>)> stream;
    // Sent on a stream after stream_keepalive_interval without output (for
    // server-sent events, a comment line); "" sends nothing.
    std::string keepalive;
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
  // Like Handle(), for every path that starts with `prefix` and has no
  // exact handler; of several prefixes, the longest wins.
  void HandlePrefix(std::string prefix, Handler handler);
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
