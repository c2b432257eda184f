#ifndef WM_CLIENT_WMCTL_COMPLETION_H_
#define WM_CLIENT_WMCTL_COMPLETION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace wm::wmctl {

// The protocol between the shell scripts and `wmctl __complete WORD...
// CURRENT` (the words after "wmctl" up to the cursor, the last being the
// word under completion, "" after a space): it prints the candidates that
// start with CURRENT, one per line, and exits 0; it exits
// kCompleteFilesExit when the shell should complete file names instead. It
// never fails: a daemon it cannot reach gives no candidates.
inline constexpr int kCompleteFilesExit = 10;

// The completion script for bash, zsh or fish; empty for another shell.
std::string CompletionScript(absl::string_view shell);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_COMPLETION_H_
