// Feeds arbitrary bytes to the HTTP request-head parser, the web API's
// query and workload-path parsers, and through a real HttpServer on loopback. Must never crash or
// hang; every parse must end in one of the statuses ParseRequestHead documents (no prefix of a
// valid head rejected), and every answer of the server must be a whole, well-formed response whose
// status agrees with the parser.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "server/observability/http_request_head.h"
#include "server/observability/http_server.h"
#include "server/web/query.h"
#include "server/web/workload_path.h"

namespace {

using wm::observability::HttpServer;
using wm::observability::HttpServerOptions;
using wm::observability::internal::ParsedHead;
using wm::observability::internal::ParseRequestHead;
using wm::observability::internal::RequestHeadLimits;

// Small limits, so that the fuzzer reaches 414 and 431 with short inputs.
constexpr RequestHeadLimits kSmallLimits = {/*max_head_bytes=*/128, /*max_target_bytes=*/32};

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "http_request_fuzzer: %s\n", what);
    std::abort();
  }
}

bool IsParserStatus(int status) {
  switch (status) {
    case 0:
    case 200:
    case 400:
    case 405:
    case 411:
    case 414:
    case 431:
    case 501:
    case 505:
      return true;
    default:
      return false;
  }
}

ParsedHead CheckParse(absl::string_view bytes, const RequestHeadLimits& limits) {
  ParsedHead parsed = ParseRequestHead(bytes, limits);
  Check(IsParserStatus(parsed.status), "status outside the documented set");
  if (parsed.status == 0) {
    Check(bytes.size() < limits.max_head_bytes, "incomplete past max_head_bytes");
    Check(parsed.error.empty(), "incomplete with an error");
    return parsed;
  }
  if (parsed.status != 200) {
    Check(!parsed.error.empty(), "rejected without saying why");
    return parsed;
  }
  Check(parsed.size >= 4 && parsed.size <= bytes.size() && parsed.size <= limits.max_head_bytes,
        "head size out of range");
  Check(bytes.substr(parsed.size - 4, 4) == "\r\n\r\n", "head does not end in a blank line");
  Check(parsed.method == "GET" || parsed.method == "HEAD" ||
            (limits.allow_post && parsed.method == "POST"),
        "method other than GET or HEAD (or POST where allowed)");
  Check(parsed.method != "POST" || parsed.content_length >= 0, "a POST without its length");
  Check(limits.allow_post || (parsed.content_length == -1 && parsed.content_type.empty()),
        "body headers kept where POST is not served");
  Check(absl::StartsWith(parsed.path, "/"), "path without '/'");
  Check(parsed.path.size() + parsed.query.size() <= limits.max_target_bytes, "target too long");
  ParsedHead alone = ParseRequestHead(bytes.substr(0, parsed.size), limits);
  Check(alone.status == 200 && alone.size == parsed.size, "the head alone parses otherwise");
  size_t stride = parsed.size / 64 + 1;
  for (size_t n = 0; n < parsed.size; n += stride) {
    Check(ParseRequestHead(bytes.substr(0, n), limits).status == 0,
          "a prefix of a valid head is not incomplete");
  }
  return parsed;
}

// What the web API makes of a valid head's target: a query is parsed or
// refused as InvalidArgument; a path below the API's root is a workload, or
// NotFound, or InvalidArgument, never anything else.
void CheckApiParsers(const ParsedHead& parsed) {
  auto query = wm::web::Query::Parse(parsed.query, {"cluster", "namespace", "kind", "pageSize"});
  Check(query.ok() || absl::IsInvalidArgument(query.status()), "query refused otherwise");
  if (query.ok()) {
    auto size = query->GetInt("pageSize", 1000);
    Check(size.ok() ? *size >= 0 && *size <= 1000 : absl::IsInvalidArgument(size.status()),
          "pageSize out of its range");
  }
  absl::string_view path = parsed.path;
  absl::ConsumePrefix(&path, "/api/v1/");
  auto workload = wm::web::ParseWorkloadPath(path);
  if (workload.ok()) {
    Check(!workload->ref.name().empty(), "a workload path without a name");
    Check(!workload->ref.kind().empty() || !workload->ref.resource().empty(),
          "a workload path without a kind");
  } else {
    Check(absl::IsNotFound(workload.status()) || absl::IsInvalidArgument(workload.status()),
          "a workload path refused otherwise");
  }
}

