#ifndef WM_SERVER_EXPRESSIONS_NATIVE_PRELUDE_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_PRELUDE_H_

#include "absl/strings/string_view.h"

namespace wm::expressions::native {

// The builtins written in jq, with the meanings gojq's builtin.jq gives
// them (builtins.h has those written in C++). The two lists together are
// gojq v0.12.19's builtins minus what a definition cannot use: input and
// inputs, $ENV and env, date and time functions, streaming (tostream,
// fromstream, truncate_stream), JOIN, halt, and the math library beyond
// floor, ceil, round, sqrt and fabs. Those, and names gojq lacks too
// (toarray, keys_unsorted), are compile errors naming the function.
absl::string_view PreludeSource();

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_PRELUDE_H_
