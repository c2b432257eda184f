#ifndef WM_SERVER_KUBE_AUTH_INTERNAL_H_
#define WM_SERVER_KUBE_AUTH_INTERNAL_H_

// Helpers shared by the files of this directory; not part of its API.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wm::kube::internal {

// `path` when absolute or empty, else `dir`/`path`.
std::string ResolvePath(absl::string_view dir, absl::string_view path);

// What a finished child process left behind.
struct ProcessResult {
  bool exited = false;  // false: killed by `signal`
  int exit_code = 0;
  int signal = 0;
  std::string out;
  std::string err;  // at most max_err bytes; the rest is dropped
};

struct ProcessLimits {
  absl::Duration timeout = absl::Seconds(60);
  size_t max_out = 1 << 20;
  size_t max_err = 64 << 10;
};

// Runs `executable` (a path; no $PATH lookup) with argv and a complete
// environment ("NAME=value" entries), stdin from /dev/null, in a process
// group of its own. Fails with DeadlineExceeded when it runs past the
// timeout and ResourceExhausted when stdout exceeds max_out; the whole
// process group is killed in both cases. A spawn failure keeps the errno's
// code (NotFound: no such file).
absl::StatusOr<ProcessResult> RunProcess(const std::string& executable,
                                         const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env,
                                         const ProcessLimits& limits);

}  // namespace wm::kube::internal

#endif  // WM_SERVER_KUBE_AUTH_INTERNAL_H_
