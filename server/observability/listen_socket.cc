#include "server/observability/listen_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/observability/internal/errno_status.h"

namespace wm::observability {
namespace {

using internal::ErrnoStatus;

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
      ::listen(fd, SOMAXCONN) != 0) {
    *error = errno;
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

absl::StatusOr<ListeningSocket> ListenTcp(absl::string_view address) {
  ListenAddress parsed;
  if (absl::Status status = ParseListenAddress(address, &parsed); !status.ok()) return status;
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
  return ListeningSocket{fd, ntohs(bound.ss_family == AF_INET6
                                       ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                       : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port)};
}

}  // namespace wm::observability
