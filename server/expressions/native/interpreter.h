#ifndef WM_SERVER_EXPRESSIONS_NATIVE_INTERPRETER_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_INTERPRETER_H_

// Runs a compiled program (program.h) over one input.
//
// Evaluation is by continuation: Eval(op, env, input, path, emit) calls
// `emit` for each output in order, and each output's consumer runs inside
// that call. So a generator's state lives in its C++ frame, backtracking
// is returning, and an environment (the Frame chain) and the paths being
// tracked are linked lists of stack objects: nothing is allocated for
// bindings, closures or paths. An output's consumer answers kContinue for
// more; kBreak and kError unwind to the label or the `try` that wants them.
//
// The direct lane (EvalOne): an operation the compiler marked single-valued
// (Op::single: `.a.b // 0`, `x == y`, `[f] | length`, `.x as $v | ...`)
// and evaluated without path tracking returns its one output instead of
// calling a continuation, and so do its single-valued children. Most of a
// definition's expressions are such scalar cores around a few generators;
// the lane evaluates them with plain calls. Both lanes share the
// operations' own code (IndexOf, BinaryOf, FoldOf), so they cannot mean
// different things.
//
// Path tracking (`path(f)`, assignments, `paths`, `del`): when `path` is
// non-null, each output comes with its path from the root of the tracking
// expression. Steps (.a, .[i], .[], .., slices, getpath) extend it; other
// operations keep it when their output is the input itself (gojq's
// "path intact" rule: the same container, or an equal scalar) and
// otherwise mark it invalid, which the next step or the end of `path()`
// reports as gojq does ("invalid path against: ...").
//
// Bounds (EvalBounds), all checked inside the evaluator so that no program
// can crash, hang or exhaust the process: a step budget with the wall
// clock read every 1024 steps; a stack bound measured in bytes of the
// evaluating thread's stack (recursion in the program is recursion here);
// a bound on the bytes of values built (strings, arrays, objects), charged
// as they are built and never refunded, so it bounds the total work of
// building as well as peak memory.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/common/json.h"
#include "server/expressions/native/program.h"
#include "server/expressions/native/value.h"

namespace wm::expressions::native {

struct EvalBounds {
  // The evaluation's own time. It runs from its first read of the clock,
  // after kStepsPerClockRead steps (microseconds of work): most evaluations
  // end sooner and never read the clock, a read that would cost more than
  // many of them.
  absl::Duration budget = absl::InfiniteDuration();
  // An end in absolute time besides the budget (a yield point).
  absl::Time deadline = absl::InfiniteFuture();
  // Bytes of this thread's stack the evaluation may use. Threads that run
  // evaluations have at least the default 8 MiB stack.
  size_t max_stack_bytes = 1 << 20;
  // Bytes of values built during the evaluation.
  size_t max_built_bytes = 256 << 20;
};

// One binding of the environment (program.h says which construct pushes
// which). Frames live on the C++ stack of the construct that binds them.
struct Frame {
  const Frame* parent = nullptr;
  Value value;                         // `$name` bindings
  const Op* closure = nullptr;         // filter parameters: the argument...
  const Frame* closure_env = nullptr;  // ...and the caller's environment
};

// The frame `depth` bindings up from `env`.
inline const Frame* FrameAt(const Frame* env, int depth) {
  for (; depth > 0; --depth) env = env->parent;
  return env;
}

// One step of a tracked path, linked to the steps before it.
struct PathNode {
  enum class Kind : uint8_t { kRoot, kInvalid, kKey };
  const PathNode* parent = nullptr;
  Kind kind = Kind::kRoot;
  const Json* key = nullptr;  // kKey: a string, a number or a slice object
};

using Emit = absl::FunctionRef<Flow(const Value&, const PathNode*)>;

class Interpreter {
 public:
  explicit Interpreter(const EvalBounds& bounds);

  // Runs `op` over `input`; the outcome of the last emit or the first
  // error or unhandled break.
  Flow Run(const Op& op, const Frame* env, const Value& input, Emit emit);

