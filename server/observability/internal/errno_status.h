#ifndef WM_SERVER_OBSERVABILITY_INTERNAL_ERRNO_STATUS_H_
#define WM_SERVER_OBSERVABILITY_INTERNAL_ERRNO_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

// A failed system call as a Status, shared by the listening sockets and the
// HTTP server. Not for other layers.
namespace wm::observability::internal {

// The code errno `error` maps to, and "what: <strerror text>" (thread-safe:
// strerror_r).
absl::Status ErrnoStatus(int error, absl::string_view what);

}  // namespace wm::observability::internal

#endif  // WM_SERVER_OBSERVABILITY_INTERNAL_ERRNO_STATUS_H_
