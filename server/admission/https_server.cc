#include "server/admission/https_server.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/observability/http_request_head.h"
#include "server/observability/listen_socket.h"
#include "server/observability/reason_phrase.h"

namespace wm::admission {
namespace {

// How often a blocked read or write looks at its deadline and at Stop.
constexpr absl::Duration kTick = absl::Milliseconds(200);

// Whether an SSL call that returned `result` may be tried again (it timed
// out on the socket's tick, or TLS needs another round).
bool Retryable(SSL* ssl, int result) {
  int error = SSL_get_error(ssl, result);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return true;
  return error == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

}  // namespace

HttpsServer::HttpsServer(TlsFiles& tls, Options options) : tls_(tls), options_(options) {}

HttpsServer::~HttpsServer() { Stop(); }

void HttpsServer::Handle(std::string path, Handler handler) {
  handlers_[std::move(path)] = std::move(handler);
}

absl::Status HttpsServer::Start(absl::string_view address) {
  absl::StatusOr<observability::ListeningSocket> listening = observability::ListenTcp(address);
  if (!listening.ok()) return listening.status();
  listen_fd_ = listening->fd;
  port_ = listening->port;
  acceptor_ = std::thread([this] { Accept(); });
  return absl::OkStatus();
}

void HttpsServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return active_ == 0; });
}

void HttpsServer::Accept() {
  while (!stopping_.load()) {
    pollfd ready{listen_fd_, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(absl::ToInt64Milliseconds(kTick))) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    {
      std::unique_lock lock(mu_);
      if (active_ >= options_.max_connections) {
        ++refused_;
        ::close(fd);
        continue;
      }
      ++active_;
    }
    std::thread([this, fd] {
      Serve(fd);
      ::close(fd);
      std::unique_lock lock(mu_);
      --active_;
      idle_.notify_all();  // the last touch of `this`: Stop may return after
    }).detach();
  }
}

void HttpsServer::Serve(int fd) {
  // OpenSSL writes with write(2): a peer gone mid-answer would raise
  // SIGPIPE, whose default ends the process. Blocked on this thread, the
  // write fails with EPIPE instead (the signal stays pending on the thread,
  // which ends with the connection).
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  // Blocking I/O that wakes every tick, so deadlines and Stop are seen.
  timeval tick{0, static_cast<suseconds_t>(absl::ToInt64Microseconds(kTick))};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof(tick));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tick, sizeof(tick));
  std::shared_ptr<SSL_CTX> context = tls_.Context();
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), SSL_free);
  if (ssl == nullptr || SSL_set_fd(ssl.get(), fd) != 1) return;
  absl::Time deadline = absl::Now() + options_.request_timeout;
  for (;;) {
    int result = SSL_accept(ssl.get());
    if (result == 1) break;
    if (!Retryable(ssl.get(), result) || stopping_.load() || absl::Now() > deadline) {
      ERR_clear_error();
      return;
    }
  }
  std::string buffer;
  while (!stopping_.load() && Exchange(ssl.get(), buffer)) {
  }
  SSL_shutdown(ssl.get());
  ERR_clear_error();
}

bool HttpsServer::Exchange(SSL* ssl, std::string& buffer) {
  // Until the first byte of a request: the idle timeout; from it, the
  // whole request must arrive within the request timeout.
  absl::Time deadline =
      absl::Now() + (buffer.empty() ? options_.idle_timeout : options_.request_timeout);
  bool started = !buffer.empty();
  auto read_more = [&]() -> bool {
    char chunk[16 * 1024];
    for (;;) {
      if (stopping_.load() || absl::Now() > deadline) return false;
      int n = SSL_read(ssl, chunk, sizeof(chunk));
      if (n > 0) {
        buffer.append(chunk, n);
        if (!started) {
          started = true;
          deadline = absl::Now() + options_.request_timeout;
        }
        return true;
      }
      if (!Retryable(ssl, n)) return false;  // closed, or a TLS error
    }
  };
  auto write_all = [&](absl::string_view bytes) -> bool {
    absl::Time write_deadline = absl::Now() + options_.request_timeout;
    while (!bytes.empty()) {
      if (absl::Now() > write_deadline) return false;
      int n = SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
      if (n > 0) {
        bytes.remove_prefix(n);
      } else if (!Retryable(ssl, n)) {
        return false;
      }
    }
    return true;
  };
  auto answer = [&](int status, absl::string_view content_type, absl::string_view body,
                    bool keep_alive) {
    std::string head =
        absl::StrCat("HTTP/1.1 ", status, " ", observability::internal::ReasonPhrase(status),
                     "\r\nContent-Type: ", content_type, "\r\nContent-Length: ", body.size(),
                     keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
    return write_all(head) && write_all(body) && keep_alive;
  };

  observability::internal::RequestHeadLimits limits;
  limits.allow_post = true;
  observability::internal::ParsedHead head;
  for (;;) {
    head = observability::internal::ParseRequestHead(buffer, limits);
    if (head.status != 0) break;
    if (!read_more()) return false;
  }
  if (head.status != 200) {
    return answer(head.status, "text/plain", head.error + "\n", /*keep_alive=*/false);
  }
  int64_t length = std::max<int64_t>(head.content_length, 0);
  if (static_cast<uint64_t>(length) > options_.max_body_bytes) {
    return answer(413, "text/plain",
                  absl::StrCat("the body is over ", options_.max_body_bytes, " bytes\n"), false);
  }
  while (buffer.size() < head.size + static_cast<size_t>(length)) {
    if (!read_more()) return false;
  }
  Request request{head.method, head.path, head.query, head.content_type,
                  buffer.substr(head.size, length)};
  buffer.erase(0, head.size + length);
  auto handler = handlers_.find(request.path);
  if (handler == handlers_.end()) {
    return answer(404, "text/plain", "no such path\n", true);
  }
  Response response = handler->second(request);
  return answer(response.status, response.content_type, response.body, true);
}

}  // namespace wm::admission
