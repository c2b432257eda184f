#include "server/common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace wm {
namespace {

absl::Status ErrnoError(int error_number, const std::string& what) {
  char buffer[256];
  // GNU strerror_r: returns the message, not necessarily in `buffer`.
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat(what, ": ", strerror_r(error_number, buffer, sizeof buffer)));
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("open failed: ", path));
  std::string content;
  char buffer[8192];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      close(fd);
      return ErrnoError(error, absl::StrCat("read failed: ", path));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
    if (content.size() > max_bytes) {
      close(fd);
      return absl::ResourceExhaustedError(
          absl::StrCat("read failed: ", path, ": larger than ", max_bytes, " bytes"));
    }
  }
  close(fd);
  return content;
}

absl::Status FileErrorAs(const absl::Status& error, absl::string_view what,
                         absl::string_view path) {
  // The reason: what follows "open failed: PATH: " or "read failed: PATH: ".
  absl::string_view reason = error.message();
  const std::string prefix = absl::StrCat(path, ": ");
  if (size_t at = reason.find(prefix); at != absl::string_view::npos) {
    reason.remove_prefix(at + prefix.size());
  }
  return absl::Status(error.code(), absl::StrCat(what, " ", path, ": ", reason));
}

}  // namespace wm
