#include "server/kube/testing/scripted_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "server/kube/testing/loopback.h"

namespace wm::kube::testing {

std::string ScriptedServer::Request::Query(const std::string& name) const {
  size_t q = path.find('?');
  if (q == std::string::npos) return "";
  for (absl::string_view pair : absl::StrSplit(absl::string_view(path).substr(q + 1), '&')) {
    std::pair<std::string, std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first == name) {
      return absl::StrReplaceAll(kv.second, {{"%2F", "/"}, {"%3D", "="}, {"%2C", ","}});
    }
  }
  return "";
}

void ScriptedServer::Responder::Head(
    int status, const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string head = absl::StrCat("HTTP/1.1 ", status, " Scripted\r\nConnection: close\r\n");
  for (const auto& [name, value] : headers) absl::StrAppend(&head, name, ": ", value, "\r\n");
  head += "\r\n";
  Write(head);
}

bool ScriptedServer::Responder::Write(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void ScriptedServer::Responder::Sleep(absl::Duration duration) { absl::SleepFor(duration); }

ScriptedServer::ScriptedServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ListenOnLoopback(&port_);
  accept_thread_ = std::thread([this] { Accept(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_.store(true);
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> connections;
  {
    std::unique_lock lock(mu_);
    connections.swap(connections_);
  }
  for (std::thread& t : connections) t.join();
}

std::string ScriptedServer::url() const { return absl::StrCat("http://127.0.0.1:", port_); }

std::vector<ScriptedServer::Request> ScriptedServer::requests() const {
  std::unique_lock lock(mu_);
  return requests_;
}

bool ScriptedServer::WaitForRequests(size_t count, absl::Duration timeout) const {
  std::unique_lock lock(mu_);
  return arrived_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                           [&] { return requests_.size() >= count; });
}

void ScriptedServer::Accept() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::unique_lock lock(mu_);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void ScriptedServer::Serve(int fd) {
  std::string data;
  char buffer[4096];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      ::close(fd);
      return;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  Request request;
  std::vector<std::string> lines = absl::StrSplit(data.substr(0, header_end), "\r\n");
  std::vector<std::string> first = absl::StrSplit(lines[0], ' ');
  request.method = first.size() > 0 ? first[0] : "";
  request.path = first.size() > 1 ? first[1] : "";
  size_t content_length = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(lines[i], absl::MaxSplits(':', 1));
    std::string name = absl::AsciiStrToLower(kv.first);
    std::string value(absl::StripAsciiWhitespace(kv.second));
    if (name == "content-length") (void)absl::SimpleAtoi(value, &content_length);
    request.headers.emplace_back(name, value);
  }
  request.body = data.substr(header_end + 4);
  while (request.body.size() < content_length) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    request.body.append(buffer, static_cast<size_t>(n));
  }
  {
    std::unique_lock lock(mu_);
    requests_.push_back(request);
    arrived_.notify_all();
  }
  Responder responder(fd);
  handler_(request, responder);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace wm::kube::testing
