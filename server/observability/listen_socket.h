#ifndef WM_SERVER_OBSERVABILITY_LISTEN_SOCKET_H_
#define WM_SERVER_OBSERVABILITY_LISTEN_SOCKET_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm::observability {

// A listening TCP socket, non-blocking and close-on-exec; the caller owns
// the descriptor.
struct ListeningSocket {
  int fd = -1;
  int port = 0;  // the bound port (the one picked when 0 was asked)
};

// Listens on "HOST:PORT" (an IPv4 literal), "[IPV6]:PORT", or ":PORT"
// (every interface: IPv6 and IPv4, or IPv4 alone where the host has no
// IPv6, as in many containers). InvalidArgument names what is wrong with
// the address; a failing socket call is its errno's status.
absl::StatusOr<ListeningSocket> ListenTcp(absl::string_view address);

}  // namespace wm::observability

#endif  // WM_SERVER_OBSERVABILITY_LISTEN_SOCKET_H_
