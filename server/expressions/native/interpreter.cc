#include "server/expressions/native/interpreter.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "server/common/thread_stack.h"
#include "server/expressions/native/format.h"
#include "server/expressions/native/json_text.h"
#include "server/expressions/native/operators.h"
#include "server/expressions/native/utf8.h"
#include "server/expressions/native/value_size.h"

namespace wm::expressions::native {
namespace {

const PathNode kRoot{nullptr, PathNode::Kind::kRoot, nullptr};
const PathNode kInvalid{nullptr, PathNode::Kind::kInvalid, nullptr};

// Whether `output` is `input` itself for gojq's path tracking: the same
// container, or an equal scalar.
bool SameValue(const Value& input, const Value& output) {
  const Json& a = *input;
  const Json& b = *output;
  if (a.is_structured() || b.is_structured()) return &a == &b;
  if (a.type() != b.type() && !(a.is_number() && b.is_number())) return false;
  return Equal(a, b);
}

// Tracks errors raised by the consumer of a generator, which a `try` or a
// `?` around the generator must let through.
class ConsumerErrors {
 public:
  Flow Pass(Flow flow) {
    if (flow == Flow::kError) raised_ = true;
    return flow;
  }
  bool raised() const { return raised_; }

 private:
  bool raised_ = false;
};

// A step's errors (and those of its key), caught for `?` steps only.
Flow StepResult(Interpreter& interpreter, bool optional, const ConsumerErrors& consumer,
                Flow flow) {
  if (flow != Flow::kError || !optional || consumer.raised() || interpreter.error_is_bound()) {
    return flow;
  }
  interpreter.ClearError();
  return Flow::kContinue;
}

std::string IndexError(const Json& target, const Json& key) {
  if (key.is_string()) return "expected an object but got: " + TypePreview(target);
  if (key.is_number() || key.is_array()) return "expected an array but got: " + TypePreview(target);
  if (key.is_object()) {
    if (!key.contains("start") || !key.contains("end")) {
      return "expected \"start\" and \"end\" for slicing but got: " + TypePreview(key);
    }
    return "expected an array but got: " + TypePreview(target);
  }
  if (target.is_array())
    return "expected a number for indexing an array but got: " + TypePreview(key);
  if (target.is_string()) {
    return "expected a number for indexing a string but got: " + TypePreview(key);
  }
  return "expected a string for object key but got: " + TypePreview(key);
}

int64_t ClampIndex(int64_t i, int64_t minimum, int64_t maximum) {
  if (i < 0) i += maximum;
  if (i < minimum) return minimum;
  return i < maximum ? i : maximum;
}

// t[from:to] for an array or a string (gojq's funcSlice); null bounds are
// the ends.
absl::StatusOr<Json> SliceOf(const Json& t, const Json& from, const Json& to) {
  if (t.is_null()) return Json(nullptr);
  if (!t.is_array() && !t.is_string()) {
    return absl::InvalidArgumentError("expected an array but got: " + TypePreview(t));
  }
  for (const Json* bound : {&from, &to}) {
    if (!bound->is_null() && !bound->is_number()) {
      return absl::InvalidArgumentError(
          std::string(t.is_array() ? "expected a number for indexing an array"
                                   : "expected a number for indexing a string") +
          " but got: " + TypePreview(*bound));
    }
  }
  int64_t length = t.is_array() ? static_cast<int64_t>(t.size())
                                : CharacterCount(t.get_ref<const std::string&>());
  int64_t start = from.is_null() ? 0 : ClampIndex(ToInt(from), 0, length);
  int64_t end = length;
  if (!to.is_null()) {
    end = ClampIndex(to.is_number_float() ? ToInt(Json(std::ceil(to.get<double>()))) : ToInt(to),
                     start, length);
  }
  if (t.is_array()) return Json(t.begin() + start, t.begin() + end);
  const std::string& s = t.get_ref<const std::string&>();
  size_t a = CharacterOffset(s, start), b = CharacterOffset(s, end);
  return Json(s.substr(a, b - a));
}

}  // namespace

const PathNode* InvalidPath() { return &kInvalid; }
const PathNode* RootPath() { return &kRoot; }

Interpreter::Interpreter(const EvalBounds& bounds) : bounds_(bounds) {}

bool Interpreter::Reserve(size_t bytes) {
  if (bytes <= max_string_bytes()) return true;
  return Charge(bytes);  // fails: past the bound
}

size_t Interpreter::max_string_bytes() const {
  return bounds_.max_built_bytes > built_bytes_ ? bounds_.max_built_bytes - built_bytes_ : 0;
}

Flow Interpreter::Run(const Op& op, const Frame* env, const Value& input, Emit emit) {
  char base;
  stack_base_ = &base;
  deepest_ = reinterpret_cast<uintptr_t>(&base);
  Flow flow = Eval(op, env, input, nullptr, emit);
  if (reinterpret_cast<uintptr_t>(&base) - deepest_ > kStackReleaseThreshold) {
    ReleaseStackBelow(reinterpret_cast<const void*>(deepest_));
  }
  return flow;
}

Flow Interpreter::Fail(std::string message) {
  error_value_ = Value::Owned(Json(std::move(message)));
  error_is_value_ = false;
  error_bound_ = Bound::kNone;
  return Flow::kError;
}

Flow Interpreter::FailWithValue(Value value) {
  error_value_ = std::move(value);
  error_is_value_ = true;
  error_bound_ = Bound::kNone;
  return Flow::kError;
}

Flow Interpreter::FailBound(Bound bound, std::string message) {
  Fail(std::move(message));
  error_bound_ = bound;
  next_clock_read_ = 0;  // every Work from now on asks ReadClock, which refuses
  return Flow::kError;
}

void Interpreter::ClearError() {
  error_value_ = Value();
  error_is_value_ = false;
  error_bound_ = Bound::kNone;
}

std::string Interpreter::ErrorMessage() const {
  const Json& value = *error_value_;
  if (!error_is_value_) return value.is_string() ? value.get<std::string>() : JsonText(value);
  // gojq's exitCodeError: "error: " and the string, or its JSON text.
  return "error: " + (value.is_string() ? value.get<std::string>() : JsonText(value));
}

bool Interpreter::Charge(size_t bytes) {
  built_bytes_ += bytes;
  if (built_bytes_ <= bounds_.max_built_bytes) return true;
  FailBound(Bound::kMemory, absl::StrCat("expression exceeded its memory limit of ",
                                         bounds_.max_built_bytes >> 20, " MiB"));
  return false;
}

Flow Interpreter::FailStack() {
  return FailBound(Bound::kStack, "expression recursed too deeply (stack bound of " +
                                      std::to_string(bounds_.max_stack_bytes >> 10) + " KiB)");
}

bool Interpreter::ReadClock() {
  if (error_bound_ != Bound::kNone) return false;  // stays false after a bound error
  next_clock_read_ = steps_ + kStepsPerClockRead;
  const absl::Time now = absl::Now();
  if (!clock_read_) {
    clock_read_ = true;
    budget_end_ = now + bounds_.budget;
  }
  if (now <= std::min(budget_end_, bounds_.deadline)) return true;
  FailBound(Bound::kTime, "expression exceeded its time budget");
  return false;
}

Json Interpreter::PathArray(const PathNode* path) {
  std::vector<const Json*> keys;
  for (; path != nullptr && path->kind == PathNode::Kind::kKey; path = path->parent) {
    keys.push_back(path->key);
  }
  if (path == nullptr || path->kind == PathNode::Kind::kInvalid) return Json(nullptr);
  Json out = Json::array();
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) out.push_back(**it);
  return out;
}

