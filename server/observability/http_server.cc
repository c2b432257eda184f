#include "server/observability/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/observability/http_request_head.h"
#include "server/observability/internal/errno_status.h"
#include "server/observability/listen_socket.h"
#include "server/observability/reason_phrase.h"

namespace wm::observability {
namespace {

using internal::ErrnoStatus;

// After the response, how long to keep reading (and discarding) what the
// client still sends: closing with unread bytes would reset the connection
// and could destroy the response before the client reads it.
constexpr absl::Duration kLingerTime = absl::Milliseconds(500);
constexpr size_t kMaxLingerBytes = 64 * 1024;
// After accept() fails for want of descriptors or memory, how long to leave
// the listener alone instead of spinning on it.
constexpr absl::Duration kAcceptBackoff = absl::Milliseconds(100);
// Sent (best effort, never waited for) to a connection that is evicted or
// refused for want of a slot.
constexpr absl::string_view kBusyResponse =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 20\r\nConnection: close\r\n\r\nService Unavailable\n";

absl::Status ValidateOptions(const HttpServerOptions& options) {
  auto invalid = [](absl::string_view field, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("HttpServerOptions.", field, " ", why));
  };
  if (options.head_timeout <= absl::ZeroDuration()) {
    return invalid("head_timeout", "must be positive");
  }
  if (options.write_timeout <= absl::ZeroDuration()) {
    return invalid("write_timeout", "must be positive");
  }
  if (options.max_target_bytes < 1) return invalid("max_target_bytes", "must be at least 1");
  if (options.max_head_bytes < 16) return invalid("max_head_bytes", "must be at least 16");
  if (options.handler_threads < 1) return invalid("handler_threads", "must be at least 1");
  if (options.max_streams < 0) return invalid("max_streams", "must not be negative");
  if (options.max_stream_queued_bytes < 1) {
    return invalid("max_stream_queued_bytes", "must be at least 1");
  }
  if (options.stream_keepalive_interval <= absl::ZeroDuration()) {
    return invalid("stream_keepalive_interval", "must be positive");
  }
  if (options.max_connections <= options.handler_threads) {
    return invalid("max_connections",
                   absl::StrCat("is ", options.max_connections, ": must exceed handler_threads (",
                                options.handler_threads, ")"));
  }
  return absl::OkStatus();
}

void ResetAndClose(int fd) {
  linger abort{1, 0};  // close() then sends RST and drops unsent bytes
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
  ::close(fd);
}

void CloseBusy(int fd) {
  // Best effort: the socket's buffer is empty unless this is a writer.
  (void)::send(fd, kBusyResponse.data(), kBusyResponse.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(fd);
}

// The status line and headers, and the body unless `head_only`. A stream's
// head has no Content-Length: its body ends when the connection closes.
std::string SerializeResponse(const HttpServer::Response& response, bool head_only,
                              absl::string_view extra_headers) {
  std::string out =
      absl::StrCat("HTTP/1.1 ", response.status, " ", internal::ReasonPhrase(response.status),
                   "\r\nContent-Type: ", response.content_type, "\r\n");
  if (!response.stream) absl::StrAppend(&out, "Content-Length: ", response.body.size(), "\r\n");
  absl::StrAppend(&out, "Connection: close\r\n", extra_headers);
  for (const std::string& header : response.headers) absl::StrAppend(&out, header, "\r\n");
  out += "\r\n";
  if (!head_only && !response.stream) out += response.body;
  return out;
}

int PollTimeoutMs(absl::Time now, absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  absl::Duration left = std::max(deadline - now, absl::ZeroDuration());
  return static_cast<int>(std::min<int64_t>(
      absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), 60 * 1000));
}

}  // namespace

// The I/O thread owns the listener and every connection; handler threads
// only ever see a Job and hand back a Finished.
class HttpServer::Impl {
 public:
  explicit Impl(HttpServerOptions options) : options_(std::move(options)) {}

  void Register(std::string path, Handler handler, bool probe, bool prefix) {
    auto route = std::make_shared<const Route>(Route{std::move(handler), probe});
    std::lock_guard<std::mutex> lock(mu_);
    if (prefix) {
      prefix_routes_[std::move(path)] = std::move(route);
    } else {
      routes_[std::move(path)] = std::move(route);
    }
  }

