#include "server/observability/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace wm::observability {
namespace {

// After the response, how long to keep reading (and discarding) what the
// client still sends: closing with unread bytes would reset the connection
// and could destroy the response before the client reads it.
constexpr absl::Duration kLingerTime = absl::Milliseconds(500);
constexpr size_t kMaxLingerBytes = 64 * 1024;

std::string ErrnoText(int error) {
  char buffer[256];
  // GNU strerror_r: returns the message, not necessarily in `buffer`.
  return strerror_r(error, buffer, sizeof(buffer));
}

absl::Status ErrnoStatus(int error, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(error), absl::StrCat(what, ": ", ErrnoText(error)));
}

absl::string_view Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

// A parsed listen address; `any` means all interfaces (try IPv6, then IPv4).
struct ListenAddress {
  bool any = false;
  sockaddr_storage storage{};
  socklen_t length = 0;
};

absl::Status ParseListenAddress(absl::string_view address, ListenAddress* out) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid listen address \"", address, "\": ", why));
  };
  absl::string_view host, port;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find("]:");
    if (close == absl::string_view::npos) return invalid("want [IPV6]:PORT");
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    if (host.empty()) return invalid("empty IPv6 address");
  } else {
    size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return invalid("want HOST:PORT");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != absl::string_view::npos) return invalid("IPv6 hosts need brackets");
  }
  if (port.empty() || port.size() > 5) return invalid("bad port");
  int port_number = 0;
  for (char c : port) {
    if (!absl::ascii_isdigit(c)) return invalid("bad port");
    port_number = port_number * 10 + (c - '0');
  }
  if (port_number > 65535) return invalid("port out of range");

  *out = ListenAddress();
  std::string host_string(host);
  bool bracketed = address.front() == '[';
  if (host.empty()) {
    out->any = true;
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&out->storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_addr = in6addr_any;
    v6->sin6_port = htons(port_number);
    out->length = sizeof(sockaddr_in6);
  } else if (bracketed) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&out->storage);
    if (::inet_pton(AF_INET6, host_string.c_str(), &v6->sin6_addr) != 1) {
      return invalid("not an IPv6 literal");
    }
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port_number);
    out->length = sizeof(sockaddr_in6);
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&out->storage);
    if (::inet_pton(AF_INET, host_string.c_str(), &v4->sin_addr) != 1) {
      return invalid("host must be an IPv4 literal or a bracketed IPv6 literal");
    }
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port_number);
    out->length = sizeof(sockaddr_in);
  }
  return absl::OkStatus();
}

// A listening socket for `address`, or the errno of the failing step.
int Listen(const sockaddr_storage& address, socklen_t length, bool dual_stack, int* error) {
  int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = errno;
    return -1;
  }
  int one = 1, zero = 0;
  // Lets a restarted daemon bind while old connections sit in TIME_WAIT (on
  // Linux it does not let two listeners share a port).
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (dual_stack) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(fd, 64) != 0) {
    *error = errno;
    ::close(fd);
    return -1;
  }
  return fd;
}

enum class Wait { kReady, kTimeout, kStopped, kError };