  // For operations and natives.
  Flow Eval(const Op& op, const Frame* env, const Value& input, const PathNode* path, Emit emit);
  // The one output of `op` without tracking paths, in `out`; kContinue
  // when there is one. The direct lane: no continuation per step.
  // REQUIRES: op.single; `out` is not `input`.
  Flow EvalOne(const Op& op, const Frame* env, const Value& input, Value& out) {
    // Literals and `.` are no step of their own: the operation that reads
    // them has counted one.
    if (op.kind == OpKind::kConstant) {
      out = Value::Borrowed(op.constant);
      return Flow::kContinue;
    }
    if (op.kind == OpKind::kIdentity) {
      out = input;
      return Flow::kContinue;
    }
    if (CheckBounds() == Flow::kError) return Flow::kError;
    return OneCounted(op, env, input, out);
  }
  // Evaluates without tracking paths (conditions, arguments, keys).
  Flow EvalValue(const Op& op, const Frame* env, const Value& input,
                 absl::FunctionRef<Flow(const Value&)> emit);
  // Evaluates an operand of a value operation (a binary operator's side, a
  // native function's argument). Inside `path(...)` gojq evaluates those
  // with path tracking on, so stepping into a value that is not a path
  // fails there ("invalid path against: $x's value") rather than at the
  // end; the operand's own paths are dropped.
  Flow EvalOperand(const Op& op, const Frame* env, const Value& input, const PathNode* path,
                   absl::FunctionRef<Flow(const Value&)> emit);
  // Emits `output` of a non-path operation whose input was `input`:
  // keeps `path` when the output is the input itself (see above).
  Flow EmitComputed(const Value& input, const PathNode* path, Value output, Emit emit);

  // Raise an error: a message (gojq's internal errors) or a value
  // (`error(v)`). Return kError.
  Flow Fail(std::string message);
  Flow Fail(const absl::Status& status) { return Fail(std::string(status.message())); }
  Flow FailWithValue(Value value);
  // Charges `bytes` of built values; kError past the bound.
  bool Charge(size_t bytes);
  // Before building a value of `bytes`: false, with the memory bound's
  // error pending, when it would not fit. Charges nothing otherwise (the
  // value is charged once built).
  bool Reserve(size_t bytes);
  // Counts one step against the budget and checks the stack bound; every
  // Eval does, and so must a native loop that emits without evaluating.
  // Runs before every operation, so it takes one comparison for the stack
  // in the common case: the stack can only pass its bound where it goes
  // deeper than it ever went in this evaluation.
  Flow CheckBounds() {
    char here;
    const uintptr_t at = reinterpret_cast<uintptr_t>(&here);
    if (at < deepest_) {  // never, outside Run (deepest_ 0)
      deepest_ = at;
      if (static_cast<size_t>(stack_base_ - &here) > bounds_.max_stack_bytes) return FailStack();
    }
    return Work(1) ? Flow::kContinue : Flow::kError;
  }
  // Counts `units` of work done inside one step (see kBytesPerWorkUnit:
  // bytes scanned, elements compared) against the time budget, so that the
  // clock is read as often during one long native call as during many short
  // steps. A native whose work grows faster than its input (searching,
  // matching) calls it as it goes and stops when it returns false: the
  // budget is spent and a bound error is pending. Stays false after that.
  bool Work(uint64_t units) {
    steps_ += units;
    // A pending bound error zeroes next_clock_read_: ReadClock says false.
    return steps_ < next_clock_read_ || ReadClock();
  }
  size_t max_string_bytes() const;

  // The pending error: its value (a message string for internal errors)
  // and whether it came from `error(v)`.
  const Value& error_value() const { return error_value_; }
  bool error_is_value() const { return error_is_value_; }
  // gojq's text of the pending error.
  std::string ErrorMessage() const;
  // The bound (EvalBounds) a pending error reached, if any: those errors
  // are not catchable by `try`, so a program cannot loop past its bounds.
  enum class Bound : uint8_t { kNone, kTime, kMemory, kStack };
  Bound error_bound() const { return error_bound_; }
  bool error_is_bound() const { return error_bound_ != Bound::kNone; }
  // When the budget (EvalBounds::budget) ends; the infinite future until the
  // clock is first read.
  absl::Time budget_end() const { return budget_end_; }
  void ClearError();

  // The frame a pending kBreak unwinds to.
  const Frame* break_target() const { return break_target_; }
  Flow BreakTo(const Frame* target) {
    break_target_ = target;
    return Flow::kBreak;
  }

  // The path of a tracked output as a jq array; null for an invalid one.
  static Json PathArray(const PathNode* path);

 private:
  static constexpr uint64_t kStepsPerClockRead = 1024;
  // Calls one EvalTail frame takes in a row (see there).
  static constexpr int kMaxTailCalls = 100000;

