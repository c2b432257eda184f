#ifndef WM_SERVER_COMMON_FILE_H_
#define WM_SERVER_COMMON_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm {

// The whole content of a file of at most `max_bytes` (16 MiB unless said).
// Errors read "open failed: <path>: <reason>" (or "read failed: ...") with
// the errno's status code (NotFound for a missing file, PermissionDenied),
// and ResourceExhausted for a larger file, so callers can prefix the field
// or flag that named the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             size_t max_bytes = size_t{16} << 20);

// ReadFileToString's `error` on `path` in the caller's words, with its
// code: "<what> PATH: <reason>" ("config file /etc/x.yaml: No such file or
// directory", "cannot read in.json: larger than 16777216 bytes").
absl::Status FileErrorAs(const absl::Status& error, absl::string_view what, absl::string_view path);

}  // namespace wm

#endif  // WM_SERVER_COMMON_FILE_H_