Flow Interpreter::EmitComputed(const Value& input, const PathNode* path, Value output, Emit emit) {
  if (path == nullptr) return emit(output, nullptr);
  return emit(output, SameValue(input, output) ? path : &kInvalid);
}

Flow Interpreter::EvalOperand(const Op& op, const Frame* env, const Value& input,
                              const PathNode* path, absl::FunctionRef<Flow(const Value&)> emit) {
  if (path == nullptr) return EvalValue(op, env, input, emit);
  return Eval(op, env, input, path, [&](const Value& v, const PathNode*) { return emit(v); });
}

Flow Interpreter::EvalValue(const Op& op, const Frame* env, const Value& input,
                            absl::FunctionRef<Flow(const Value&)> emit) {
  return Eval(op, env, input, nullptr, [&](const Value& v, const PathNode*) { return emit(v); });
}

Flow Interpreter::IndexNames(const Op& op, const Value& input, Value& out) {
  // The names, innermost first.
  const Json* names[Op::kMaxNameSteps];
  const Op* step = &op;
  for (int i = op.name_steps - 1; i >= 0; --i) {
    names[i] = &step->operand(1).constant;
    step = &step->operand(0);
  }
  // The inner steps' counts (the outermost one's is counted).
  if (!Work(op.name_steps - 1)) return Flow::kError;
  // Every step lands inside `input`'s document, or on null: a view of the
  // last one keeps that document alive, as IndexOf's would.
  const Json* at = &*input;
  for (int i = 0; i < op.name_steps; ++i) {
    if (at->is_object()) {
      at = FindMember(*at, *names[i]->get_ptr<const std::string*>());
      if (at == nullptr) at = &internal::kNull;
    } else if (!at->is_null()) {
      // IndexOf's words for what cannot be indexed by a name.
      return IndexOf(input.Member(*at), Value::Borrowed(*names[i]), out);
    }
  }
  if (at->is_null()) {
    out = Value::Null();
  } else {
    out.AssignMember(input, at);
  }
  return Flow::kContinue;
}

