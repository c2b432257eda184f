#ifndef WM_SERVER_EXPRESSIONS_NATIVE_BUILTINS_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_BUILTINS_H_

// The builtins implemented in C++ (the rest are jq, in prelude.h), with
// gojq's semantics and error texts. Regular expressions run on RE2, in
// linear time; RE2 lacks backreferences and lookaround, which are then a
// runtime error naming the pattern.

#include <cstdint>

#include "absl/strings/string_view.h"
#include "server/expressions/native/program.h"

namespace wm::expressions::native {

// The native `name/arity`, or null.
NativeFunction FindNative(absl::string_view name, int arity);
// A stable "name/arity" for error messages. REQUIRES: FindNative found it.
const char* NativeName(absl::string_view name, int arity);

// How many outputs a native has per input, for the interpreter's
// single-value lane (program.h's Op::single).
enum class NativeOutputs : uint8_t {
  kAny,                   // a generator, or a filter that may drop its input
  kOneIfArgumentsAreOne,  // one per combination of its arguments' outputs
  kOne,                   // exactly one, whatever its arguments produce
};
// What the native "name/arity" (NativeName's text) produces; kAny when
// there is no such native.
NativeOutputs OutputsOfNative(absl::string_view name_arity);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_BUILTINS_H_