HttpServer& Server() {
  static HttpServer* server = [] {
    HttpServerOptions options;
    options.max_head_bytes = kSmallLimits.max_head_bytes;
    options.max_target_bytes = kSmallLimits.max_target_bytes;
    auto* s = new HttpServer(options);
    s->HandleProbe("/", [](const HttpServer::Request&) { return HttpServer::Response(); });
    s->Handle("/work", [](const HttpServer::Request& request) {
      return HttpServer::Response{200, "text/plain", request.query};
    });
    Check(s->Start("127.0.0.1:0").ok(), "server did not start");
    return s;
  }();
  return *server;
}

// Every blocking call below is retried on EINTR: libFuzzer's -timeout runs an
// interval timer whose SIGALRM handler is installed without SA_RESTART, so a
// send or recv that happens to be waiting when it fires fails with EINTR.
// That is the fuzzer's own signal, not the server's answer.

// A connected socket to the server. Thousands of connections a second can
// run the loopback out of ephemeral ports for a moment (EADDRNOTAVAIL), or
// fill the listen queue; that is the fuzzer's own load, not the server's
// answer, so connecting is retried for a bounded time. A connect interrupted
// by a signal goes on in the background; it is abandoned for a fresh one.
int Connect() {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(Server().port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int error = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    Check(fd >= 0, "socket");
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return fd;
    error = errno;
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "http_request_fuzzer: connect: %s\n", std::strerror(error));
  std::abort();
}

// Closes with a reset rather than a FIN once the server has closed its side,
// so that the client's end does not sit in TIME_WAIT holding a port.
void CloseWithoutTimeWait(int fd) {
  linger no_linger{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &no_linger, sizeof(no_linger));
  ::close(fd);
}

// Sends `bytes`, closes the sending side and returns all the server answers.
std::string RoundTrip(absl::string_view bytes) {
  int fd = Connect();
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server answered early and closed
    sent += n;
  }
  ::shutdown(fd, SHUT_WR);
  std::string out;
  char buffer[4096];
  while (true) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) Check(false, "the server neither answered nor closed");
    if (n <= 0) break;
    out.append(buffer, n);
  }
  CloseWithoutTimeWait(fd);
  return out;
}

// The status of a whole response: status line, headers, a body of
// Content-Length bytes (none after HEAD).
int CheckResponse(absl::string_view response, bool head_only) {
  Check(absl::StartsWith(response, "HTTP/1.1 ") && response.size() > 13 && response[12] == ' ',
        "bad status line");
  int status = 0;
  Check(absl::SimpleAtoi(response.substr(9, 3), &status), "bad status code");
  size_t end = response.find("\r\n\r\n");
  Check(end != absl::string_view::npos, "response head does not end");
  absl::string_view head = response.substr(0, end + 2);
  size_t length_at = head.find("\r\nContent-Length: ");
  Check(length_at != absl::string_view::npos, "no Content-Length");
  absl::string_view length_text = head.substr(length_at + 18);
  length_text = length_text.substr(0, length_text.find("\r\n"));
  size_t length = 0;
  Check(absl::SimpleAtoi(length_text, &length), "bad Content-Length");
  size_t body = response.size() - end - 4;
  Check(body == (head_only ? 0 : length), "body length differs from Content-Length");
  return status;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckParse(bytes, RequestHeadLimits());
  // As the admission webhook's server reads heads: POST with a body.
  RequestHeadLimits post;
  post.allow_post = true;
  CheckParse(bytes, post);
  ParsedHead parsed = CheckParse(bytes, kSmallLimits);
  if (ParsedHead large = ParseRequestHead(bytes); large.status == 200) CheckApiParsers(large);

  std::string response = RoundTrip(bytes);
  if (parsed.status == 0) {
    Check(response.empty(), "answered an incomplete head");
    return 0;
  }
  Check(!response.empty(), "no answer to a complete or rejected head");
  int status = CheckResponse(response, parsed.status == 200 && parsed.method == "HEAD");
  if (parsed.status == 200) {
    bool known = parsed.path == "/" || parsed.path == "/work";
    Check(status == (known ? 200 : 404), "a valid request answered otherwise");
  } else {
    // The server judges the bytes as they arrive, maybe a prefix.
    Check(IsParserStatus(status) && status >= 400, "a rejected request answered otherwise");
  }
  return 0;
}