Flow Interpreter::IndexOf(const Value& target, const Value& key, Value& out) {
  const Json& t = *target;
  const Json& k = *key;
  // An object's member by name first: the commonest step of all.
  if (const auto* name = k.get_ptr<const std::string*>(); name != nullptr && t.is_object()) {
    out.AssignMember(target, FindMember(t, *name));
    return Flow::kContinue;
  }
  // gojq: null indexed by any string, number, array or object (a slice or
  // not) is null.
  if (t.is_null() && (k.is_string() || k.is_number() || k.is_array() || k.is_object())) {
    out.AssignMember(target, nullptr);
    return Flow::kContinue;
  }
  if (k.is_number() && t.is_array()) {
    int64_t i = ClampIndex(ToInt(k), -1, static_cast<int64_t>(t.size()));
    bool inside = i >= 0 && i < static_cast<int64_t>(t.size());
    out.AssignMember(target, inside ? &t[i] : nullptr);
    return Flow::kContinue;
  }
  if (k.is_number() && t.is_string()) {
    const std::string& s = t.get_ref<const std::string&>();
    int64_t length = CharacterCount(s);
    int64_t i = ClampIndex(ToInt(k), -1, length);
    if (i < 0 || i >= length) {
      out = Value();
      return Flow::kContinue;
    }
    size_t from = CharacterOffset(s, i);
    size_t to = CharacterOffset(s, i + 1);
    out = Value::Owned(Json(s.substr(from, to - from)));
    return Flow::kContinue;
  }
  if (k.is_array() && t.is_array()) {
    Json indices = Json::array();
    if (!k.empty() && k.size() <= t.size()) {
      for (size_t i = 0; i + k.size() <= t.size(); ++i) {
        bool match = true;
        for (size_t j = 0; j < k.size() && match; ++j) match = Equal(t[i + j], k[j]);
        if (match) indices.push_back(static_cast<int64_t>(i));
      }
    }
    out = Value::Owned(std::move(indices));
    return Flow::kContinue;
  }
  if (k.is_object() && k.contains("start") && k.contains("end") &&
      (t.is_array() || t.is_string())) {
    // `.[{"start": s, "end": e}]` is a slice (how paths record one).
    auto slice = SliceOf(t, k["start"], k["end"]);
    if (!slice.ok()) return Fail(slice.status());
    if (!Charge(ApproximateBytes(*slice))) return Flow::kError;
    out = Value::Owned(*std::move(slice));
    return Flow::kContinue;
  }
  return Fail(IndexError(t, k));
}

Flow Interpreter::BinaryOf(NodeKind binary, const Value& l, const Value& r, Value& out) {
  switch (binary) {
    case NodeKind::kEqual:
      out = Value::Bool(Equal(*l, *r));
      return Flow::kContinue;
    case NodeKind::kNotEqual:
      out = Value::Bool(!Equal(*l, *r));
      return Flow::kContinue;
    case NodeKind::kLess:
      out = Value::Bool(Compare(*l, *r) < 0);
      return Flow::kContinue;
    case NodeKind::kLessEqual:
      out = Value::Bool(Compare(*l, *r) <= 0);
      return Flow::kContinue;
    case NodeKind::kGreater:
      out = Value::Bool(Compare(*l, *r) > 0);
      return Flow::kContinue;
    case NodeKind::kGreaterEqual:
      out = Value::Bool(Compare(*l, *r) >= 0);
      return Flow::kContinue;
    case NodeKind::kAdd:
      // null + x and x + null are x itself: no copy.
      if (l->is_null()) {
        out = r;
        return Flow::kContinue;
      }
      if (r->is_null()) {
        out = l;
        return Flow::kContinue;
      }
      break;
    default:
      break;
  }
  // Two numbers (sums, counts, products of replicas): adding, subtracting
  // or multiplying them cannot fail, does constant work beyond the step
  // already counted and builds nothing (the result is held inline).
  if (l->is_number() && r->is_number() &&
      (binary == NodeKind::kAdd || binary == NodeKind::kSubtract ||
       binary == NodeKind::kMultiply)) {
    absl::StatusOr<Json> number = binary == NodeKind::kAdd        ? Add(*l, *r)
                                  : binary == NodeKind::kSubtract ? Subtract(*l, *r)
                                                                  : Multiply(*l, *r);
    out = Value::Owned(*std::move(number));
    return Flow::kContinue;
  }
  Json result;
  if (Flow flow = ArithmeticOf(binary, *l, *r, result); flow != Flow::kContinue) return flow;
  if (!Work(ShallowWorkUnits(*l) + ShallowWorkUnits(*r))) return Flow::kError;
  if (!Charge(ApproximateBytes(result))) return Flow::kError;
  out = Value::Owned(std::move(result));
  return Flow::kContinue;
}

Flow Interpreter::ArithmeticOf(NodeKind arithmetic, const Json& l, const Json& r, Json& out) {
  absl::StatusOr<Json> result;
  switch (arithmetic) {
    case NodeKind::kAdd:
      result = Add(l, r);
      break;
    case NodeKind::kSubtract:
      result = Subtract(l, r);
      break;
    case NodeKind::kMultiply:
      if (!Reserve(RepeatedStringBytes(l, r))) return Flow::kError;
      result = Multiply(l, r);
      break;
    case NodeKind::kDivide:
      result = Divide(l, r);
      break;
    case NodeKind::kModulo:
      result = Modulo(l, r);
      break;
    default:
      return Fail("unsupported operator");
  }
  if (!result.ok()) return Fail(result.status());
  out = *std::move(result);
  return Flow::kContinue;
}

template <class Each>
Flow Interpreter::EachOfFoldQuery(const Op& fold, const Frame* env, const Value& input,
                                  Each&& each) {
  const Op* query = fold.operand(0).operand(0).child(0);
  if (query == nullptr) return Flow::kContinue;  // `[]`
  if (!fold.select_filter) return EvalValue(*query, env, input, each);
  // `s | select(c)`: what select does, without its continuations.
  const Op& condition = query->operand(1).operand(0);
  return EvalValue(query->operand(0), env, input, [&](const Value& v) {
    if (CheckBounds() == Flow::kError) return Flow::kError;  // select's own step
    Value truth;
    if (Flow flow = EvalOne(condition, env, v, truth); flow != Flow::kContinue) return flow;
    return Truthy(*truth) ? each(v) : Flow::kContinue;
  });
}