  absl::Status Start(absl::string_view address);
  void Stop();
  int port() const { return port_.load(std::memory_order_relaxed); }

 private:
  struct Route {
    Handler handler;
    bool probe = false;
  };
  // A complete request waiting for (or on) a handler thread.
  struct Job {
    uint64_t connection;
    Request request;
    bool head_only;
    std::shared_ptr<const Route> route;
  };
  // A ResponseStream counted among the open streams, closed (its producer
  // told) and uncounted when the handle goes: the connection closed, or the
  // answer found its connection gone.
  class StreamHandle {
   public:
    StreamHandle() = default;
    StreamHandle(std::shared_ptr<ResponseStream> stream, std::atomic<int>* open)
        : stream_(std::move(stream)), open_(open) {}
    StreamHandle(StreamHandle&& other) noexcept
        : stream_(std::move(other.stream_)), open_(other.open_) {}
    StreamHandle& operator=(StreamHandle&& other) noexcept {
      Release();
      stream_ = std::move(other.stream_);
      open_ = other.open_;
      return *this;
    }
    ~StreamHandle() { Release(); }
    ResponseStream* get() const { return stream_.get(); }

   private:
    void Release() {
      if (stream_ == nullptr) return;
      stream_->Close();
      stream_.reset();
      open_->fetch_sub(1, std::memory_order_relaxed);
    }
    std::shared_ptr<ResponseStream> stream_;
    std::atomic<int>* open_ = nullptr;
  };
  // A handler's answer for the I/O thread.
  struct Finished {
    uint64_t connection;
    Response response;
    bool head_only;
    StreamHandle stream;  // for a streaming response
  };
  enum class State {
    kHead,       // reading the request head
    kHandler,    // waiting for a handler thread, or on one
    kWriting,    // sending the response
    kStreaming,  // sending a stream's head and its body as it is written
    kLingering,  // response sent: reading and discarding until the client closes
  };
  struct Connection {
    int fd = -1;
    State state = State::kHead;
    absl::Time deadline;
    std::string in;
    std::string out;
    size_t sent = 0;
    size_t drained = 0;
    StreamHandle stream;
    std::string keepalive;
  };

  // The I/O thread.
  void Loop();
  void AcceptAll();
  // Frees a slot for a new connection; false if every connection is on a
  // handler thread or has its answer in flight.
  bool EvictOne();
  void ReadHead(uint64_t id);
  void Dispatch(uint64_t id, const internal::ParsedHead& head);
  void Respond(uint64_t id, Response response, bool head_only, absl::string_view extra_headers);
  void RespondError(uint64_t id, int status, absl::string_view extra_headers = "");
  void Write(uint64_t id);
  // Sends a stream's keepalive bytes when it is idle, else resets it.
  void ExpireStream(uint64_t id);
  // Reads and discards what a stream's client sends; closes when it left.
  void ReadStream(uint64_t id);
  void Linger(uint64_t id);
  void Expire(uint64_t id);
  void Close(uint64_t id);
  void TakeFinished();

  // The handler threads.
  void RunHandlers();
  // Takes back the job of `connection` if no handler thread took it yet.
  bool CancelJob(uint64_t connection);
  // Makes `answer`'s stream (a handler thread's), or a 503 when max_streams
  // are open (then null).
  std::shared_ptr<ResponseStream> OpenStream(Finished& answer);
  void Wake();

  const HttpServerOptions options_;
  std::atomic<int> port_{0};
  int listen_fd_ = -1;
  // Readable once Stop() was called.
  int stop_fd_ = -1;
  // Readable while `finished_` may hold answers.
  int wake_fd_ = -1;
  std::thread io_thread_;
  std::vector<std::thread> handler_threads_;

  // The I/O thread's own: connections by accept order, so the first of a
  // kind is the oldest.
  std::map<uint64_t, Connection> connections_;
  uint64_t next_id_ = 0;
  absl::Time accept_paused_until_ = absl::InfinitePast();

