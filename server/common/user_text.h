#ifndef WM_SERVER_COMMON_USER_TEXT_H_
#define WM_SERVER_COMMON_USER_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace wm {

// The most bytes of one piece of caller text that an error message quotes.
inline constexpr size_t kQuotedTextMaxBytes = 64;

// Caller text quoted for an error message: `"text"`, or, past
// kQuotedTextMaxBytes, its first bytes (cut at a UTF-8 boundary), an
// ellipsis and its size: `"abc…" (204800 bytes)`. Quotes, backslashes and
// control characters are escaped. Every error that echoes what a caller sent
// goes through it, so no message grows with the input: gRPC carries a status
// message in the trailers, whose size is capped at a few KiB, and a longer
// one reaches the client as RESOURCE_EXHAUSTED instead of the real error.
std::string QuoteUserText(absl::string_view text);

}  // namespace wm

#endif  // WM_SERVER_COMMON_USER_TEXT_H_