Flow Interpreter::FoldOf(const Op& op, const Frame* env, const Value& input, Value& out) {
  if (op.fold == Fold::kAdd) return AddFoldOf(op, env, input, out);
  int64_t count = 0;
  bool any = false;
  bool all = true;
  Value kept;  // kFirst, kLast, kMin, kMax
  {
    Flow flow = EachOfFoldQuery(op, env, input, [&](const Value& v) {
      ++count;
      switch (op.fold) {
        case Fold::kLength:
        case Fold::kAdd:  // AddFoldOf's
          break;
        case Fold::kFirst:
          if (count == 1) kept = v;
          break;
        case Fold::kLast:
          kept = v;
          break;
        case Fold::kAny:
          any = any || Truthy(*v);
          break;
        case Fold::kAll:
          all = all && Truthy(*v);
          break;
        case Fold::kMin:
          if (count == 1 || Compare(*v, *kept) < 0) kept = v;
          break;
        case Fold::kMax:
          if (count == 1 || Compare(*v, *kept) >= 0) kept = v;
          break;
      }
      return Flow::kContinue;
    });
    if (flow != Flow::kContinue) return flow;
  }
  switch (op.fold) {
    case Fold::kLength:
      out = Value::Integer(count);
      break;
    case Fold::kAny:
      out = Value::Bool(any);
      break;
    case Fold::kAll:
      out = Value::Bool(all);
      break;
    default:
      out = std::move(kept);
  }
  return Flow::kContinue;
}

Flow Interpreter::AddFoldOf(const Op& op, const Frame* env, const Value& input, Value& out) {
  bool first = true;
  Json sum;                      // of the numbers and nulls so far
  std::optional<Json> gathered;  // [sum, the rest...] once one is neither
  {
    Flow flow = EachOfFoldQuery(op, env, input, [&](const Value& v) {
      if (!gathered && (v->is_number() || v->is_null())) {
        sum = *Add(sum, *v);  // numbers and nulls: it cannot fail
        first = false;
        return Flow::kContinue;
      }
      if (!gathered) {
        gathered = Json::array();
        if (!first) gathered->push_back(std::move(sum));
        first = false;
      }
      // Charged as the array `[query]` would charge it.
      if (!Charge(ApproximateBytes(*v))) return Flow::kError;
      gathered->push_back(*v);
      return Flow::kContinue;
    });
    if (flow != Flow::kContinue) return flow;
  }
  if (gathered) {
    // `add` itself (the pipe's right side) over the gathered array.
    const Op& add = op.operand(0).operand(1);
    return EvalOne(add, env, Value::Owned(*std::move(gathered)), out);
  }
  out = Value::Owned(std::move(sum));
  return Flow::kContinue;
}

Flow Interpreter::Eval(const Op& op, const Frame* env, const Value& input, const PathNode* path,
                       Emit emit) {
  if (path != nullptr) {
    if (CheckBounds() == Flow::kError) return Flow::kError;
    return Step(op, env, input, path, emit);
  }
  return EvalTail(op, env, input, emit);
}

Flow Interpreter::EvalTail(const Op& first, const Frame* first_env, const Value& first_input,
                           Emit emit) {
  const Op* op = &first;
  const Frame* env = first_env;
  const Value* input = &first_input;
  // The input once a pipe has been stepped over; made only then, since most
  // evaluations take no such step.
  std::optional<Value> current;
  int tail_calls = 0;  // calls taken in this frame: the recursion's depth
  for (;;) {
    if (CheckBounds() == Flow::kError) return Flow::kError;
    if (op->single) {
      Value out;
      if (Flow flow = OneCounted(*op, env, *input, out); flow != Flow::kContinue) return flow;
      return emit(out, nullptr);
    }
    switch (op->kind) {
      case OpKind::kCallParameter:  // the argument, in its caller's environment
        std::tie(op, env) = Resolved(*op, env);
        continue;
      case OpKind::kCallDefined:
        if (!op->children.empty()) break;  // its parameters need frames of their own
        if (++tail_calls > kMaxTailCalls) {
          return FailBound(Bound::kStack, absl::StrCat("expression recursed too deeply (more than ",
                                                       kMaxTailCalls, " tail calls)"));
        }
        env = FrameAt(env, op->depth);
        op = op->function->body.get();
        continue;
      case OpKind::kIf: {
        auto [condition, condition_env] = Resolved(op->operand(0), env);
        if (!condition->single) break;  // a branch per output
        Value truth;
        if (Flow flow = EvalOne(*condition, condition_env, *input, truth);
            flow != Flow::kContinue) {
          return flow;
        }
        const Op* branch = Truthy(*truth) ? op->child(1) : op->child(2);
        if (branch == nullptr) return emit(*input, nullptr);
        op = branch;
        continue;
      }
      case OpKind::kPipe: {
        auto [left, left_env] = Resolved(op->operand(0), env);
        if (!left->single) break;  // the right side per output
        Value out;
        if (Flow flow = EvalOne(*left, left_env, *input, out); flow != Flow::kContinue) {
          return flow;
        }
        // `out` holds its own reference to what it views: the old input
        // may go.
        current.emplace(std::move(out));
        input = &*current;
        op = &op->operand(1);
        continue;
      }
      case OpKind::kComma: {
        Flow flow = EvalTail(op->operand(0), env, *input, emit);
        if (flow != Flow::kContinue) return flow;
        op = &op->operand(1);
        continue;
      }
      default:
        break;
    }
    return Step(*op, env, *input, nullptr, emit);
  }
}

