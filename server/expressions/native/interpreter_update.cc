// The assignment operators, as gojq defines them:
//   lhs = rhs     for each rhs output $v: every path of lhs set to $v;
//   lhs |= f      every path of lhs set to f's first output on its value,
//                 or deleted when f has none;
//   lhs op= rhs   for each rhs output $v: lhs |= . op $v (`//=` too).
// Paths are those of lhs on the input; the input is copied once per
// result and changed in place.

#include <vector>

#include "server/expressions/native/interpreter.h"
#include "server/expressions/native/json_text.h"
#include "server/expressions/native/operators.h"
#include "server/expressions/native/paths.h"
#include "server/expressions/native/value_size.h"

namespace wm::expressions::native {
namespace {

// Arrays grow by at most this many elements through one index: a path may
// not turn `.[1e9] = 1` into a gigabyte of nulls.
constexpr int64_t kMaxArrayIndex = 1 << 20;

// The path of `op` when it is a chain of constant steps from `.`
// (`.a[0]."b"`), as gojq's toIndices finds it; false otherwise.
bool ConstantPath(const Op& op, Json& path) {
  if (op.kind == OpKind::kIdentity) {
    path = Json::array();
    return true;
  }
  if (op.kind != OpKind::kIndex || op.optional || op.operand(1).kind != OpKind::kConstant) {
    return false;
  }
  const Json& key = op.operand(1).constant;
  if (!key.is_string() && !key.is_number()) return false;
  if (!ConstantPath(op.operand(0), path)) return false;
  path.push_back(key);
  return true;
}

// The arithmetic operator of an arithmetic update: `a += b` sets a to
// `a + b`, and so on.
NodeKind ArithmeticOfUpdate(NodeKind update) {
  switch (update) {
    case NodeKind::kUpdateAdd:
      return NodeKind::kAdd;
    case NodeKind::kUpdateSub:
      return NodeKind::kSubtract;
    case NodeKind::kUpdateMul:
      return NodeKind::kMultiply;
    case NodeKind::kUpdateDiv:
      return NodeKind::kDivide;
    case NodeKind::kUpdateMod:
      return NodeKind::kModulo;
    default:
      return update;  // not arithmetic: ArithmeticOf refuses it
  }
}

}  // namespace

Flow Interpreter::EvalUpdate(const Op& op, const Frame* env, const Value& input,
                             const PathNode* path, Emit emit) {
  Json constant_path;
  if (op.binary == NodeKind::kAssign && ConstantPath(op.operand(0), constant_path)) {
    // gojq sets a constant path directly (setpath), without walking it.
    return EvalValue(op.operand(1), env, input, [&](const Value& value) -> Flow {
      if (!Charge(ApproximateBytes(*input))) return Flow::kError;
      Json state = *input;
      if (auto status = SetPath(state, constant_path, *value, kMaxArrayIndex); !status.ok()) {
        return Fail("setpath(" + Preview(constant_path) + "; " + Preview(*value) +
                    ") cannot be applied to " + Preview(*input) + ": " +
                    std::string(status.message()));
      }
      return EmitComputed(input, path, Value::Owned(std::move(state)), emit);
    });
  }
  std::vector<Json> paths;
  Flow flow = Eval(op.operand(0), env, input, RootPath(), [&](const Value& v, const PathNode* p) {
    Json array = PathArray(p);
    if (array.is_null()) return Fail("invalid path against: " + TypePreview(*v));
    paths.push_back(std::move(array));
    return Flow::kContinue;
  });
  if (flow != Flow::kContinue) return flow;
  if (!Charge(ApproximateBytes(*input))) return Flow::kError;

  // `=` sets without reading (gojq's setpath); the others read each path
  // first (getpath).
  bool reads = op.binary != NodeKind::kAssign;
  auto modify = [&](absl::FunctionRef<Flow(const Value&, Json&, bool&)> update) -> Flow {
    Json state = *input;
    Json deletions = Json::array();
    for (const Json& p : paths) {
      Value current;
      if (reads) {
        auto got = GetPath(state, p);
        if (!got.ok()) {
          return Fail("getpath(" + Preview(p) + ") cannot be applied to " + Preview(state) + ": " +
                      std::string(got.status().message()));
        }
        current = Value::Owned(*std::move(got));
      }
      Json replacement;
      bool present = false;
      Flow f = update(current, replacement, present);
      if (f != Flow::kContinue) return f;
      if (!present) {
        deletions.push_back(p);
        continue;
      }
      std::string value_preview = Preview(replacement);
      if (auto status = SetPath(state, p, std::move(replacement), kMaxArrayIndex); !status.ok()) {
        // gojq's text for a failed setpath of an assignment.
        return Fail("setpath(" + Preview(p) + "; " + value_preview + ") cannot be applied to " +
                    Preview(state) + ": " + std::string(status.message()));
      }
    }
    if (!deletions.empty()) {
      if (auto status = DeletePaths(state, deletions); !status.ok()) return Fail(status);
    }
    return EmitComputed(input, path, Value::Owned(std::move(state)), emit);
  };

  if (op.binary == NodeKind::kUpdate) {
    return modify([&](const Value& current, Json& out, bool& present) {
      // The first output of the update, as gojq's label/break does.
      Frame stop;
      Flow f = EvalValue(op.operand(1), env, current, [&](const Value& v) {
        out = *v;
        present = true;
        return BreakTo(&stop);
      });
      if (f == Flow::kBreak && break_target() == &stop) return Flow::kContinue;
      return f;
    });
  }

  return EvalValue(op.operand(1), env, input, [&](const Value& operand) -> Flow {
    if (op.binary == NodeKind::kAssign) {
      return modify([&](const Value&, Json& out, bool& present) {
        out = *operand;
        present = true;
        return Flow::kContinue;
      });
    }
    return modify([&](const Value& current, Json& out, bool& present) -> Flow {
      if (op.binary == NodeKind::kUpdateAlt) {
        out = Truthy(*current) ? *current : *operand;
      } else if (Flow flow = ArithmeticOf(ArithmeticOfUpdate(op.binary), *current, *operand, out);
                 flow != Flow::kContinue) {
        return flow;
      }
      present = true;
      return Flow::kContinue;
    });
  });
}

}  // namespace wm::expressions::native
