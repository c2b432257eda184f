#ifndef WM_SERVER_EXPRESSIONS_NATIVE_COMPILER_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_COMPILER_H_

// Compiles a syntax tree (ast.h) into operations (program.h), resolving
// every variable, function and label, on top of the prelude: the builtins
// written in jq (prelude.h). What the engine does not support is a compile
// error naming it ("function not defined: input/0", "format not defined:
// @base32"), as gojq reports undefined names.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/expressions/native/ast.h"
#include "server/expressions/native/interpreter.h"
#include "server/expressions/native/program.h"

namespace wm::expressions::native {

// The builtins defined in jq, compiled once, and the chain of frames their
// definitions occupy at run time (empty frames: a definition's frame only
// marks its place in the chain). Immutable; shared by every program.
class Prelude {
 public:
  // Compiles prelude.h's source. Fails only on a defect of that source.
  static absl::StatusOr<std::unique_ptr<const Prelude>> Build();

  // The environment every program runs in.
  const Frame* env() const { return frames_.empty() ? nullptr : &frames_.back(); }

  struct Entry {
    std::string name;
    int arity;
    const FunctionDefinition* function;
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<std::unique_ptr<Op>> ops_;
  std::vector<Entry> entries_;
  std::vector<Frame> frames_;
};

// Compiles `tree`, which runs in `prelude.env()`. Errors are
// InvalidArgument with gojq's wording.
absl::StatusOr<std::unique_ptr<const Op>> Compile(const Node& tree, const Prelude& prelude);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_COMPILER_H_
