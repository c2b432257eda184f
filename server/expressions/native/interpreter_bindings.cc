// Variable bindings: `E as PATTERNS | body`, `reduce`, `foreach`, and the
// destructuring of patterns they share.

#include <functional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "server/expressions/native/interpreter.h"
#include "server/expressions/native/json_text.h"
#include "server/expressions/native/operators.h"

namespace wm::expressions::native {
namespace {

// A binding construct's frames, one per pattern variable, chained in slot
// order above `env`; the innermost is the environment of the body.
class Slots {
 public:
  Slots(const Frame* env, int count) : frames_(count) {
    for (int i = 0; i < count; ++i) frames_[i].parent = i == 0 ? env : &frames_[i - 1];
    top_ = count == 0 ? env : &frames_[count - 1];
  }
  Frame* data() { return frames_.data(); }
  const Frame* top() const { return top_; }
  void Reset() {
    for (Frame& f : frames_) f.value = Value();
  }

 private:
  absl::InlinedVector<Frame, 4> frames_;
  const Frame* top_;
};

}  // namespace

Flow Interpreter::Destructure(const Pattern& pattern, const Value& value, Frame* slots,
                              const Frame* slot_env, absl::FunctionRef<Flow()> body) {
  switch (pattern.kind) {
    case Pattern::Kind::kVariable:
      slots[pattern.slot].value = value;
      return body();
    case Pattern::Kind::kArray: {
      const Json& v = *value;
      if (!v.is_null() && !v.is_array())
        return Fail("expected an array but got: " + TypePreview(v));
      std::function<Flow(size_t)> element = [&](size_t i) -> Flow {
        if (i == pattern.elements.size()) return body();
        Value member = v.is_array() && i < v.size() ? value.Member(v[i]) : Value();
        return Destructure(pattern.elements[i], member, slots, slot_env,
                           [&] { return element(i + 1); });
      };
      return element(0);
    }
    case Pattern::Kind::kObject: {
      std::function<Flow(size_t)> entry = [&](size_t e) -> Flow {
        if (e == pattern.entries.size()) return body();
        const Pattern::Entry& item = pattern.entries[e];
        return EvalValue(*item.key, slot_env, value, [&](const Value& key) -> Flow {
          const Json& v = *value;
          if (!key->is_string()) {
            return Fail("expected a string for object key but got: " + TypePreview(*key));
          }
          if (!v.is_null() && !v.is_object()) {
            return Fail("expected an object but got: " + TypePreview(v));
          }
          Value member;
          if (v.is_object()) {
            auto it = v.find(key->get_ref<const std::string&>());
            if (it != v.end()) member = value.Member(*it);
          }
          if (item.key_slot >= 0) slots[item.key_slot].value = member;
          if (item.value == nullptr) return entry(e + 1);
          return Destructure(*item.value, member, slots, slot_env, [&] { return entry(e + 1); });
        });
      };
      return entry(0);
    }
  }
  return Fail("unknown pattern");
}

Flow Interpreter::EvalBinding(const Op& op, const Frame* env, const Value& input,
                              const PathNode* path, Emit emit) {
  Slots slots(env, op.slots);
  if (op.kind == OpKind::kBind) {
    // `source as P1 ?// P2 ... | body`: each source output destructured by
    // the first pattern; when destructuring or the body fails, the next
    // pattern is tried with every variable reset to null.
    return EvalValue(op.operand(0), env, input, [&](const Value& v) -> Flow {
      for (size_t i = 0; i < op.patterns.size(); ++i) {
        slots.Reset();
        bool last = i + 1 == op.patterns.size();
        Flow flow = Destructure(op.patterns[i], v, slots.data(), slots.top(), [&] {
          return Eval(op.operand(1), slots.top(), input, path, emit);
        });
        if (flow != Flow::kError || last || error_is_bound()) return flow;
        ClearError();
      }
      return Flow::kContinue;
    });
  }

  const Pattern& pattern = op.patterns[0];
  bool is_foreach = op.kind == OpKind::kForeach;
  // The state is the last output of the update for each item (an update
  // with no output leaves it as it was, as in gojq).
  return EvalValue(op.operand(1), env, input, [&](const Value& init) -> Flow {
    Value state = init;
    Flow flow = EvalValue(op.operand(0), env, input, [&](const Value& item) {
      return Destructure(pattern, item, slots.data(), slots.top(), [&]() -> Flow {
        return EvalValue(op.operand(2), slots.top(), state, [&](const Value& next) -> Flow {
          state = next;
          if (!is_foreach) return Flow::kContinue;
          if (op.child(3) == nullptr) return EmitComputed(input, path, next, emit);
          return EvalValue(op.operand(3), slots.top(), next, [&](const Value& extracted) {
            return EmitComputed(input, path, extracted, emit);
          });
        });
      });
    });
    if (flow != Flow::kContinue || is_foreach) return flow;
    return EmitComputed(input, path, state, emit);
  });
}

}  // namespace wm::expressions::native