  std::mutex mu_;
  bool started_ = false;
  bool stopped_ = false;
  absl::flat_hash_map<std::string, std::shared_ptr<const Route>> routes_;
  std::map<std::string, std::shared_ptr<const Route>> prefix_routes_;
  // Streams from their making by a handler thread to their connection's end.
  std::atomic<int> open_streams_{0};
  std::deque<Job> jobs_;
  std::condition_variable jobs_ready_;
  std::vector<Finished> finished_;
};

absl::Status HttpServer::Impl::Start(absl::string_view address) {
  if (absl::Status status = ValidateOptions(options_); !status.ok()) return status;

  std::lock_guard<std::mutex> lock(mu_);
  if (started_ || stopped_) {
    return absl::FailedPreconditionError("HttpServer::Start called twice or after Stop");
  }
  absl::StatusOr<ListeningSocket> listening = ListenTcp(address);
  if (!listening.ok()) return listening.status();
  int fd = listening->fd;
  int error = 0;
  int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd < 0 || wake_fd < 0) {
    error = errno;
    ::close(fd);
    if (stop_fd >= 0) ::close(stop_fd);
    if (wake_fd >= 0) ::close(wake_fd);
    return ErrnoStatus(error, "eventfd");
  }
  listen_fd_ = fd;
  stop_fd_ = stop_fd;
  wake_fd_ = wake_fd;
  port_.store(listening->port, std::memory_order_relaxed);
  started_ = true;
  io_thread_ = std::thread([this] { Loop(); });
  for (int i = 0; i < options_.handler_threads; ++i) {
    handler_threads_.emplace_back([this] { RunHandlers(); });
  }
  return absl::OkStatus();
}

void HttpServer::Impl::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    jobs_.clear();
    if (!started_) return;
  }
  jobs_ready_.notify_all();
  // The eventfd stays readable (nobody reads it).
  uint64_t one = 1;
  while (::write(stop_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
  io_thread_.join();
  // Answers never taken: their streams close, so that producers writing on
  // handler threads stop, before those threads are joined and before the
  // wake descriptor the streams signal goes.
  std::vector<Finished> untaken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    untaken.swap(finished_);
  }
  untaken.clear();
  for (std::thread& thread : handler_threads_) thread.join();
  ::close(listen_fd_);
  ::close(stop_fd_);
  ::close(wake_fd_);
  listen_fd_ = stop_fd_ = wake_fd_ = -1;
}

void HttpServer::Impl::Loop() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;  // of fds[3...]
  while (true) {
    absl::Time now = absl::Now();
    absl::Time next_deadline = absl::InfiniteFuture();
    bool accepting = now >= accept_paused_until_;
    if (!accepting) next_deadline = accept_paused_until_;
    fds.clear();
    ids.clear();
    fds.push_back({stop_fd_, POLLIN, 0});
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, accepting ? short{POLLIN} : short{0}, 0});
    for (auto& [id, connection] : connections_) {
      next_deadline = std::min(next_deadline, connection.deadline);
      short events = 0;
      switch (connection.state) {
        case State::kHead:
        case State::kLingering:
          events = POLLIN;
          break;
        case State::kWriting:
          events = POLLOUT;
          break;
        case State::kStreaming:
          // Readable when the client leaves; writable matters only while
          // bytes wait.
          events = connection.sent < connection.out.size() ? POLLIN | POLLOUT : POLLIN;
          break;
        case State::kHandler:
          continue;  // nothing to do until its handler returns
      }
      fds.push_back({connection.fd, events, 0});
      ids.push_back(id);
    }
    int n = ::poll(fds.data(), fds.size(), PollTimeoutMs(now, next_deadline));
    if (n < 0 && errno != EINTR) {
      // Transiently out of memory: try again, not too eagerly.
      pollfd stop = {stop_fd_, POLLIN, 0};
      ::poll(&stop, 1, 100);
    }
    if (n < 0) continue;
    if (fds[0].revents != 0) break;
    if (fds[1].revents != 0) TakeFinished();
    for (size_t i = 3; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = connections_.find(ids[i - 3]);
      if (it == connections_.end()) continue;  // evicted meanwhile
      switch (it->second.state) {
        case State::kHead:
          ReadHead(it->first);
          break;
        case State::kWriting:
          Write(it->first);
          break;
        case State::kStreaming:
          if ((fds[i].revents & POLLOUT) != 0) Write(it->first);
          if ((fds[i].revents & ~POLLOUT) != 0 && connections_.count(ids[i - 3]) != 0) {
            ReadStream(ids[i - 3]);
          }
          break;
        case State::kLingering:
          Linger(it->first);
          break;
        case State::kHandler:
          break;
      }
    }
    now = absl::Now();
    std::vector<uint64_t> expired;
    for (const auto& [id, connection] : connections_) {
      if (connection.deadline <= now) expired.push_back(id);
    }
    for (uint64_t id : expired) Expire(id);
    if ((fds[2].revents & POLLIN) != 0) AcceptAll();
  }
  for (auto& [id, connection] : connections_) ::close(connection.fd);
  connections_.clear();
}

