#ifndef WM_CLIENT_WMCTL_ERRORS_H_
#define WM_CLIENT_WMCTL_ERRORS_H_

#include <ostream>

#include "absl/strings/string_view.h"

namespace wm::wmctl {

// How every wmctl command reports a failure: one "error: ..." line on
// stderr, and kli's exit code (see RunWmctl).

// Prints "error: MESSAGE" and returns `code`.
int Fail(std::ostream& err, int code, absl::string_view message);

// A usage error: prints the message with a pointer to `wmctl help` and
// returns 2.
int UsageError(std::ostream& err, absl::string_view message);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_ERRORS_H_
