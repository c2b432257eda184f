#ifndef WM_SERVER_EXPRESSIONS_NATIVE_PRELUDE_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_PRELUDE_H_

#include "absl/strings/string_view.h"

namespace wm::expressions::native {

// The builtins written in jq, with the meanings gojq's builtin.jq gives
// them (builtins.h has those written in C++). Not on the list, so a
// compile error: input/inputs/$ENV/env (no other inputs and no
// environment), date and time functions, streaming (tostream, fromstream,
// truncate_stream), getpath/2, SQL-style INDEX/IN helpers beyond IN/1, and
// ltrimstr-like functions gojq lacks.
absl::string_view PreludeSource();

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_PRELUDE_H_