void HttpServer::Impl::AcceptAll() {
  // At most a connection table's worth per round, so that the connections
  // already open are read in between.
  for (int i = 0; i < options_.max_connections; ++i) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        accept_paused_until_ = absl::Now() + kAcceptBackoff;  // out of descriptors or memory
      }
      return;
    }
    if (connections_.size() >= static_cast<size_t>(options_.max_connections) && !EvictOne()) {
      CloseBusy(fd);
      continue;
    }
    uint64_t id = next_id_++;
    Connection& connection = connections_[id];
    connection.fd = fd;
    connection.deadline = absl::Now() + options_.head_timeout;
    // The head is often in already: a probe is then answered right here.
    ReadHead(id);
  }
}

bool HttpServer::Impl::EvictOne() {
  auto oldest_in = [this](State state) {
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      if (it->second.state == state) return it;
    }
    return connections_.end();
  };
  if (auto it = oldest_in(State::kLingering); it != connections_.end()) {
    Close(it->first);
    return true;
  }
  if (auto it = oldest_in(State::kHead); it != connections_.end()) {
    CloseBusy(it->second.fd);
    connections_.erase(it);
    return true;
  }
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (it->second.state == State::kHandler && CancelJob(it->first)) {
      CloseBusy(it->second.fd);
      connections_.erase(it);
      return true;
    }
  }
  for (State state : {State::kWriting, State::kStreaming}) {
    if (auto it = oldest_in(state); it != connections_.end()) {
      ResetAndClose(it->second.fd);
      connections_.erase(it);
      return true;
    }
  }
  return false;
}

void HttpServer::Impl::ReadHead(uint64_t id) {
  Connection& connection = connections_.at(id);
  const internal::RequestHeadLimits limits{options_.max_head_bytes, options_.max_target_bytes};
  char buffer[4096];
  while (true) {
    // Never more than the head may take: the parser needs no more to judge.
    size_t room = std::min(sizeof(buffer), options_.max_head_bytes - connection.in.size());
    ssize_t n = room == 0 ? 0 : ::recv(connection.fd, buffer, room, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (room > 0 && n <= 0) {  // the client went away, or reset
      Close(id);
      return;
    }
    connection.in.append(buffer, n);
    internal::ParsedHead head = internal::ParseRequestHead(connection.in, limits);
    if (head.status == 0) continue;
    if (head.status == 200) {
      Dispatch(id, head);
    } else if (head.status == 405) {
      RespondError(id, 405, "Allow: GET, HEAD\r\n");
    } else {
      RespondError(id, head.status);
    }
    return;
  }
}

void HttpServer::Impl::Dispatch(uint64_t id, const internal::ParsedHead& head) {
  Request request{head.method, head.path, head.query, head.authorization, head.last_event_id};
  bool head_only = request.method == "HEAD";
  std::shared_ptr<const Route> route;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = routes_.find(request.path);
    if (it != routes_.end()) {
      route = it->second;
    } else {
      // The longest prefix: the last of the keys not after the path that
      // the path starts with.
      for (auto p = prefix_routes_.upper_bound(request.path); p != prefix_routes_.begin();) {
        --p;
        if (absl::StartsWith(request.path, p->first)) {
          route = p->second;
          break;
        }
      }
    }
    if (route != nullptr && !route->probe) {
      jobs_.push_back(Job{id, std::move(request), head_only, std::move(route)});
      Connection& connection = connections_.at(id);
      connection.state = State::kHandler;
      connection.deadline = absl::InfiniteFuture();
      jobs_ready_.notify_one();
      return;
    }
  }
  if (route == nullptr) {
    Respond(id, Response{404, "text/plain; charset=utf-8", "Not Found\n"}, head_only, "");
    return;
  }
  Respond(id, route->handler(request), head_only, "");
}