// Waits until `fd` has `events`, `deadline` passes or `stop_fd` is readable.
Wait WaitFor(int fd, short events, int stop_fd, absl::Time deadline) {
  while (true) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return Wait::kTimeout;
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    int timeout_ms =
        static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))));
    int n = ::poll(fds, 2, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Wait::kError;
    }
    if (fds[1].revents != 0) return Wait::kStopped;
    if (fds[0].revents != 0) return Wait::kReady;  // POLLERR/POLLHUP: the read or write says
  }
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options) : options_(std::move(options)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(std::string path, Handler handler) {
  auto shared = std::make_shared<const Handler>(std::move(handler));
  std::lock_guard<std::mutex> lock(mu_);
  handlers_[std::move(path)] = std::move(shared);
}

absl::Status HttpServer::Start(absl::string_view address) {
  ListenAddress parsed;
  if (absl::Status status = ParseListenAddress(address, &parsed); !status.ok()) return status;

  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopped_) {
    return absl::FailedPreconditionError("HttpServer::Start called twice or after Stop");
  }
  int error = 0;
  int fd = Listen(parsed.storage, parsed.length, parsed.any, &error);
  if (fd < 0 && parsed.any &&
      (error == EAFNOSUPPORT || error == EADDRNOTAVAIL || error == EPROTONOSUPPORT)) {
    // No IPv6 on this host (common in containers): all IPv4 interfaces then.
    sockaddr_storage v4_storage{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&v4_storage);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    v4->sin_port = reinterpret_cast<const sockaddr_in6*>(&parsed.storage)->sin6_port;
    fd = Listen(v4_storage, sizeof(sockaddr_in), false, &error);
  }
  if (fd < 0) return ErrnoStatus(error, absl::StrCat("listen on ", address));

  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    error = errno;
    ::close(fd);
    return ErrnoStatus(error, absl::StrCat("getsockname for ", address));
  }
  int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd < 0) {
    error = errno;
    ::close(fd);
    return ErrnoStatus(error, "eventfd");
  }
  listen_fd_ = fd;
  stop_fd_ = stop_fd;
  port_.store(
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port),
      std::memory_order_relaxed);
  started_ = true;
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    if (!started_) return;
  }
  // The eventfd stays readable (nobody reads it), waking every poll() now
  // and later.
  uint64_t one = 1;
  while (::write(stop_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
  accept_thread_.join();
  // The accept thread is gone, so no connection is added any more.
  std::list<Connection> connections;
  {
    std::lock_guard<std::mutex> lock(mu_);
    connections.swap(connections_);
  }
  for (Connection& connection : connections) connection.thread.join();
  ::close(listen_fd_);
  ::close(stop_fd_);
  listen_fd_ = stop_fd_ = -1;
}

void HttpServer::AcceptLoop() {
  while (true) {
    // At capacity, leave new connections in the kernel's backlog until a
    // connection thread finishes (rather than closing them unanswered).
    bool full;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ReapFinishedLocked();
      full = connections_.size() >= static_cast<size_t>(options_.max_connections);
    }
    pollfd fds[2] = {{listen_fd_, full ? short{0} : short{POLLIN}, 0}, {stop_fd_, POLLIN, 0}};
    int n = ::poll(fds, 2, full ? 10 : -1);
    if (n < 0) {
      // EINTR, or (transiently) no memory: try again, not too eagerly.
      if (errno != EINTR) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors or memory: back off instead of spinning on a
      // listener that stays readable.
      pollfd stop = {stop_fd_, POLLIN, 0};
      ::poll(&stop, 1, 100);
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    Connection& connection = connections_.emplace_back();
    connection.thread = std::thread([this, fd, &connection] {
      Serve(fd);
      connection.done.store(true, std::memory_order_release);
    });
  }
}

void HttpServer::ReapFinishedLocked() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->done.load(std::memory_order_acquire)) {
      it->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void HttpServer::Serve(int fd) {
  // Sends a complete response, then lingers and closes.
  auto respond = [&](const Response& response, bool head_only, absl::string_view extra_headers) {
    std::string out = absl::StrCat("HTTP/1.1 ", response.status, " ", Reason(response.status),
                                   "\r\nContent-Type: ", response.content_type,
                                   "\r\nContent-Length: ", response.body.size(),
                                   "\r\nConnection: close\r\n", extra_headers, "\r\n");
    if (!head_only) out += response.body;
    absl::Time deadline = absl::Now() + options_.io_timeout;
    size_t sent = 0;
    while (sent < out.size()) {
      ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += n;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        if (WaitFor(fd, POLLOUT, stop_fd_, deadline) != Wait::kReady) break;
      } else {
        break;
      }
    }
    if (sent == out.size()) {
      ::shutdown(fd, SHUT_WR);
      absl::Time linger_deadline = absl::Now() + kLingerTime;
      size_t drained = 0;
      char buffer[4096];
      while (drained < kMaxLingerBytes &&
             WaitFor(fd, POLLIN, stop_fd_, linger_deadline) == Wait::kReady) {
        ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
        if (n > 0) drained += n;
      }
    }
  };
  auto error = [&](int status, absl::string_view extra_headers = "") {
    Response response;
    response.status = status;
    response.body = absl::StrCat(Reason(status), "\n");
    respond(response, false, extra_headers);
  };

  // Read the request head: everything up to the blank line.
  std::string head;
  size_t head_end = std::string::npos;
  absl::Time deadline = absl::Now() + options_.io_timeout;
  char buffer[4096];
  while (true) {
    head_end = head.find("\r\n\r\n");
    if (head_end != std::string::npos && head_end + 4 <= options_.max_header_bytes) break;
    if (head.size() >= options_.max_header_bytes) {
      error(431);
      ::close(fd);
      return;
    }
    Wait wait = WaitFor(fd, POLLIN, stop_fd_, deadline);
    if (wait == Wait::kTimeout) {
      if (!head.empty()) error(408);
      ::close(fd);
      return;
    }
    if (wait != Wait::kReady) {
      ::close(fd);
      return;
    }
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {  // the client went away
      ::close(fd);
      return;
    }
    head.append(buffer, n);
  }

  // "METHOD TARGET HTTP/1.x"; the headers are not needed.
  absl::string_view request_line = absl::string_view(head).substr(0, head.find("\r\n"));
  std::vector<absl::string_view> parts = absl::StrSplit(request_line, ' ');
  if (parts.size() != 3 || parts[0].empty() || !absl::StartsWith(parts[1], "/") ||
      !absl::StartsWith(parts[2], "HTTP/1.")) {
    error(400);
    ::close(fd);
    return;
  }
  Request request;
  request.method = std::string(parts[0]);
  if (request.method != "GET" && request.method != "HEAD") {
    error(405, "Allow: GET, HEAD\r\n");
    ::close(fd);
    return;
  }
  absl::string_view target = parts[1];
  size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != absl::string_view::npos) request.query = std::string(target.substr(question + 1));

  Response response = Dispatch(request);
  if (response.status < 100 || response.status > 999) response.status = 500;
  respond(response, request.method == "HEAD", "");
  ::close(fd);
}

HttpServer::Response HttpServer::Dispatch(const Request& request) {
  std::shared_ptr<const Handler> handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = handlers_.find(request.path);
    if (it != handlers_.end()) handler = it->second;
  }
  if (handler == nullptr) {
    Response response;
    response.status = 404;
    response.body = "Not Found\n";
    return response;
  }
  return (*handler)(request);
}

}  // namespace wm::observability
