#ifndef WM_SERVER_COMMON_JSON_READER_H_
#define WM_SERVER_COMMON_JSON_READER_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"

namespace wm {

// The deepest nesting of arrays and objects any JSON or YAML document from
// outside may have: 100, the smallest limit among what documents go
// through. protobuf's JSON parser (JsonStringToMessage into a
// google.protobuf.Struct, as MutatePodSpecs returns the mutated object)
// stops at 100 levels, and libjq 1.6's parser at 256 stack slots, where an
// object level takes two (its key stays on the stack), so at 128 object
// levels. Any document within the bound is one the jq workers can load and
// protobuf can convert, and every recursive walk of a Json (dump, diff)
// stays far from the end of a thread's stack. Real Kubernetes objects nest
// about 20 levels.
inline constexpr size_t kMaxJsonDepth = 100;

struct JsonLimits {
  size_t max_depth = kMaxJsonDepth;
};

// Parses one JSON text (RFC 8259; no comments, nothing after the value but
// whitespace) without recursion, refusing nesting deeper than
// `limits.max_depth`. Numbers keep nlohmann's types (int64, uint64, else
// double); a number beyond a double's range is an error rather than an
// infinity. Errors are INVALID_ARGUMENT with a byte offset, for the caller
// to prefix with the field the text came from:
//   "nesting deeper than 100 levels at byte 1234"
//   "number out of range at byte 17: 1e400"
//   "invalid JSON at byte 5: syntax error while parsing value - ..."
absl::StatusOr<Json> ParseJson(absl::string_view text, JsonLimits limits = {});

}  // namespace wm

#endif  // WM_SERVER_COMMON_JSON_READER_H_
