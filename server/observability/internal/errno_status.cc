#include "server/observability/internal/errno_status.h"

#include <string.h>

#include "absl/strings/str_cat.h"

namespace wm::observability::internal {

absl::Status ErrnoStatus(int error, absl::string_view what) {
  char buffer[256];
  // GNU strerror_r: returns the message, not necessarily in `buffer`.
  return absl::Status(absl::ErrnoToStatusCode(error),
                      absl::StrCat(what, ": ", strerror_r(error, buffer, sizeof(buffer))));
}

}  // namespace wm::observability::internal