std::pair<const Op*, const Frame*> Interpreter::Resolved(const Op& op, const Frame* env) {
  const Op* resolved = &op;
  while (resolved->kind == OpKind::kCallParameter) {
    const Frame* frame = FrameAt(env, resolved->depth);
    resolved = frame->closure;
    env = frame->closure_env;
  }
  return {resolved, env};
}

Flow Interpreter::One(const Op& op, const Frame* env, const Value& input, Value& out) {
  switch (op.kind) {
    case OpKind::kIdentity:
      out = input;
      return Flow::kContinue;

    case OpKind::kConstant:
      out = Value::Borrowed(op.constant);
      return Flow::kContinue;

    case OpKind::kIndex: {
      // The order of Step's: a constant key after the target, any other
      // key before it. (`$name` and `.name` on the input: OneCounted.)
      const Op& key_op = op.operand(1);
      Value target;
      if (key_op.kind == OpKind::kConstant) {
        if (Flow flow = EvalOne(op.operand(0), env, input, target); flow != Flow::kContinue) {
          return flow;
        }
        return IndexOf(target, Value::Borrowed(key_op.constant), out);
      }
      Value key;
      if (Flow flow = EvalOne(key_op, env, input, key); flow != Flow::kContinue) return flow;
      if (Flow flow = EvalOne(op.operand(0), env, input, target); flow != Flow::kContinue) {
        return flow;
      }
      return IndexOf(target, key, out);
    }

    case OpKind::kPipe: {
      Value middle;
      if (Flow flow = EvalOne(op.operand(0), env, input, middle); flow != Flow::kContinue) {
        return flow;
      }
      return EvalOne(op.operand(1), env, middle, out);
    }

    case OpKind::kAlternative:
      if (Flow flow = EvalOne(op.operand(0), env, input, out); flow != Flow::kContinue) return flow;
      if (Truthy(*out)) return Flow::kContinue;
      return EvalOne(op.operand(1), env, input, out);

    case OpKind::kAnd:
    case OpKind::kOr: {
      bool is_and = op.kind == OpKind::kAnd;
      Value side;
      if (Flow flow = EvalOne(op.operand(0), env, input, side); flow != Flow::kContinue) {
        return flow;
      }
      bool left = Truthy(*side);
      if (is_and ? !left : left) {
        out = Value::Bool(!is_and);
        return Flow::kContinue;
      }
      if (Flow flow = EvalOne(op.operand(1), env, input, side); flow != Flow::kContinue) {
        return flow;
      }
      out = Value::Bool(Truthy(*side));
      return Flow::kContinue;
    }

    case OpKind::kBinary: {
      // The right operand first, as in Step.
      Value l, r;
      if (Flow flow = EvalOne(op.operand(1), env, input, r); flow != Flow::kContinue) return flow;
      if (Flow flow = EvalOne(op.operand(0), env, input, l); flow != Flow::kContinue) return flow;
      return BinaryOf(op.binary, l, r, out);
    }

    case OpKind::kNegate: {
      Value v;
      if (Flow flow = EvalOne(op.operand(0), env, input, v); flow != Flow::kContinue) return flow;
      auto negated = Negate(*v);
      if (!negated.ok()) return Fail(negated.status());
      out = Value::Owned(*std::move(negated));
      return Flow::kContinue;
    }

    case OpKind::kIf: {
      Value condition;
      if (Flow flow = EvalOne(op.operand(0), env, input, condition); flow != Flow::kContinue) {
        return flow;
      }
      const Op* branch = Truthy(*condition) ? op.child(1) : op.child(2);
      if (branch == nullptr) {
        out = input;
        return Flow::kContinue;
      }
      return EvalOne(*branch, env, input, out);
    }

    case OpKind::kBind: {
      // `source as $x | body`: one frame.
      Frame slot;
      slot.parent = env;
      if (Flow flow = EvalOne(op.operand(0), env, input, slot.value); flow != Flow::kContinue) {
        return flow;
      }
      return EvalOne(op.operand(1), &slot, input, out);
    }

    case OpKind::kCallDefined:  // no parameters: the body in its definition's environment
      return EvalOne(*op.function->body, FrameAt(env, op.depth), input, out);

    case OpKind::kDefine: {
      Frame definition;
      definition.parent = env;
      return EvalOne(op.operand(0), &definition, input, out);
    }

    case OpKind::kFold:
      return FoldOf(op, env, input, out);

    default:
      // The rest build or call through continuations; their one output is
      // caught here.
      return Step(op, env, input, nullptr, [&](const Value& v, const PathNode*) {
        out = v;
        return Flow::kContinue;
      });
  }
}