void HttpServer::Impl::Respond(uint64_t id, Response response, bool head_only,
                               absl::string_view extra_headers) {
  if (response.status < 100 || response.status > 999) response.status = 500;
  Connection& connection = connections_.at(id);
  connection.state = State::kWriting;
  connection.deadline = absl::Now() + options_.write_timeout;
  connection.in.clear();
  connection.out = SerializeResponse(response, head_only, extra_headers);
  Write(id);
}

void HttpServer::Impl::RespondError(uint64_t id, int status, absl::string_view extra_headers) {
  Respond(id,
          Response{status, "text/plain; charset=utf-8",
                   absl::StrCat(internal::ReasonPhrase(status), "\n")},
          false, extra_headers);
}

void HttpServer::Impl::Write(uint64_t id) {
  Connection& connection = connections_.at(id);
  const bool streaming = connection.state == State::kStreaming;
  while (true) {
    while (connection.sent < connection.out.size()) {
      ssize_t n = ::send(connection.fd, connection.out.data() + connection.sent,
                         connection.out.size() - connection.sent, MSG_NOSIGNAL);
      if (n > 0) {
        connection.sent += n;
        // A stream has no end to meet: it must only keep moving.
        if (streaming) connection.deadline = absl::Now() + options_.write_timeout;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        Close(id);
        return;
      }
    }
    if (!streaming) break;
    connection.out.clear();
    connection.sent = 0;
    ResponseStream::Taken taken = connection.stream.get()->Take(&connection.out);
    if (taken.overflowed) {  // too slow to read its stream
      ResetAndClose(connection.fd);
      connections_.erase(id);
      return;
    }
    if (!connection.out.empty()) continue;
    if (taken.finished) break;
    connection.deadline = connection.keepalive.empty()
                              ? absl::InfiniteFuture()
                              : absl::Now() + options_.stream_keepalive_interval;
    return;
  }
  ::shutdown(connection.fd, SHUT_WR);
  connection.out = std::string();
  connection.state = State::kLingering;
  connection.deadline = absl::Now() + kLingerTime;
}

void HttpServer::Impl::ExpireStream(uint64_t id) {
  Connection& connection = connections_.at(id);
  if (connection.sent < connection.out.size()) {  // the client stopped reading
    ResetAndClose(connection.fd);
    connections_.erase(id);
    return;
  }
  connection.out = connection.keepalive;
  connection.sent = 0;
  Write(id);
}

void HttpServer::Impl::ReadStream(uint64_t id) {
  Connection& connection = connections_.at(id);
  char buffer[4096];
  // A bounded read per round, so a client sending without end cannot keep
  // the loop here.
  for (int round = 0; round < 16; ++round) {
    ssize_t n = ::recv(connection.fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) break;  // the client closed (or reset) its side
    if (round == 15) return;
  }
  Close(id);
}

void HttpServer::Impl::Linger(uint64_t id) {
  Connection& connection = connections_.at(id);
  char buffer[4096];
  while (true) {
    ssize_t n = ::recv(connection.fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) break;
    connection.drained += n;
    if (connection.drained >= kMaxLingerBytes) break;
  }
  Close(id);
}

void HttpServer::Impl::Expire(uint64_t id) {
  Connection& connection = connections_.at(id);
  switch (connection.state) {
    case State::kHead:
      if (connection.in.empty()) {
        Close(id);
      } else {
        RespondError(id, 408);
      }
      return;
    case State::kWriting:
      ResetAndClose(connection.fd);
      connections_.erase(id);
      return;
    case State::kStreaming:
      ExpireStream(id);
      return;
    case State::kLingering:
    case State::kHandler:  // never: its deadline is infinite
      Close(id);
      return;
  }
}

