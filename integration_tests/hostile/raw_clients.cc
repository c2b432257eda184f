#include "integration_tests/hostile/raw_clients.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "grpcpp/generic/generic_stub.h"

namespace wm::hostile {
namespace {

// Waits for the next completion of `cq` (every operation below is waited
// for before the next starts, so the tag is not needed).
bool Await(grpc::CompletionQueue& cq) {
  void* tag = nullptr;
  bool ok = false;
  return cq.Next(&tag, &ok) && ok;
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices)
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// "HTTP/1.1 404 Not Found\r\n..." -> 404; 0 when the reply has no status line.
int StatusOf(const std::string& reply) {
  if (!absl::StartsWith(reply, "HTTP/1.")) return 0;
  size_t space = reply.find(' ');
  int status = 0;
  if (space == std::string::npos || reply.size() < space + 4) return 0;
  return absl::SimpleAtoi(reply.substr(space + 1, 3), &status) ? status : 0;
}

}  // namespace

RpcResult CallRaw(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                  const std::string& request, absl::Duration deadline, int max_responses,
                  const Metadata& metadata) {
  RpcResult result;
  absl::Time start = absl::Now();
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(start + deadline));
  for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, method, &cq);
  call->StartCall(nullptr);
  if (Await(cq)) {
    grpc::Slice slice(request);
    grpc::ByteBuffer message(&slice, 1);
    call->Write(message, nullptr);
    if (Await(cq)) {
      call->WritesDone(nullptr);
      Await(cq);
    }
    while (static_cast<int>(result.responses.size()) < max_responses) {
      grpc::ByteBuffer response;
      call->Read(&response, nullptr);
      if (!Await(cq)) break;
      result.responses.push_back(Flatten(response));
    }
    // A stream still open after the answers wanted is cancelled (a unary
    // call has ended after its one answer).
    if (max_responses > 1 && static_cast<int>(result.responses.size()) == max_responses) {
      context.TryCancel();
    }
  }
  call->Finish(&result.status, nullptr);
  Await(cq);
  result.elapsed = absl::Now() - start;
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
  return result;
}

HttpResult ExchangeHttp(int port, const std::string& request, absl::Duration deadline) {
  HttpResult result;
  absl::Time start = absl::Now();
  absl::Time end = start + deadline;
  int fd = ConnectLoopback(port);
  if (fd < 0) return result;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  // Sends while the server reads and reads what it answers meanwhile: a
  // server may answer (431) and close before the whole request is sent.
  size_t sent = 0;
  bool sending = true;
  while (absl::Now() < end) {
    pollfd p{fd, static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0};
    int timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(end - absl::Now())) + 1;
    if (poll(&p, 1, timeout_ms) <= 0) continue;
    if (sending && (p.revents & POLLOUT)) {
      ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += n;
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || sent == request.size()) sending = false;
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[4096];
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        result.reply.append(buffer, n);
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        break;
      }
    }
  }
  close(fd);
  result.status = StatusOf(result.reply);
  result.elapsed = absl::Now() - start;
  return result;
}

IdleConnection::IdleConnection(int port, const std::string& prefix) : fd_(ConnectLoopback(port)) {
  if (fd_ >= 0 && !prefix.empty()) send(fd_, prefix.data(), prefix.size(), MSG_NOSIGNAL);
}

IdleConnection::~IdleConnection() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace wm::hostile