Flow Interpreter::Step(const Op& op, const Frame* env, const Value& input, const PathNode* path,
                       Emit emit) {
  switch (op.kind) {
    case OpKind::kIdentity:
      return emit(input, path);

    case OpKind::kConstant:
      return EmitComputed(input, path, Value::Borrowed(op.constant), emit);

    case OpKind::kRecurseAll: {
      // `..`: the input, then recursively every member, depth first.
      Flow flow = emit(input, path);
      if (flow != Flow::kContinue) return flow;
      const Json& value = *input;
      // `..` is recurse(.[]?): iterating what is not a path fails, and `?`
      // drops that failure.
      if (path != nullptr && path->kind == PathNode::Kind::kInvalid) return Flow::kContinue;
      if (path == nullptr) {  // no keys to build: the members alone
        if (!value.is_structured()) return Flow::kContinue;
        for (auto it = value.begin(); it != value.end(); ++it) {
          flow = Eval(op, env, input.Member(*it), nullptr, emit);
          if (flow != Flow::kContinue) return flow;
        }
        return Flow::kContinue;
      }
      if (value.is_array()) {
        for (size_t i = 0; i < value.size(); ++i) {
          Json key(static_cast<int64_t>(i));
          PathNode node{path, PathNode::Kind::kKey, &key};
          flow = Eval(op, env, input.Member(value[i]), &node, emit);
          if (flow != Flow::kContinue) return flow;
        }
      } else if (value.is_object()) {
        for (auto it = value.begin(); it != value.end(); ++it) {
          Json key(it.key());
          PathNode node{path, PathNode::Kind::kKey, &key};
          flow = Eval(op, env, input.Member(*it), &node, emit);
          if (flow != Flow::kContinue) return flow;
        }
      }
      return Flow::kContinue;
    }

    case OpKind::kIndex: {
      // Indexes `target` (whose path is `p`) by `key`.
      ConsumerErrors consumer;
      auto index = [&](const Value& target, const PathNode* p, const Value& key) -> Flow {
        if (p != nullptr && p->kind == PathNode::Kind::kInvalid) {
          return Fail("invalid path against: " + TypePreview(*target));
        }
        Value out;
        if (Flow flow = IndexOf(target, key, out); flow != Flow::kContinue) return flow;
        PathNode node{p, PathNode::Kind::kKey, &*key};
        return consumer.Pass(emit(out, p ? &node : nullptr));
      };
      const Op& target_op = op.operand(0);
      const Op& key_op = op.operand(1);
      if (op.optional || key_op.kind == OpKind::kConstant) {
        // An optional step is gojq's `x | try .[k]`: k is evaluated for each
        // x, against x (docs/divergences.md rule 6).
        return Eval(target_op, env, input, path, [&](const Value& target, const PathNode* p) {
          Flow keys = EvalValue(key_op, env, op.optional ? target : input,
                                [&](const Value& key) { return index(target, p, key); });
          return StepResult(*this, op.optional, consumer, keys);
        });
      }
      // gojq's `_index(x; k)` evaluates its last argument first: each key,
      // then each target (`.[0,1][0,1]` varies the key slowest).
      return EvalValue(key_op, env, input, [&](const Value& key) {
        return Eval(target_op, env, input, path,
                    [&](const Value& target, const PathNode* p) { return index(target, p, key); });
      });
    }

    case OpKind::kSlice: {
      ConsumerErrors consumer;
      auto slice = [&](const Value& target, const PathNode* p, const Json& from,
                       const Json& to) -> Flow {
        const Json& t = *target;
        if (p != nullptr && p->kind == PathNode::Kind::kInvalid) {
          return Fail("invalid path against: " + TypePreview(t));
        }
        Json key = {{"start", from}, {"end", to}};
        PathNode node{p, PathNode::Kind::kKey, &key};
        const PathNode* next = p ? &node : nullptr;
        auto out = SliceOf(t, from, to);
        if (!out.ok()) return Fail(out.status());
        if (out->is_null()) return consumer.Pass(emit(Value(), next));
        if (!Charge(ApproximateBytes(*out))) return Flow::kError;
        return consumer.Pass(emit(Value::Owned(*std::move(out)), next));
      };
      // gojq's `_slice(x; end; start)` evaluates its last argument first:
      // each start, then each end, then each target.
      const Op* from_op = op.child(1);
      const Op* to_op = op.child(2);
      auto bounds = [&](const Value& bound_input,
                        absl::FunctionRef<Flow(const Json&, const Json&)> each) -> Flow {
        auto with_from = [&](const Json& from) -> Flow {
          if (to_op == nullptr) return each(from, Json(nullptr));
          return EvalValue(*to_op, env, bound_input,
                           [&](const Value& to) { return each(from, *to); });
        };
        if (from_op == nullptr) return with_from(Json(nullptr));
        return EvalValue(*from_op, env, bound_input,
                         [&](const Value& from) { return with_from(*from); });
      };
      bool constant_bounds = (from_op == nullptr || from_op->kind == OpKind::kConstant) &&
                             (to_op == nullptr || to_op->kind == OpKind::kConstant);
      if (op.optional || constant_bounds) {
        // As for kIndex: an optional step's bounds are evaluated for each
        // target, against it.
        return Eval(op.operand(0), env, input, path, [&](const Value& target, const PathNode* p) {
          Flow flow = bounds(op.optional ? target : input, [&](const Json& from, const Json& to) {
            return slice(target, p, from, to);
          });
          return StepResult(*this, op.optional, consumer, flow);
        });
      }
      return bounds(input, [&](const Json& from, const Json& to) {
        return Eval(op.operand(0), env, input, path, [&](const Value& target, const PathNode* p) {
          return slice(target, p, from, to);
        });
      });
    }

    case OpKind::kIterate: {
      ConsumerErrors consumer;
      return Eval(op.operand(0), env, input, path, [&](const Value& target, const PathNode* p) {
        const Json& t = *target;
        Flow flow = Flow::kContinue;
        if (!t.is_structured()) {
          // `[]?` over a scalar: the error StepResult would catch and drop,
          // not built (`.status.conditions[]?` of an object without
          // conditions, in most resolutions).
          if (op.optional) return Flow::kContinue;
          flow = Fail("cannot iterate over: " + TypePreview(t));
        } else if (p != nullptr && p->kind == PathNode::Kind::kInvalid) {
          // gojq checks the path before looking at the elements: an empty
          // array that is not a path fails too.
          flow = Fail("invalid path on iterating against: " + TypePreview(t));
        } else if (p == nullptr && t.is_array()) {  // no keys to build: the elements alone
          // The containers are walked directly: nlohmann's iterators ask
          // which kind they walk at every step.
          for (const Json& element : *t.get_ptr<const Json::array_t*>()) {
            flow = consumer.Pass(emit(target.Member(element), nullptr));
            if (flow != Flow::kContinue) break;
          }
        } else if (p == nullptr) {
          for (const auto& [key, member] : *t.get_ptr<const Json::object_t*>()) {
            flow = consumer.Pass(emit(target.Member(member), nullptr));
            if (flow != Flow::kContinue) break;
          }
        } else if (t.is_array()) {
          for (size_t i = 0; i < t.size() && flow == Flow::kContinue; ++i) {
            Json key(static_cast<int64_t>(i));
            PathNode node{p, PathNode::Kind::kKey, &key};
            flow = consumer.Pass(emit(target.Member(t[i]), &node));
          }
        } else {
          for (auto it = t.begin(); it != t.end() && flow == Flow::kContinue; ++it) {
            Json key(it.key());
            PathNode node{p, PathNode::Kind::kKey, &key};
            flow = consumer.Pass(emit(target.Member(*it), &node));
          }
        }
        return StepResult(*this, op.optional, consumer, flow);
      });
    }

    case OpKind::kTemplate: {
      // Interpolations vary last-first, as in gojq: "\(1,2)\(3,4)" is
      // "13", "23", "14", "24".
      std::vector<std::string> pieces(op.children.size());
      std::function<Flow(int)> fill = [&](int i) -> Flow {
        if (i < 0) {
          size_t size = 0;
          for (const auto& piece : pieces) size += piece.size();
          if (!Charge(size)) return Flow::kError;
          std::string text;
          text.reserve(size);
          for (const auto& piece : pieces) text += piece;
          return EmitComputed(input, path, Value::Owned(Json(std::move(text))), emit);
        }
        const Op& part = *op.children[i];
        if (part.text_run) {
          pieces[i] = part.constant.get<std::string>();
          return fill(i - 1);
        }
        return EvalOperand(part, env, input, path, [&](const Value& v) -> Flow {
          auto text = ApplyFormat(op.text.empty() ? "@text" : op.text, *v);
          if (!text.ok()) return Fail(text.status());
          pieces[i] = *std::move(text);
          return fill(i - 1);
        });
      };
      return fill(static_cast<int>(op.children.size()) - 1);
    }

    case OpKind::kFormat: {
      auto text = ApplyFormat(op.text, *input);
      if (!text.ok()) return Fail(text.status());
      return EmitComputed(input, path, Value::Owned(Json(*std::move(text))), emit);
    }

    case OpKind::kArray: {
      Json array = Json::array();
      if (op.child(0) != nullptr) {
        Flow flow = EvalOperand(op.operand(0), env, input, path, [&](const Value& v) -> Flow {
          if (!Charge(ApproximateBytes(*v))) return Flow::kError;
          array.push_back(*v);
          return Flow::kContinue;
        });
        if (flow != Flow::kContinue) return flow;
      }
      return EmitComputed(input, path, Value::Owned(std::move(array)), emit);
    }

    case OpKind::kObject: {
      // Entries vary last-first; a later duplicate key wins.
      size_t entries = op.children.size() / 2;
      std::vector<std::pair<Value, Value>> chosen(entries);
      std::function<Flow(size_t)> fill = [&](size_t e) -> Flow {
        if (e == entries) {
          Json object = Json::object();
          for (auto& [key, value] : chosen) {
            if (!Charge(ApproximateBytes(*key) + ApproximateBytes(*value))) return Flow::kError;
            object[key->get<std::string>()] = *value;
          }
          return EmitComputed(input, path, Value::Owned(std::move(object)), emit);
        }
        return EvalOperand(*op.children[2 * e], env, input, path, [&](const Value& key) -> Flow {
          if (!key->is_string()) {
            return Fail("expected a string for object key but got: " + TypePreview(*key));
          }
          chosen[e].first = key;
          const Op* value = op.child(2 * e + 1);
          if (value == nullptr) {  // {"\(k)"}: the input's member named k
            if (!input->is_null() && !input->is_object()) {
              return Fail("expected an object but got: " + TypePreview(*input));
            }
            auto it = input->is_object() ? input->find(key->get<std::string>()) : input->end();
            chosen[e].second =
                input->is_object() && it != input->end() ? input.Member(*it) : Value();
            return fill(e + 1);
          }
          return EvalOperand(*value, env, input, path, [&](const Value& v) {
            chosen[e].second = v;
            return fill(e + 1);
          });
        });
      };
      return fill(0);
    }

    case OpKind::kVariable:
      return EmitComputed(input, path, FrameAt(env, op.depth)->value, emit);

    case OpKind::kCallParameter: {
      const Frame* frame = FrameAt(env, op.depth);
      return Eval(*frame->closure, frame->closure_env, input, path, emit);
    }

    case OpKind::kCallNative:
      return op.native(*this, op, env, input, path, emit);

    case OpKind::kCallDefined: {
      const FunctionDefinition& function = *op.function;
      const Frame* definition = FrameAt(env, op.depth);
      size_t params = function.value_params.size();
      size_t frames = params;
      for (bool value : function.value_params) frames += value;
      absl::InlinedVector<Frame, 4> bound(frames);
      // Closure frames first; `$param` values are bound one parameter at a
      // time, the first parameter varying slowest.
      size_t f = 0;
      std::vector<size_t> value_frames;
      for (size_t i = 0; i < params; ++i) {
        bound[f].parent = f == 0 ? definition : &bound[f - 1];
        bound[f].closure = op.children[i].get();
        bound[f].closure_env = env;
        ++f;
        if (function.value_params[i]) {
          bound[f].parent = &bound[f - 1];
          value_frames.push_back(f);
          ++f;
        }
      }
      const Frame* body_env = frames == 0 ? definition : &bound[frames - 1];
      if (value_frames.empty()) return Eval(*function.body, body_env, input, path, emit);
      std::function<Flow(size_t)> bind = [&](size_t v) -> Flow {
        if (v == value_frames.size()) return Eval(*function.body, body_env, input, path, emit);
        Frame& frame = bound[value_frames[v]];
        const Frame* closure = frame.parent;
        return EvalValue(*closure->closure, closure->closure_env, input, [&](const Value& value) {
          frame.value = value;
          return bind(v + 1);
        });
      };
      return bind(0);
    }

    case OpKind::kNegate:
      return EvalOperand(op.operand(0), env, input, path, [&](const Value& v) -> Flow {
        auto negated = Negate(*v);
        if (!negated.ok()) return Fail(negated.status());
        return EmitComputed(input, path, Value::Owned(*std::move(negated)), emit);
      });

    case OpKind::kPipe:
      return Eval(op.operand(0), env, input, path, [&](const Value& v, const PathNode* p) {
        return Eval(op.operand(1), env, v, p, emit);
      });

    case OpKind::kFold: {
      // Tracking paths, the array's invalid path is part of the meaning.
      if (path != nullptr) return Eval(op.operand(0), env, input, path, emit);
      Value out;
      if (Flow flow = FoldOf(op, env, input, out); flow != Flow::kContinue) return flow;
      return emit(out, nullptr);
    }

    case OpKind::kComma: {
      Flow flow = Eval(op.operand(0), env, input, path, emit);
      if (flow != Flow::kContinue) return flow;
      return Eval(op.operand(1), env, input, path, emit);
    }

    case OpKind::kAlternative: {
      // The truthy outputs of the left side, or, when there are none, the
      // right side's. Errors on the left are not caught (as in gojq).
      bool found = false;
      Flow flow = Eval(op.operand(0), env, input, path, [&](const Value& v, const PathNode* p) {
        if (!Truthy(*v)) return Flow::kContinue;
        found = true;
        return emit(v, p);
      });
      if (flow != Flow::kContinue || found) return flow;
      return Eval(op.operand(1), env, input, path, emit);
    }

    case OpKind::kAnd:
    case OpKind::kOr: {
      bool is_and = op.kind == OpKind::kAnd;
      return EvalValue(op.operand(0), env, input, [&](const Value& l) -> Flow {
        bool left = Truthy(*l);
        if (is_and ? !left : left) return EmitComputed(input, path, Value::Bool(!is_and), emit);
        return EvalValue(op.operand(1), env, input, [&](const Value& r) {
          return EmitComputed(input, path, Value::Bool(Truthy(*r)), emit);
        });
      });
    }

    case OpKind::kBinary:
      // gojq evaluates the right operand first, then the left for each.
      return EvalOperand(op.operand(1), env, input, path, [&](const Value& r) {
        return EvalOperand(op.operand(0), env, input, path, [&](const Value& l) -> Flow {
          Value out;
          if (Flow flow = BinaryOf(op.binary, l, r, out); flow != Flow::kContinue) return flow;
          return EmitComputed(input, path, std::move(out), emit);
        });
      });

    case OpKind::kIf:
      return EvalValue(op.operand(0), env, input, [&](const Value& condition) {
        const Op* branch = Truthy(*condition) ? op.child(1) : op.child(2);
        if (branch == nullptr) return emit(input, path);
        return Eval(*branch, env, input, path, emit);
      });

    case OpKind::kTry: {
      ConsumerErrors consumer;
      Flow flow = Eval(op.operand(0), env, input, path, [&](const Value& v, const PathNode* p) {
        return consumer.Pass(emit(v, p));
      });
      if (flow != Flow::kError || consumer.raised() || error_is_bound()) return flow;
      Value caught = error_value_;
      ClearError();
      if (op.child(1) == nullptr) return Flow::kContinue;
      return Eval(op.operand(1), env, caught, path ? &kInvalid : nullptr, emit);
    }

    case OpKind::kLabel: {
      Frame label;
      label.parent = env;
      Flow flow = Eval(op.operand(0), &label, input, path, emit);
      if (flow == Flow::kBreak && break_target_ == &label) return Flow::kContinue;
      return flow;
    }

    case OpKind::kBreak:
      return BreakTo(FrameAt(env, op.depth));

    case OpKind::kDefine: {
      Frame definition;
      definition.parent = env;
      return Eval(op.operand(0), &definition, input, path, emit);
    }

    case OpKind::kBind:
    case OpKind::kReduce:
    case OpKind::kForeach:
      return EvalBinding(op, env, input, path, emit);
    case OpKind::kUpdate:
      return EvalUpdate(op, env, input, path, emit);
  }
  return Fail("unknown operation");
}

}  // namespace wm::expressions::native