  Flow FailBound(Bound bound, std::string message);
  // CheckBounds' and Work's slow paths: the stack bound's error; the clock
  // read every kStepsPerClockRead steps (false past the deadline).
  Flow FailStack();
  bool ReadClock();
  // Eval without path tracking. Tail positions (a call, the branch of an
  // `if` whose condition has one output, the right of a pipe whose left
  // has one, the right of a comma) are taken in this frame rather than
  // nested in new ones, as gojq's tail-call optimization does: `until`,
  // `while` and recursions such as `def f: if . < n then . + 1 | f else .
  // end` run in constant stack, where they would otherwise meet the stack
  // bound within a few hundred levels. A call with parameters, or a
  // binding, still nests: its frames must outlive it.
  //
  // The depth of such a recursion is bounded on its own (kMaxTailCalls,
  // RESOURCE_EXHAUSTED "recursed too deeply"): far above what a definition
  // needs (a count to 999, the outputs' bound), and low enough that a
  // runaway loop (`def f: f; f`) ends within milliseconds rather than
  // spending the whole time budget.
  Flow EvalTail(const Op& op, const Frame* env, const Value& input, Emit emit);
  // `op` with parameter calls followed to their arguments: the operation
  // that runs, and its environment.
  static std::pair<const Op*, const Frame*> Resolved(const Op& op, const Frame* env);
  // One step of Eval, its bounds already checked: the operation's own
  // evaluation through continuations.
  Flow Step(const Op& op, const Frame* env, const Value& input, const PathNode* path, Emit emit);
  // EvalOne's body, its bounds already checked (EvalTail's single-valued
  // operations come here too): the commonest steps, `$name`, `.name` and
  // `.a.b.c`, without One's dispatch, whose frame costs about what those
  // steps do.
  Flow OneCounted(const Op& op, const Frame* env, const Value& input, Value& out) {
    if (op.kind == OpKind::kVariable) {
      out = FrameAt(env, op.depth)->value;
      return Flow::kContinue;
    }
    if (op.kind == OpKind::kIndex && op.name_steps > 0) {
      if (op.name_steps == 1) return IndexOf(input, Value::Borrowed(op.operand(1).constant), out);
      return IndexNames(op, input, out);
    }
    return One(op, env, input, out);
  }
  // `.a.b.c` (Op::name_steps > 1) over `input`: the steps in one loop,
  // each counted as the operation it is.
  Flow IndexNames(const Op& op, const Value& input, Value& out);
  // OneCounted's other operations.
  Flow One(const Op& op, const Frame* env, const Value& input, Value& out);
  // `t[k]` and `l op r` as values, shared by both lanes.
  Flow IndexOf(const Value& target, const Value& key, Value& out);
  Flow BinaryOf(NodeKind binary, const Value& l, const Value& r, Value& out);
  // `l op r` for op one of kAdd, kSubtract, kMultiply, kDivide, kModulo:
  // the binary operators' and the arithmetic updates' (`+=` ...) one
  // meaning. A repeat's bytes are reserved before it is built.
  Flow ArithmeticOf(NodeKind arithmetic, const Json& l, const Json& r, Json& out);
  // A kFold's value.
  Flow FoldOf(const Op& op, const Frame* env, const Value& input, Value& out);
  // A Fold::kAdd's: apart, so that the other folds build no sum.
  Flow AddFoldOf(const Op& op, const Frame* env, const Value& input, Value& out);
  // Calls `each` (Flow(const Value&)) with each output of kFold `fold`'s
  // query, as gojq would collect them: to the end, so an error after the
  // deciding output is still an error.
  template <class Each>
  Flow EachOfFoldQuery(const Op& fold, const Frame* env, const Value& input, Each&& each);
  // `as`, `reduce`, `foreach` (interpreter_bindings.cc).
  Flow EvalBinding(const Op& op, const Frame* env, const Value& input, const PathNode* path,
                   Emit emit);
  // Binds `value` to `pattern`'s slots (which `slots` points at), then
  // calls `body` once per way the pattern's keys can be chosen.
  Flow Destructure(const Pattern& pattern, const Value& value, Frame* slots, const Frame* slot_env,
                   absl::FunctionRef<Flow()> body);
  // `=`, `|=`, `+=` ... (interpreter_update.cc).
  Flow EvalUpdate(const Op& op, const Frame* env, const Value& input, const PathNode* path,
                  Emit emit);

  EvalBounds bounds_;
  const char* stack_base_ = nullptr;
  // The deepest address CheckBounds saw on this thread's stack: an
  // evaluation that went deep gives the pages back when it returns
  // (ReleaseStackBelow), or every thread that ever ran a hostile
  // expression would keep up to max_stack_bytes of them.
  uintptr_t deepest_ = 0;
  uint64_t steps_ = 0;
  // steps_ at which the clock is read next; the first read starts the
  // budget. 0 while a bound error is pending (see Work).
  uint64_t next_clock_read_ = kStepsPerClockRead;
  bool clock_read_ = false;
  absl::Time budget_end_ = absl::InfiniteFuture();
  size_t built_bytes_ = 0;
  Value error_value_;
  bool error_is_value_ = false;
  Bound error_bound_ = Bound::kNone;
  const Frame* break_target_ = nullptr;
};

// The invalid-path marker (PathNode::Kind::kInvalid) and the empty path.
const PathNode* InvalidPath();
const PathNode* RootPath();

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_INTERPRETER_H_
