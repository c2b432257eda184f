#ifndef WM_SERVER_EXPRESSIONS_NATIVE_PROGRAM_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_PROGRAM_H_

// The compiled form of a jq program: a tree of operations with every name
// resolved (compiler.h builds it from the syntax tree, interpreter.h runs
// it). Immutable once built, so one tree serves any number of threads.
//
// Names resolve lexically at compile time to a distance: how many frames
// up the runtime environment (interpreter.h's Frame chain) the binding
// sits. Each binding construct pushes exactly the frames its scope entry
// promised: `as` one per pattern variable, `def` one, a call one per
// filter parameter plus one per `$param`, `label` one. Builtins written in
// C++ resolve to a function pointer; those written in jq (prelude.h) are
// ordinary definitions in a scope every program starts from.

#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "server/common/json.h"
#include "server/expressions/native/ast.h"

namespace wm::expressions::native {

class Interpreter;
struct Frame;
struct Op;
struct PathNode;
class Value;

// What a generator tells its producer after each output, and how an
// evaluation ends: keep going; stop because a `break` (or an internal
// early stop such as limit's) unwinds to a label; or fail with the error
// held by the interpreter.
enum class Flow : uint8_t { kContinue, kBreak, kError };

// A function implemented in C++. `call` is the calling operation (its
// children are the arguments, evaluated in `env`); `path` is non-null when
// the caller tracks paths (interpreter.h).
using NativeFunction = Flow (*)(Interpreter& interpreter, const Op& call, const Frame* env,
                                const Value& input, const PathNode* path,
                                absl::FunctionRef<Flow(const Value&, const PathNode*)> emit);

enum class OpKind : uint8_t {
  kIdentity,       // .
  kRecurseAll,     // ..
  kIndex,          // [target, key]
  kSlice,          // [target, from?, to?]
  kIterate,        // [target]
  kConstant,       // constant
  kTemplate,       // text: format ("" for none); [part...]: kConstant strings and expressions
  kFormat,         // text: "@base64" applied to `.`
  kArray,          // [query?]
  kObject,         // [key, value?, key, value?...] in pairs; value null means shorthand
  kVariable,       // depth
  kCallDefined,    // function, depth (to its definition's frame); [argument...]
  kCallParameter,  // depth (to the closure's frame)
  kCallNative,     // native; [argument...]
  kNegate,         // [operand]
  kPipe,           // [left, right]
  kComma,          // [left, right]
  kAlternative,    // [left, right]
  kAnd,
  kOr,
  kBinary,   // binary: the operator; [left, right]
  kUpdate,   // binary: kAssign, kUpdate or an arithmetic kind; [path, value]
  kBind,     // patterns, slots; [source, body]
  kReduce,   // patterns[0], slots; [source, init, update]
  kForeach,  // patterns[0], slots; [source, init, update, extract?]
  kIf,       // [condition, then, else?]
  kTry,      // [body, handler?]
  kLabel,    // [body]
  kBreak,    // depth (to the label's frame)
  kDefine,   // function (owned); [rest]
  // fold; [pipe]: `[query] | f` (the pipe as compiled) where f reduces the
  // array to what the query's outputs decide alone (Fold): folds the
  // outputs as they come instead of building their array, when paths are
  // not tracked.
  kFold,
};

// What a kFold keeps of its query's outputs, for `[query] | f` with f:
enum class Fold : uint8_t {
  kLength,  // length: how many
  kFirst,   // first, .[0]: the first (null for none)
  kLast,    // last, .[-1]: the last (null for none)
  kAny,     // any: whether one is truthy
  kAll,     // all: whether all are
  kMin,     // min: the first least (null for none)
  kMax,     // max: the last greatest (null for none)
  // add: numbers and nulls summed as they come; from the first other
  // output on, the sum so far and the rest are gathered into an array for
  // `add` itself (its result is a left fold, so that is the same sum).
  kAdd,
};

// A destructuring pattern. Variables are numbered slots of the binding
// construct (all patterns of `?//` alternatives share one numbering).
struct Pattern {
  enum class Kind : uint8_t { kVariable, kArray, kObject };
  struct Entry {
    std::unique_ptr<Op> key;         // evaluated against the input of the binding
    int key_slot = -1;               // `$name` keys bind the value to this slot
    std::unique_ptr<Pattern> value;  // may be null for `{$name}`
  };
  Kind kind = Kind::kVariable;
  int slot = -1;
  std::vector<Pattern> elements;
  std::vector<Entry> entries;
};

struct FunctionDefinition {
  std::string name;
  // Whether the body is single-valued (Op::single); false for a function
  // that calls itself.
  bool single = false;
  // Per parameter: whether it is a `$value` parameter (it then also binds
  // a value frame after its closure frame).
  std::vector<bool> value_params;
  std::unique_ptr<Op> body;
};

struct Op {
  OpKind kind = OpKind::kIdentity;
  NodeKind binary = NodeKind::kAdd;  // kBinary, kUpdate
  Fold fold = Fold::kLength;         // kFold
  bool optional = false;             // kIndex, kSlice, kIterate: a `?` step
  // kIndex: how many steps `.a.b.c` of constant names from `.` this one
  // ends (3 for `.c` there), at most kMaxNameSteps; 0 for any other index.
  // The interpreter's direct lane walks such a chain in one loop.
  uint8_t name_steps = 0;
  static constexpr uint8_t kMaxNameSteps = 8;
  // kFold: its query is `s | select(c)` with c single-valued (the builtin
  // select): the fold tests c itself (compiler.cc's MarkSingle sets it).
  bool select_filter = false;
  bool text_run = false;  // kConstant: a literal run of a kTemplate
  // Whether the operation has exactly one output (or fails) for any input
  // when paths are not tracked: `.a.b // 0`, `[f] | length`, `x == y`.
  // Such operations run in the interpreter's direct lane (EvalOne), which
  // returns the value instead of calling a continuation. Set by the
  // compiler (compiler.cc's MarkSingle says which kinds qualify).
  bool single = false;
  int depth = 0;
  int slots = 0;  // kBind, kReduce, kForeach: variables bound
  Span span;
  std::string text;
  Json constant;
  const FunctionDefinition* function = nullptr;
  std::unique_ptr<FunctionDefinition> owned_function;
  NativeFunction native = nullptr;
  const char* native_name = nullptr;
  std::vector<Pattern> patterns;
  std::vector<std::unique_ptr<Op>> children;

  // The i-th child, or null where the kind's child is optional (an `if`
  // without `else`, a `try` without a handler, `[]`).
  const Op* child(size_t i) const { return i < children.size() ? children[i].get() : nullptr; }
  // The i-th child where the kind always has one (the comments of OpKind):
  // child(i) without its bound check, which the interpreter would pay on
  // nearly every step. REQUIRES: i < children.size().
  const Op& operand(size_t i) const { return *children[i]; }
};

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_PROGRAM_H_
