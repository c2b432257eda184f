#ifndef WM_SERVER_COMMON_JSON_STRING_H_
#define WM_SERVER_COMMON_JSON_STRING_H_

// JSON string literals, written the one way every layer writes them: as
// gojq's encoder does (encoder.go), because the jq engine's `tojson` and
// string interpolation must match it byte for byte, and the daemon's other
// JSON (objects it serializes, expressions it prints) then reads the same.

#include <cstddef>
#include <string>
#include <string_view>

namespace wm {

// Appends `s` as a JSON string literal, quotes included. Escapes only '"',
// '\\', control characters and DEL (\b \f \n \r \t, the others \u00XX) and
// each byte of invalid UTF-8 (as \ufffd, so the output is always valid
// UTF-8); '<', '>', '&', U+2028 and U+2029 stay as they are.
void AppendJsonString(std::string_view s, std::string& out);

// The length of the valid multi-byte UTF-8 sequence that starts at s[i], or
// 0 when none does (an ASCII byte, or invalid by Go's utf8.DecodeRuneInString
// rules: no overlong forms, no surrogates, nothing past U+10FFFF).
// REQUIRES: i < s.size().
size_t Utf8SequenceLength(std::string_view s, size_t i);

}  // namespace wm

#endif  // WM_SERVER_COMMON_JSON_STRING_H_
