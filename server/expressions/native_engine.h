#ifndef WM_SERVER_EXPRESSIONS_NATIVE_ENGINE_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_ENGINE_H_

// The in-process jq engine (server/expressions/native/): gojq's dialect
// and semantics, evaluated on the caller's thread over the loaded
// documents themselves (no serialization, no copies of the input).
//
// Compile costs microseconds per expression; Evaluate takes no lock and
// shares nothing mutable, so any number of threads may Run at once.
// Bounds (EvalLimits plus the native ones below) are checked inside the
// evaluator, and every one ends the evaluation with an error, never the
// process:
//   - max_outputs: the 1000th output is "query results exceed the allowed
//     number 1000" (INVALID_ARGUMENT), as upstream;
//   - max_output_bytes: "query results exceed the allowed size of N bytes";
//   - budget: DEADLINE_EXCEEDED "expression exceeded its evaluation budget
//     of 2s";
//   - built bytes (max_built_bytes): RESOURCE_EXHAUSTED "expression
//     exceeded its memory limit of N MiB";
//   - stack (max_stack_bytes): RESOURCE_EXHAUSTED "expression recursed too
//     deeply (stack bound of N KiB)".
// Bounds are not catchable by `try`.

#include <memory>

#include "absl/status/statusor.h"
#include "server/expressions/engine.h"

namespace wm::expressions {

struct NativeEngineOptions {
  EvalLimits limits;
  // Bytes of values one evaluation may build (strings, arrays, objects,
  // copies made by assignments), charged as built and never refunded.
  size_t max_built_bytes = 64 << 20;
  // Bytes of the evaluating thread's stack one evaluation may use. The
  // threads that evaluate (gRPC's, the index's) have 8 MiB stacks; a
  // sanitizer build's frames are several times larger, so it gets more.
  size_t max_stack_bytes = 1 << 20;
};

absl::StatusOr<std::unique_ptr<Engine>> NewNativeEngine(const NativeEngineOptions& options = {});

}  // namespace wm::expressions

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_ENGINE_H_