void HttpServer::Impl::Close(uint64_t id) {
  auto it = connections_.find(id);
  ::close(it->second.fd);
  connections_.erase(it);
}

void HttpServer::Impl::TakeFinished() {
  uint64_t count;
  (void)::read(wake_fd_, &count, sizeof(count));
  std::vector<Finished> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished.swap(finished_);
  }
  for (Finished& answer : finished) {
    auto it = connections_.find(answer.connection);
    // A stream whose connection is gone closes with its answer.
    if (it == connections_.end() || it->second.state != State::kHandler) continue;
    if (answer.stream.get() == nullptr) {
      Respond(answer.connection, std::move(answer.response), answer.head_only, "");
      continue;
    }
    Connection& connection = it->second;
    connection.state = State::kStreaming;
    connection.in.clear();
    connection.out = SerializeResponse(answer.response, /*head_only=*/true, "");
    connection.sent = 0;
    connection.deadline = absl::Now() + options_.write_timeout;
    connection.stream = std::move(answer.stream);
    connection.keepalive = std::move(answer.response.keepalive);
    Write(answer.connection);
  }
  // Streams with bytes written since: sent now unless their client is
  // still reading earlier ones (then POLLOUT brings them).
  std::vector<uint64_t> ready;
  for (const auto& [id, connection] : connections_) {
    if (connection.state == State::kStreaming && connection.sent == connection.out.size()) {
      ready.push_back(id);
    }
  }
  for (uint64_t id : ready) {
    if (connections_.count(id) != 0) Write(id);
  }
}

void HttpServer::Impl::Wake() {
  uint64_t one = 1;
  while (::write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

std::shared_ptr<ResponseStream> HttpServer::Impl::OpenStream(Finished& answer) {
  if (answer.head_only) {  // the head says what a GET would stream
    return nullptr;
  }
  const int max_streams = std::min(options_.max_streams, options_.max_connections / 2);
  if (open_streams_.fetch_add(1, std::memory_order_relaxed) >= max_streams) {
    open_streams_.fetch_sub(1, std::memory_order_relaxed);
    answer.response =
        Response{503, "text/plain; charset=utf-8", "too many open streams; retry later\n"};
    return nullptr;
  }
  auto stream =
      std::make_shared<ResponseStream>(options_.max_stream_queued_bytes, [this] { Wake(); });
  answer.stream = StreamHandle(stream, &open_streams_);
  return stream;
}

void HttpServer::Impl::RunHandlers() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      jobs_ready_.wait(lock, [this] { return stopped_ || !jobs_.empty(); });
      if (stopped_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Finished answer{job.connection, job.route->handler(job.request), job.head_only};
    std::shared_ptr<ResponseStream> stream;
    std::function<void(std::shared_ptr<ResponseStream>)> producer;
    if (answer.response.stream) stream = OpenStream(answer);
    // A copy: the answer's own says the head is a stream's.
    if (stream != nullptr) producer = answer.response.stream;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) {
        answer.stream = StreamHandle();  // closed: the producer's writes fail
      } else {
        finished_.push_back(std::move(answer));
      }
    }
    Wake();
    // After the answer is on its way, so that a producer that writes its
    // whole body here (waiting for the client) is read from meanwhile.
    if (producer) producer(std::move(stream));
  }
}

bool HttpServer::Impl::CancelJob(uint64_t connection) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if (it->connection == connection) {
      jobs_.erase(it);
      return true;
    }
  }
  return false;
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(std::string path, Handler handler) {
  impl_->Register(std::move(path), std::move(handler), /*probe=*/false, /*prefix=*/false);
}

void HttpServer::HandlePrefix(std::string prefix, Handler handler) {
  impl_->Register(std::move(prefix), std::move(handler), /*probe=*/false, /*prefix=*/true);
}

void HttpServer::HandleProbe(std::string path, Handler handler) {
  impl_->Register(std::move(path), std::move(handler), /*probe=*/true, /*prefix=*/false);
}

absl::Status HttpServer::Start(absl::string_view address) { return impl_->Start(address); }

int HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace wm::observability
