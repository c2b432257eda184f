#ifndef WM_SERVER_OBSERVABILITY_HTTP_REQUEST_HEAD_H_
#define WM_SERVER_OBSERVABILITY_HTTP_REQUEST_HEAD_H_

// The request-head parser of the daemon's two HTTP servers (HttpServer
// here, and admission's HttpsServer, which takes POST bodies), apart so
// that it can be tested and fuzzed on its own; not part of this layer's API.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace wm::observability::internal {

struct RequestHeadLimits {
  // The request line, the header lines and the blank line that ends them;
  // a head that has not ended within this many bytes is answered 431.
  size_t max_head_bytes = 8 * 1024;
  // The request target (path and query); a longer one is answered 414.
  size_t max_target_bytes = 2 * 1024;
  // Whether POST is served (with a body of Content-Length bytes; chunked
  // bodies are refused). Otherwise only GET and HEAD.
  bool allow_post = false;
};

struct ParsedHead {
  // 0: no complete head yet, and nothing wrong so far: read more.
  // 200: a complete, valid head of `size` bytes; `method`, `path` and `query`
  // are set. Anything else: the status to answer, and `error` says why:
  //   400  a malformed request line or header line, or a byte that is
  //        neither printable ASCII nor HTAB nor part of a CRLF
  //   405  a method other than GET and HEAD (and POST when allowed)
  //   411  a POST without Content-Length
  //   501  a POST with Transfer-Encoding
  //   414  a request target over max_target_bytes
  //   431  no end of the head within max_head_bytes
  //   505  an HTTP version other than 1.x
  int status = 0;
  std::string error;
  std::string method;  // "GET" or "HEAD", or "POST" when allowed
  std::string path;    // the target up to '?', starting with '/'; not percent-decoded
  std::string query;   // after '?', without it; "" if none
  // The value of the Authorization header, without surrounding whitespace;
  // "" if none. A head with two is answered 400.
  std::string authorization;
  // The Last-Event-ID header's value, likewise (a server-sent-events client
  // resuming).
  std::string last_event_id;
  // With allow_post: the Content-Length header's value (-1 if none; a
  // malformed or repeated one is answered 400) and Content-Type's.
  int64_t content_length = -1;
  std::string content_type;
  size_t size = 0;  // bytes of the head, its blank line included
};

// Looks at what a client sent so far (which may continue past the head, into
// a body). Judges each line as soon as its CRLF arrives, so a bad request
// line is answered without waiting for the rest (and an over-long target
// before its line ends). A request line is judged in the order: method and
// target syntax (400), target length (414), version (400, 505), method (405). The headers' names
// and values are checked, and only Authorization and Last-Event-ID are kept. A prefix of a valid
// head is never rejected: for it the answer is 0.
ParsedHead ParseRequestHead(absl::string_view bytes,
                            const RequestHeadLimits& limits = RequestHeadLimits());

}  // namespace wm::observability::internal

#endif  // WM_SERVER_OBSERVABILITY_HTTP_REQUEST_HEAD_H_
