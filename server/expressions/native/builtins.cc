#include "server/expressions/native/builtins.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "re2/re2.h"
#include "server/common/json_reader.h"
#include "server/expressions/native/format.h"
#include "server/expressions/native/interpreter.h"
#include "server/expressions/native/json_text.h"
#include "server/expressions/native/operators.h"
#include "server/expressions/native/paths.h"
#include "server/expressions/native/utf8.h"
#include "server/expressions/native/value_size.h"

namespace wm::expressions::native {
namespace {

using Result = absl::StatusOr<Json>;

absl::Status TypeError0(const char* name, const Json& v) {
  return absl::InvalidArgumentError(absl::StrCat(name, " cannot be applied to: ", TypePreview(v)));
}
absl::Status TypeError1(const char* name, const Json& v, const Json& a) {
  return absl::InvalidArgumentError(
      absl::StrCat(name, "(", Preview(a), ") cannot be applied to: ", TypePreview(v)));
}

Flow Emit0(Interpreter& in, const Value& input, const PathNode* path, Result result, Emit emit) {
  // A builtin that ran out of budget inside (see Interpreter::Work) returns
  // any error; the pending bound is what counts.
  if (in.error_is_bound()) return Flow::kError;
  if (!result.ok()) return in.Fail(result.status());
  if (!in.Charge(ApproximateBytes(*result))) return Flow::kError;
  return in.EmitComputed(input, path, Value::Owned(*std::move(result)), emit);
}

// A builtin of the input alone.
template <Result (*F)(const Json&)>
Flow Of0(Interpreter& in, const Op&, const Frame*, const Value& input, const PathNode* path,
         Emit emit) {
  if (!in.Work(ShallowWorkUnits(*input))) return Flow::kError;
  return Emit0(in, input, path, F(*input), emit);
}

// A builtin of the input and one value argument (each output of it).
template <Result (*F)(const Json&, const Json&)>
Flow Of1(Interpreter& in, const Op& call, const Frame* env, const Value& input,
         const PathNode* path, Emit emit) {
  return in.EvalOperand(call.operand(0), env, input, path, [&](const Value& a) {
    if (!in.Work(ShallowWorkUnits(*input) + ShallowWorkUnits(*a))) return Flow::kError;
    return Emit0(in, input, path, F(*input, *a), emit);
  });
}

// Two value arguments, the first varying slowest.
template <Result (*F)(const Json&, const Json&, const Json&)>
Flow Of2(Interpreter& in, const Op& call, const Frame* env, const Value& input,
         const PathNode* path, Emit emit) {
  return in.EvalOperand(call.operand(0), env, input, path, [&](const Value& a) {
    return in.EvalOperand(call.operand(1), env, input, path, [&](const Value& b) {
      size_t units = ShallowWorkUnits(*input) + ShallowWorkUnits(*a) + ShallowWorkUnits(*b);
      if (!in.Work(units)) return Flow::kError;
      return Emit0(in, input, path, F(*input, *a, *b), emit);
    });
  });
}

// A builtin of the input and one value argument whose work can grow faster
// than its values (searching for a value within another): it meters itself
// with Interpreter::Work and returns BudgetSpent() when that fails.
template <Result (*F)(Interpreter&, const Json&, const Json&)>
Flow Metered1(Interpreter& in, const Op& call, const Frame* env, const Value& input,
              const PathNode* path, Emit emit) {
  return in.EvalOperand(call.operand(0), env, input, path, [&](const Value& a) {
    return Emit0(in, input, path, F(in, *input, *a), emit);
  });
}

// What a metered builtin returns once Interpreter::Work has failed; Emit0
// raises the pending bound instead.
absl::Status BudgetSpent() { return absl::ResourceExhaustedError("time budget spent"); }

// Calls `found` with the byte offset of each occurrence of `needle` (not
// empty) in `s`, overlapping ones included, until it returns false:
// Knuth-Morris-Pratt, linear in both strings where std::string::find is
// quadratic (needle "aa…ab" in "aaa…a"). Meters its work; false when the
// budget ran out.
bool ForEachOccurrence(Interpreter& in, std::string_view s, std::string_view needle,
                       absl::FunctionRef<bool(size_t)> found) {
  if (!in.Work((s.size() + 2 * needle.size()) / kBytesPerWorkUnit)) return false;
  // border[i]: the length of the longest proper prefix of needle[0..i]
  // that is also its suffix.
  std::vector<size_t> border(needle.size(), 0);
  for (size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = border[k - 1];
    if (needle[i] == needle[k]) ++k;
    border[i] = k;
  }
  for (size_t i = 0, k = 0; i < s.size(); ++i) {
    while (k > 0 && s[i] != needle[k]) k = border[k - 1];
    if (s[i] == needle[k]) ++k;
    if (k == needle.size()) {
      if (!found(i + 1 - needle.size())) return true;
      k = border[k - 1];
    }
  }
  return true;
}

// ---- Generators and control --------------------------------------------

Flow Empty(Interpreter&, const Op&, const Frame*, const Value&, const PathNode*, Emit) {
  return Flow::kContinue;
}

Flow Error0(Interpreter& in, const Op&, const Frame*, const Value& input, const PathNode*, Emit) {
  return in.FailWithValue(input);
}

Flow Error1(Interpreter& in, const Op& call, const Frame* env, const Value& input, const PathNode*,
            Emit) {
  return in.EvalValue(call.operand(0), env, input,
                      [&](const Value& v) { return in.FailWithValue(v); });
}

Flow Not(Interpreter& in, const Op&, const Frame*, const Value& input, const PathNode* path,
         Emit emit) {
  return in.EmitComputed(input, path, Value::Bool(!Truthy(*input)), emit);
}

Flow Identity(Interpreter&, const Op&, const Frame*, const Value& input, const PathNode* path,
              Emit emit) {
  return emit(input, path);
}

Flow Plus(Interpreter& in, const Op&, const Frame*, const Value& input, const PathNode* path,
          Emit emit) {
  if (!input->is_number()) return in.Fail("cannot plus: " + TypePreview(*input));
  return emit(input, path);
}

Flow Select(Interpreter& in, const Op& call, const Frame* env, const Value& input,
            const PathNode* path, Emit emit) {
  return in.EvalValue(call.operand(0), env, input, [&](const Value& condition) {
    return Truthy(*condition) ? emit(input, path) : Flow::kContinue;
  });
}

Flow RecurseWith(Interpreter& in, const Op& f, const Frame* env, const Value& input,
                 const PathNode* path, Emit emit) {
  Flow flow = emit(input, path);
  if (flow != Flow::kContinue) return flow;
  return in.Eval(f, env, input, path, [&](const Value& v, const PathNode* p) {
    return RecurseWith(in, f, env, v, p, emit);
  });
}

Flow Recurse1(Interpreter& in, const Op& call, const Frame* env, const Value& input,
              const PathNode* path, Emit emit) {
  return RecurseWith(in, call.operand(0), env, input, path, emit);
}

Flow Recurse0(Interpreter& in, const Op& call, const Frame* env, const Value& input,
              const PathNode* path, Emit emit) {
  static const Op* const kChildren = [] {
    auto* op = new Op;
    op->kind = OpKind::kIterate;
    op->optional = true;
    auto identity = std::make_unique<Op>();
    identity->kind = OpKind::kIdentity;
    op->children.push_back(std::move(identity));
    return op;
  }();
  return RecurseWith(in, *kChildren, env, input, path, emit);
}

// Stops `g` after its first output (label/break in gojq's jq).
Flow First(Interpreter& in, const Op& call, const Frame* env, const Value& input,
           const PathNode* path, Emit emit) {
  Frame stop;
  Flow downstream = Flow::kContinue;
  Flow flow = in.Eval(call.operand(0), env, input, path, [&](const Value& v, const PathNode* p) {
    downstream = emit(v, p);
    if (downstream != Flow::kContinue) return downstream;
    return in.BreakTo(&stop);
  });
  if (flow == Flow::kBreak && in.break_target() == &stop) return Flow::kContinue;
  return flow;
}

Flow Last(Interpreter& in, const Op& call, const Frame* env, const Value& input,
          const PathNode* path, Emit emit) {
  Value last;
  const PathNode* last_path = nullptr;
  bool any = false;
  Json last_path_array;
  Flow flow = in.Eval(call.operand(0), env, input, path, [&](const Value& v, const PathNode* p) {
    last = v;
    any = true;
    // The tracked path lives in the generator's frames: keep a copy.
    if (p != nullptr) last_path_array = Interpreter::PathArray(p);
    last_path = p;
    return Flow::kContinue;
  });
  if (flow != Flow::kContinue || !any) return flow;
  if (path == nullptr) return emit(last, nullptr);
  if (last_path_array.is_null()) return emit(last, InvalidPath());
  std::vector<PathNode> nodes(last_path_array.size());
  const PathNode* p = RootPath();
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i] = {p, PathNode::Kind::kKey, &last_path_array[i]};
    p = &nodes[i];
  }
  return emit(last, p);
}

Flow Limit(Interpreter& in, const Op& call, const Frame* env, const Value& input,
           const PathNode* path, Emit emit) {
  return in.EvalValue(call.operand(0), env, input, [&](const Value& n) -> Flow {
    if (!n->is_number()) return in.Fail("cannot compare: " + TypePreview(*n));
    double count = ToDouble(*n);
    if (count < 0) return in.Fail("limit doesn't support negative count");
    if (count == 0) return Flow::kContinue;
    Frame stop;
    double seen = 0;
    Flow flow = in.Eval(call.operand(1), env, input, path, [&](const Value& v, const PathNode* p) {
      Flow downstream = emit(v, p);
      if (downstream != Flow::kContinue) return downstream;
      return ++seen >= count ? in.BreakTo(&stop) : Flow::kContinue;
    });
    if (flow == Flow::kBreak && in.break_target() == &stop) return Flow::kContinue;
    return flow;
  });
}

Flow IsEmpty(Interpreter& in, const Op& call, const Frame* env, const Value& input,
             const PathNode* path, Emit emit) {
  Frame stop;
  bool empty = true;
  Flow flow = in.EvalValue(call.operand(0), env, input, [&](const Value&) {
    empty = false;
    return in.BreakTo(&stop);
  });
  if (flow == Flow::kBreak && in.break_target() == &stop) flow = Flow::kContinue;
  if (flow != Flow::kContinue) return flow;
  return in.EmitComputed(input, path, Value::Bool(empty), emit);
}

// any(g; cond) / all(g; cond): stops at the first deciding output.
template <bool kAny>
Flow AnyAll(Interpreter& in, const Op* generator, const Op& condition, const Frame* env,
            const Value& input, const PathNode* path, Emit emit) {
  Frame stop;
  bool decided = false;
  auto check = [&](const Value& item) {
    return in.EvalValue(condition, env, item, [&](const Value& c) {
      if (Truthy(*c) == kAny) {
        decided = true;
        return in.BreakTo(&stop);
      }
      return Flow::kContinue;
    });
  };
  Flow flow;
  if (generator == nullptr) {  // .[]
    const Json& v = *input;
    if (!v.is_structured()) return in.Fail("cannot iterate over: " + TypePreview(v));
    flow = Flow::kContinue;
    for (auto it = v.begin(); it != v.end() && flow == Flow::kContinue; ++it) {
      flow = check(input.Member(*it));
    }
  } else {
    flow = in.EvalValue(*generator, env, input, check);
  }
  if (flow == Flow::kBreak && in.break_target() == &stop) flow = Flow::kContinue;
  if (flow != Flow::kContinue) return flow;
  return in.EmitComputed(input, path, Value::Bool(kAny ? decided : !decided), emit);
}

const Op& IdentityOp() {
  static const Op* const kIdentity = new Op;
  return *kIdentity;
}

template <bool kAny>
Flow AnyAll0(Interpreter& in, const Op&, const Frame* env, const Value& input, const PathNode* path,
             Emit emit) {
  return AnyAll<kAny>(in, nullptr, IdentityOp(), env, input, path, emit);
}
template <bool kAny>
Flow AnyAll1(Interpreter& in, const Op& call, const Frame* env, const Value& input,
             const PathNode* path, Emit emit) {
  return AnyAll<kAny>(in, nullptr, call.operand(0), env, input, path, emit);
}
template <bool kAny>
Flow AnyAll2(Interpreter& in, const Op& call, const Frame* env, const Value& input,
             const PathNode* path, Emit emit) {
  return AnyAll<kAny>(in, call.child(0), call.operand(1), env, input, path, emit);
}

Flow RangeOf(Interpreter& in, const Value& input, const PathNode* path, const Json& from,
             const Json& to, const Json& by, Emit emit) {
  for (const Json* x : {&from, &to, &by}) {
    if (!x->is_number()) return in.Fail("range cannot be applied to: " + TypePreview(*x));
  }
  bool ints = from.is_number_integer() && to.is_number_integer() && by.is_number_integer();
  if (ints) {
    int64_t start = from.get<int64_t>(), end = to.get<int64_t>(), step = by.get<int64_t>();
    if (step == 0) return Flow::kContinue;
    for (int64_t x = start; step > 0 ? x < end : x > end;) {
      if (in.CheckBounds() == Flow::kError) return Flow::kError;
      Flow flow = in.EmitComputed(input, path, Value::Owned(Json(x)), emit);
      if (flow != Flow::kContinue) return flow;
      if (__builtin_add_overflow(x, step, &x)) break;
    }
    return Flow::kContinue;
  }
  double start = ToDouble(from), end = ToDouble(to), step = ToDouble(by);
  if (step == 0) return Flow::kContinue;
  for (double x = start; step > 0 ? x < end : x > end; x += step) {
    if (in.CheckBounds() == Flow::kError) return Flow::kError;
    Flow flow = in.EmitComputed(input, path, Value::Owned(MakeNumber(x)), emit);
    if (flow != Flow::kContinue) return flow;
  }
  return Flow::kContinue;
}

Flow Range1(Interpreter& in, const Op& call, const Frame* env, const Value& input,
            const PathNode* path, Emit emit) {
  return in.EvalValue(call.operand(0), env, input, [&](const Value& to) {
    return RangeOf(in, input, path, Json(int64_t{0}), *to, Json(int64_t{1}), emit);
  });
}
Flow Range2(Interpreter& in, const Op& call, const Frame* env, const Value& input,
            const PathNode* path, Emit emit) {
  return in.EvalValue(call.operand(0), env, input, [&](const Value& from) {
    return in.EvalValue(call.operand(1), env, input, [&](const Value& to) {
      return RangeOf(in, input, path, *from, *to, Json(int64_t{1}), emit);
    });
  });
}
Flow Range3(Interpreter& in, const Op& call, const Frame* env, const Value& input,
            const PathNode* path, Emit emit) {
  return in.EvalValue(call.operand(0), env, input, [&](const Value& from) {
    return in.EvalValue(call.operand(1), env, input, [&](const Value& to) {
      return in.EvalValue(call.operand(2), env, input, [&](const Value& by) {
        return RangeOf(in, input, path, *from, *to, *by, emit);
      });
    });
  });
}

// ---- Paths -------------------------------------------------------------

Flow PathOf(Interpreter& in, const Op& call, const Frame* env, const Value& input,
            const PathNode* path, Emit emit) {
  return in.Eval(call.operand(0), env, input, RootPath(), [&](const Value& v, const PathNode* p) {
    Json array = Interpreter::PathArray(p);
    if (array.is_null()) return in.Fail("invalid path against: " + TypePreview(*v));
    return in.EmitComputed(input, path, Value::Owned(std::move(array)), emit);
  });
}

Flow GetPathOf(Interpreter& in, const Op& call, const Frame* env, const Value& input,
               const PathNode* path, Emit emit) {
  return in.EvalValue(call.operand(0), env, input, [&](const Value& keys) -> Flow {
    if (!keys->is_array()) {
      return in.Fail("getpath(" + Preview(*keys) +
                     ") cannot be applied to: " + TypePreview(*input));
    }
    auto value = GetPath(*input, *keys);
    if (!value.ok() && absl::IsFailedPrecondition(value.status())) {
      return in.Fail("getpath(" + Preview(*keys) +
                     ") cannot be applied to: " + TypePreview(*input));
    }
    if (!value.ok()) {
      return in.Fail("getpath(" + Preview(*keys) + ") cannot be applied to " + Preview(*input) +
                     ": " + std::string(value.status().message()));
    }
    Value out = Value::Owned(*std::move(value));
    if (path == nullptr) return emit(out, nullptr);
    if (path->kind == PathNode::Kind::kInvalid) {
      return in.Fail("invalid path against: " + TypePreview(*input));
    }
    std::vector<PathNode> nodes(keys->size());
    const PathNode* p = path;
    for (size_t i = 0; i < nodes.size(); ++i) {
      nodes[i] = {p, PathNode::Kind::kKey, &(*keys)[i]};
      p = &nodes[i];
    }
    return emit(out, p);
  });
}

Result SetPathOf(const Json& input, const Json& keys, const Json& value) {
  if (!keys.is_array()) {
    return absl::InvalidArgumentError("setpath(" + Preview(keys) + "; " + Preview(value) +
                                      ") cannot be applied to: " + TypePreview(input));
  }
  Json out = input;
  if (auto status = SetPath(out, keys, value, 1 << 20); !status.ok()) {
    return absl::InvalidArgumentError("setpath(" + Preview(keys) + "; " + Preview(value) +
                                      ") cannot be applied to " + Preview(input) + ": " +
                                      std::string(status.message()));
  }
  return out;
}

Result DelPathsOf(const Json& input, const Json& paths) {
  if (!paths.is_array()) return TypeError1("delpaths", input, paths);
  Json out = input;
  if (auto status = DeletePaths(out, paths); !status.ok()) {
    return absl::InvalidArgumentError("delpaths(" + Preview(paths) + ") cannot be applied to " +
                                      Preview(input) + ": " + std::string(status.message()));
  }
  return out;
}

// ---- Values ------------------------------------------------------------

Result Length(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return Json(int64_t{0});
    case Json::value_t::boolean:
      return TypeError0("length", v);
    case Json::value_t::string: {
      return Json(CharacterCount(v.get_ref<const std::string&>()));
    }
    case Json::value_t::array:
    case Json::value_t::object:
      return Json(static_cast<int64_t>(v.size()));
    default:
      if (v.is_number_float()) return Json(std::fabs(v.get<double>()));
      if (ToInt(v) < 0) return Negate(v);
      return v;
  }
}

Result Utf8ByteLength(const Json& v) {
  if (!v.is_string()) return TypeError0("utf8bytelength", v);
  return Json(static_cast<int64_t>(v.get_ref<const std::string&>().size()));
}

Result Keys(const Json& v) {
  Json out = Json::array();
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) out.push_back(it.key());
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) out.push_back(static_cast<int64_t>(i));
  } else {
    return TypeError0("keys", v);
  }
  return out;
}

Result Has(const Json& v, const Json& key) {
  if (v.is_null()) return Json(false);
  if (v.is_object() && key.is_string()) return Json(v.contains(key.get<std::string>()));
  if (v.is_array() && key.is_number()) {
    int64_t i = ToInt(key);
    return Json(i >= 0 && i < static_cast<int64_t>(v.size()));
  }
  return TypeError1("has", v, key);
}

// Whether `l` contains `r` as jq's `contains` means it; false too when the
// budget ran out (then a bound is pending: every array needle is compared
// with every element, so the work is the product of the sizes).
bool ContainsValue(Interpreter& in, const Json& l, const Json& r) {
  if (l.is_object() && r.is_object()) {
    if (!in.Work(r.size())) return false;
    for (auto it = r.begin(); it != r.end(); ++it) {
      auto found = l.find(it.key());
      if (found == l.end() || !ContainsValue(in, *found, *it)) return false;
    }
    return true;
  }
  if (l.is_array() && r.is_array()) {
    for (const Json& needle : r) {
      if (!in.Work(l.size())) return false;
      bool any = false;
      for (const Json& x : l) {
        if (ContainsValue(in, x, needle)) {
          any = true;
          break;
        }
        if (in.error_is_bound()) return false;
      }
      if (!any) return false;
    }
    return true;
  }
  if (l.is_string() && r.is_string()) {
    const std::string& needle = r.get_ref<const std::string&>();
    if (needle.empty()) return true;
    bool any = false;
    ForEachOccurrence(in, l.get_ref<const std::string&>(), needle, [&](size_t) {
      any = true;
      return false;
    });
    return any;
  }
  return Equal(l, r);
}

Result Contains(Interpreter& in, const Json& v, const Json& x) {
  bool same_type = std::string(TypeName(v)) == TypeName(x);
  if (!same_type || (v.is_boolean() && v != x)) {
    return TypeError1("contains", v, x);
  }
  bool contains = ContainsValue(in, v, x);
  if (in.error_is_bound()) return BudgetSpent();
  return Json(contains);
}

Result AddAll(const Json& v) {
  if (!v.is_structured()) return TypeError0("add", v);
  // In place where Add would copy the sum so far: adding n strings or
  // arrays one by one is quadratic otherwise. Objects' members are
  // gathered and sorted into the sum once (a later object's value wins, as
  // in Add): inserting them one by one into a sorted object is quadratic
  // too (`from_entries` adds one object per entry).
  Json sum(nullptr);
  Json::object_t::Container members;
  bool gathering = false;  // sum is an object whose members are in `members`
  const auto settle = [&] {
    if (!gathering) return;
    sum.get_ref<Json::object_t&>().AssignUnsorted(std::move(members));
    members = {};
    gathering = false;
  };
  for (const Json& x : v) {
    if (sum.is_string() && x.is_string()) {
      sum.get_ref<std::string&>() += x.get_ref<const std::string&>();
    } else if (sum.is_array() && x.is_array()) {
      sum.insert(sum.end(), x.begin(), x.end());
    } else if (sum.is_object() && x.is_object()) {
      if (!gathering) {
        Json::object_t& so_far = sum.get_ref<Json::object_t&>();
        members.assign(std::make_move_iterator(so_far.begin()),
                       std::make_move_iterator(so_far.end()));
        so_far.clear();
        gathering = true;
      }
      const Json::object_t& more = x.get_ref<const Json::object_t&>();
      members.insert(members.end(), more.begin(), more.end());
    } else {
      settle();
      auto next = Add(sum, x);
      if (!next.ok()) return next;
      sum = *std::move(next);
    }
  }
  settle();
  return sum;
}

Result ToString(const Json& v) { return Json(ToText(v)); }

// Texts that never change, as Jsons that live as long as the process: what
// tostring and type give most often (a status matcher is `(...) |
// tostring` of a boolean) is emitted without building a string each time.
// REQUIRES: `text` is one of kTexts.
const Json& ConstantText(std::string_view text) {
  static constexpr std::string_view kTexts[] = {"null",   "false",  "true",  "boolean",
                                                "number", "string", "array", "object"};
  static const Json* const kJsons = [] {
    auto* jsons = new Json[std::size(kTexts)];
    for (size_t i = 0; i < std::size(kTexts); ++i) jsons[i] = std::string(kTexts[i]);
    return jsons;
  }();
  size_t i = 0;
  while (i + 1 < std::size(kTexts) && kTexts[i] != text) ++i;
  return kJsons[i];
}

// tostring: a string is its own text, and null and booleans have constant
// ones; only numbers, arrays and objects are written out.
Flow ToStringOf(Interpreter& in, const Op& call, const Frame* env, const Value& input,
                const PathNode* path, Emit emit) {
  const Json& v = *input;
  if (v.is_string()) return in.EmitComputed(input, path, input, emit);
  if (v.is_null() || v.is_boolean()) {
    const std::string_view text = v.is_null() ? "null" : v.get<bool>() ? "true" : "false";
    return in.EmitComputed(input, path, Value::Borrowed(ConstantText(text)), emit);
  }
  return Of0<ToString>(in, call, env, input, path, emit);
}

Result ToNumber(const Json& v) {
  if (v.is_number()) return v;
  if (!v.is_string()) return TypeError0("tonumber", v);
  const std::string& s = v.get_ref<const std::string&>();
  // gojq accepts a JSON number only (no spaces, no "nan", no hex).
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t digits = i;
  while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
  bool ok = i > digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t fraction = i;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
    ok = ok || i > fraction;
  }
  if (ok && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exponent = i;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
    ok = i > exponent;
  }
  if (!ok || i != s.size()) {
    return absl::InvalidArgumentError("tonumber cannot be applied to " + Preview(v) +
                                      ": invalid number");
  }
  if (s.find_first_of(".eE") == std::string::npos) {
    char* end = nullptr;
    errno = 0;
    long long n = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0) return Json(static_cast<int64_t>(n));
  }
  return MakeNumber(std::strtod(s.c_str(), nullptr));
}

Flow TypeOf(Interpreter& in, const Op&, const Frame*, const Value& input, const PathNode* path,
            Emit emit) {
  return in.EmitComputed(input, path, Value::Borrowed(ConstantText(TypeName(*input))), emit);
}

Result ToJson(const Json& v) { return Json(JsonText(v)); }

Result FromJson(const Json& v) {
  if (!v.is_string()) return TypeError0("fromjson", v);
  auto parsed = ParseJson(v.get_ref<const std::string&>());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError("fromjson cannot be applied to " + Preview(v) + ": " +
                                      std::string(parsed.status().message()));
  }
  return *std::move(parsed);
}

Result AsciiDowncase(const Json& v) {
  if (!v.is_string()) return TypeError0("ascii_downcase", v);
  return Json(absl::AsciiStrToLower(v.get_ref<const std::string&>()));
}
Result AsciiUpcase(const Json& v) {
  if (!v.is_string()) return TypeError0("ascii_upcase", v);
  return Json(absl::AsciiStrToUpper(v.get_ref<const std::string&>()));
}

Result StartsWith(const Json& v, const Json& x) {
  if (!v.is_string() || !x.is_string()) return TypeError1("startswith", v, x);
  return Json(absl::StartsWith(v.get_ref<const std::string&>(), x.get_ref<const std::string&>()));
}
Result EndsWith(const Json& v, const Json& x) {
  if (!v.is_string() || !x.is_string()) return TypeError1("endswith", v, x);
  return Json(absl::EndsWith(v.get_ref<const std::string&>(), x.get_ref<const std::string&>()));
}
Result LtrimStr(const Json& v, const Json& x) {
  if (!v.is_string() || !x.is_string()) return TypeError1("ltrimstr", v, x);
  absl::string_view s = v.get_ref<const std::string&>();
  if (!absl::ConsumePrefix(&s, x.get_ref<const std::string&>())) return v;
  return Json(std::string(s));
}
Result RtrimStr(const Json& v, const Json& x) {
  if (!v.is_string() || !x.is_string()) return TypeError1("rtrimstr", v, x);
  absl::string_view s = v.get_ref<const std::string&>();
  if (!absl::ConsumeSuffix(&s, x.get_ref<const std::string&>())) return v;
  return Json(std::string(s));
}
Result TrimStr(const Json& v, const Json& x) {
  if (!v.is_string() || !x.is_string()) return TypeError1("trimstr", v, x);
  absl::string_view s = v.get_ref<const std::string&>();
  absl::ConsumePrefix(&s, x.get_ref<const std::string&>());
  absl::ConsumeSuffix(&s, x.get_ref<const std::string&>());
  return Json(std::string(s));
}

// Go's unicode.IsSpace for the ASCII range and the common Unicode spaces.
bool IsSpace(absl::string_view s, size_t i, size_t* length) {
  unsigned char c = s[i];
  *length = 1;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return true;
  static constexpr const char* kSpaces[] = {"\u0085", "\u00a0", "\u1680", "\u2000", "\u2001",
                                            "\u2002", "\u2003", "\u2004", "\u2005", "\u2006",
                                            "\u2007", "\u2008", "\u2009", "\u200a", "\u2028",
                                            "\u2029", "\u202f", "\u205f", "\u3000"};
  for (const char* space : kSpaces) {
    if (absl::StartsWith(s.substr(i), space)) {
      *length = std::char_traits<char>::length(space);
      return true;
    }
  }
  return false;
}

template <bool kLeft, bool kRight>
Result Trim(const Json& v) {
  if (!v.is_string()) return TypeError0(kLeft && kRight ? "trim" : kLeft ? "ltrim" : "rtrim", v);
  absl::string_view s = v.get_ref<const std::string&>();
  size_t length;
  if (kLeft) {
    while (!s.empty() && IsSpace(s, 0, &length)) s.remove_prefix(length);
  }
  if (kRight) {
    bool trimmed = true;
    while (!s.empty() && trimmed) {
      trimmed = false;
      for (size_t back = 1; back <= std::min<size_t>(3, s.size()); ++back) {
        size_t at = s.size() - back;
        if (IsSpace(s, at, &length) && at + length == s.size()) {
          s.remove_suffix(length);
          trimmed = true;
          break;
        }
      }
    }
  }
  return Json(std::string(s));
}

Result Join(const Json& v, const Json& separator) {
  if (!v.is_structured()) return TypeError1("join", v, separator);
  // gojq adds "" + x1 + sep + x2 ...: null adds nothing, numbers and
  // booleans add their text, anything else fails as `+` does.
  Json out("");
  bool first = true;
  for (const Json& x : v) {
    if (!first) {
      auto joined = Add(out, separator);
      if (!joined.ok()) return joined;
      out = *std::move(joined);
    }
    first = false;
    auto joined = Add(out, x.is_number() || x.is_boolean() ? Json(JsonText(x)) : x);
    if (!joined.ok()) return joined;
    out = *std::move(joined);
  }
  return out;
}

Result Split1(const Json& v, const Json& separator) {
  if (!v.is_string()) return TypeError0("split", v);
  if (!separator.is_string()) return TypeError0("split", separator);
  // Go's strings.Split: "" splits into [""] (where `"" / ","` is []).
  if (v.get_ref<const std::string&>().empty()) return Json::array({""});
  return Divide(v, separator);
}

Result Explode(const Json& v) {
  if (!v.is_string()) return TypeError0("explode", v);
  Json out = Json::array();
  const std::string& s = v.get_ref<const std::string&>();
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    int length = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t code = length == 1 ? c : c & (0xFF >> (length + 1));
    for (int k = 1; k < length && i + k < s.size(); ++k) code = (code << 6) | (s[i + k] & 0x3F);
    out.push_back(static_cast<int64_t>(code));
    i += length;
  }
  return out;
}

Result Implode(const Json& v) {
  if (!v.is_array()) return TypeError0("implode", v);
  std::string out;
  for (const Json& x : v) {
    if (!x.is_number()) return TypeError0("implode", v);
    int64_t code = ToInt(x);
    if (code < 0 || code > 0x10FFFF || (code >= 0xD800 && code < 0xE000)) code = 0xFFFD;
    auto c = static_cast<uint32_t>(code);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return Json(std::move(out));
}

Result Reverse(const Json& v) {
  if (!v.is_array()) return TypeError0("reverse", v);
  Json out = v;
  std::reverse(out.begin(), out.end());
  return out;
}

Result Sort(const Json& v) {
  if (!v.is_array()) return TypeError0("sort", v);
  Json out = v;
  std::stable_sort(out.begin(), out.end(),
                   [](const Json& a, const Json& b) { return Compare(a, b) < 0; });
  return out;
}

Result Unique(const Json& v) {
  auto sorted = Sort(v);
  if (!sorted.ok()) return TypeError0("unique", v);
  Json out = Json::array();
  for (const Json& x : *sorted) {
    if (out.empty() || !Equal(out.back(), x)) out.push_back(x);
  }
  return out;
}

Result MinMax(const Json& v, bool minimum) {
  if (!v.is_array()) return TypeError0(minimum ? "min" : "max", v);
  if (v.empty()) return Json(nullptr);
  const Json* best = &v[0];
  for (const Json& x : v) {
    int c = Compare(x, *best);
    if (minimum ? c < 0 : c >= 0) best = &x;
  }
  return *best;
}
Result Min(const Json& v) { return MinMax(v, true); }
Result Max(const Json& v) { return MinMax(v, false); }

absl::Status FlattenInto(const Json& v, double depth, Json& out) {
  for (const Json& x : v) {
    if (x.is_array() && depth > 0) {
      if (auto status = FlattenInto(x, depth - 1, out); !status.ok()) return status;
    } else {
      out.push_back(x);
    }
  }
  return absl::OkStatus();
}
Result Flatten1(const Json& v, const Json& depth) {
  if (!v.is_structured()) return TypeError0("flatten", v);
  if (!depth.is_number()) return TypeError0("flatten", depth);
  if (ToDouble(depth) < 0) {
    return absl::InvalidArgumentError("flatten depth should not be negative: " + Preview(depth));
  }
  Json out = Json::array();
  if (auto status = FlattenInto(v, ToDouble(depth), out); !status.ok()) return status;
  return out;
}
Result Flatten0(const Json& v) {
  if (!v.is_structured()) return TypeError0("flatten", v);
  return Flatten1(v, Json(1e9));
}

template <double (*F)(double)>
Result Math(const Json& v, const char* name) {
  if (!v.is_number()) return TypeError0(name, v);
  return MakeNumber(F(ToDouble(v)));
}
Result Floor(const Json& v) {
  if (v.is_number_integer()) return v;
  return Math<std::floor>(v, "floor");
}
Result Ceil(const Json& v) {
  if (v.is_number_integer()) return v;
  return Math<std::ceil>(v, "ceil");
}
Result Round(const Json& v) {
  if (v.is_number_integer()) return v;
  return Math<std::round>(v, "round");
}
Result Sqrt(const Json& v) { return Math<std::sqrt>(v, "sqrt"); }
Result Fabs(const Json& v) { return Math<std::fabs>(v, "fabs"); }
Result Abs(const Json& v) {
  if (!v.is_number()) return TypeError0("abs", v);
  if (ToDouble(v) < 0 || (v.is_number_float() && std::signbit(v.get<double>()))) return Negate(v);
  return v;
}
Result Infinite(const Json&) { return Json(std::numeric_limits<double>::infinity()); }
Result Nan(const Json&) { return Json(std::nan("")); }
Result IsNan(const Json& v) {
  if (!v.is_number()) return TypeError0("isnan", v);
  return Json(v.is_number_float() && std::isnan(v.get<double>()));
}
Result IsInfinite(const Json& v) {
  if (!v.is_number()) return TypeError0("isinfinite", v);
  return Json(v.is_number_float() && std::isinf(v.get<double>()));
}
Result IsFinite(const Json& v) { return Json(v.is_number() && !std::isinf(ToDouble(v))); }
Result IsNormal(const Json& v) {
  if (!v.is_number()) return TypeError0("isnormal", v);
  return Json(std::isnormal(ToDouble(v)));
}
Result ToBoolean(const Json& v) {
  if (v.is_boolean()) return v;
  if (v.is_string() && v == "true") return Json(true);
  if (v.is_string() && v == "false") return Json(false);
  if (v.is_string()) {
    return absl::InvalidArgumentError("toboolean cannot be applied to " + Preview(v) +
                                      ": invalid boolean");
  }
  return TypeError0("toboolean", v);
}

Result ToEntries(const Json& v) {
  Json out = Json::array();
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      out.push_back({{"key", it.key()}, {"value", *it}});
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back({{"key", static_cast<int64_t>(i)}, {"value", v[i]}});
    }
  } else {
    return TypeError0("keys", v);
  }
  return out;
}

Result Indices(Interpreter& in, const Json& v, const Json& x) {
  if (v.is_null()) return Json(nullptr);
  if (v.is_string() && x.is_string()) {
    Json out = Json::array();
    const std::string& s = v.get_ref<const std::string&>();
    const std::string& needle = x.get_ref<const std::string&>();
    if (needle.empty()) return Json(nullptr);
    CharacterCounter characters(s);
    if (!ForEachOccurrence(in, s, needle, [&](size_t at) {
          out.push_back(characters.At(at));
          return true;
        })) {
      return BudgetSpent();
    }
    return out;
  }
  if (v.is_array() && x.is_array()) {
    Json out = Json::array();
    if (x.empty()) return Json(nullptr);
    for (size_t i = 0; i + x.size() <= v.size(); ++i) {
      if (!in.Work(x.size())) return BudgetSpent();
      bool match = true;
      for (size_t j = 0; j < x.size() && match; ++j) match = Equal(v[i + j], x[j]);
      if (match) out.push_back(static_cast<int64_t>(i));
    }
    return out;
  }
  if (v.is_array()) return Indices(in, v, Json::array({x}));
  return TypeError1("indices", v, x);
}
Result Index(Interpreter& in, const Json& v, const Json& x) {
  auto all = Indices(in, v, x);
  if (!all.ok() || !all->is_array() || all->empty()) return all.ok() ? Json(nullptr) : all;
  return (*all)[0];
}
Result Rindex(Interpreter& in, const Json& v, const Json& x) {
  auto all = Indices(in, v, x);
  if (!all.ok() || !all->is_array() || all->empty()) return all.ok() ? Json(nullptr) : all;
  return all->back();
}

// ---- With filter arguments --------------------------------------------

Flow Map(Interpreter& in, const Op& call, const Frame* env, const Value& input,
         const PathNode* path, Emit emit) {
  const Json& v = *input;
  if (!v.is_structured()) return in.Fail("cannot iterate over: " + TypePreview(v));
  Json out = Json::array();
  for (auto it = v.begin(); it != v.end(); ++it) {
    Flow flow = in.EvalValue(call.operand(0), env, input.Member(*it), [&](const Value& x) -> Flow {
      if (!in.Charge(ApproximateBytes(*x))) return Flow::kError;
      out.push_back(*x);
      return Flow::kContinue;
    });
    if (flow != Flow::kContinue) return flow;
  }
  return in.EmitComputed(input, path, Value::Owned(std::move(out)), emit);
}

// The keys `[f]` of every element of the input array, for the *_by
// functions.
Flow KeysBy(Interpreter& in, const Op& f, const Frame* env, const Value& input, const char* name,
            std::vector<Json>& keys) {
  // gojq's `def sort_by(f): _sort_by(map([f]))`: map iterates first
  // (objects too), then the native part wants an array.
  const Json& v = *input;
  if (!v.is_structured()) return in.Fail("cannot iterate over: " + TypePreview(v));
  for (const Json& x : v) {
    Json key = Json::array();
    Flow flow = in.EvalValue(f, env, input.Member(x), [&](const Value& k) {
      key.push_back(*k);
      return Flow::kContinue;
    });
    if (flow != Flow::kContinue) return flow;
    keys.push_back(std::move(key));
  }
  if (!v.is_array()) {
    return in.Fail(std::string(name) + "(" + Preview(Json(keys)) +
                   ") cannot be applied to: " + TypePreview(v));
  }
  return Flow::kContinue;
}

std::vector<size_t> SortedOrder(const std::vector<Json>& keys) {
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return Compare(keys[a], keys[b]) < 0; });
  return order;
}

Flow SortBy(Interpreter& in, const Op& call, const Frame* env, const Value& input,
            const PathNode* path, Emit emit) {
  std::vector<Json> keys;
  if (Flow flow = KeysBy(in, call.operand(0), env, input, "sort_by", keys);
      flow != Flow::kContinue) {
    return flow;
  }
  Json out = Json::array();
  for (size_t i : SortedOrder(keys)) out.push_back((*input)[i]);
  return in.EmitComputed(input, path, Value::Owned(std::move(out)), emit);
}

Flow GroupBy(Interpreter& in, const Op& call, const Frame* env, const Value& input,
             const PathNode* path, Emit emit) {
  std::vector<Json> keys;
  if (Flow flow = KeysBy(in, call.operand(0), env, input, "group_by", keys);
      flow != Flow::kContinue) {
    return flow;
  }
  Json out = Json::array();
  const Json* previous = nullptr;
  for (size_t i : SortedOrder(keys)) {
    if (previous == nullptr || !Equal(*previous, keys[i])) out.push_back(Json::array());
    out.back().push_back((*input)[i]);
    previous = &keys[i];
  }
  return in.EmitComputed(input, path, Value::Owned(std::move(out)), emit);
}

Flow UniqueBy(Interpreter& in, const Op& call, const Frame* env, const Value& input,
              const PathNode* path, Emit emit) {
  std::vector<Json> keys;
  if (Flow flow = KeysBy(in, call.operand(0), env, input, "unique_by", keys);
      flow != Flow::kContinue) {
    return flow;
  }
  Json out = Json::array();
  const Json* previous = nullptr;
  for (size_t i : SortedOrder(keys)) {
    if (previous == nullptr || !Equal(*previous, keys[i])) out.push_back((*input)[i]);
    previous = &keys[i];
  }
  return in.EmitComputed(input, path, Value::Owned(std::move(out)), emit);
}

template <bool kMin>
Flow MinMaxBy(Interpreter& in, const Op& call, const Frame* env, const Value& input,
              const PathNode* path, Emit emit) {
  std::vector<Json> keys;
  if (Flow flow = KeysBy(in, call.operand(0), env, input, kMin ? "min_by" : "max_by", keys);
      flow != Flow::kContinue) {
    return flow;
  }
  if (keys.empty()) return in.EmitComputed(input, path, Value(), emit);
  size_t best = 0;
  for (size_t i = 1; i < keys.size(); ++i) {
    int c = Compare(keys[i], keys[best]);
    if (kMin ? c < 0 : c >= 0) best = i;
  }
  return in.EmitComputed(input, path, input.Member((*input)[best]), emit);
}

// ---- Regular expressions ----------------------------------------------

// `_match(re; flags; test)`: gojq's funcMatch on RE2. RE2 is linear in
// the string, but a global match searches again from each match's end, and
// a search can read to the end of the string before it settles (`a*b|` on
// "aaa…a"): metered by what each search may read, and charged for the
// matches as it builds them (a million empty matches are a gigabyte).
Result MatchImpl(Interpreter& in, const Json& v, const Json& re, const Json& flags, bool test) {
  const char* name = test ? "test" : "match";
  if (!v.is_string() || !re.is_string() || !(flags.is_null() || flags.is_string())) {
    return absl::InvalidArgumentError(absl::StrCat(name, "(", Preview(re), "; ", Preview(flags),
                                                   ") cannot be applied to: ", TypePreview(v)));
  }
  std::string flag_text = flags.is_string() ? flags.get<std::string>() : "";
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(8 << 20);
  bool global = false;
  for (char f : flag_text) {
    switch (f) {
      case 'g':
        global = true;
        break;
      case 'i':
        options.set_case_sensitive(false);
        break;
      case 's':
        options.set_dot_nl(true);
        break;
      case 'n':
        break;
      case 'x':
      case 'l':
      case 'p':
      default:
        return absl::InvalidArgumentError(
            absl::StrCat(flag_text, " is not a valid modifier string"));
    }
  }
  // Go's regexp names groups both (?P<name>...) and (?<name>...); RE2 of
  // this vintage knows only the first. (`(?<=` and `(?<!` are lookbehinds,
  // which neither supports.)
  std::string pattern = re.get<std::string>();
  for (size_t at = pattern.find("(?<"); at != std::string::npos; at = pattern.find("(?<", at + 3)) {
    bool escaped = false;
    for (size_t b = at; b > 0 && pattern[b - 1] == '\\'; --b) escaped = !escaped;
    if (escaped || at + 3 >= pattern.size() || pattern[at + 3] == '=' || pattern[at + 3] == '!') {
      continue;
    }
    pattern.replace(at, 3, "(?P<");
  }
  RE2 regex(pattern, options);
  if (!regex.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid regular expression ", Preview(re), ": ", regex.error()));
  }
  const std::string& s = v.get_ref<const std::string&>();
  if (!in.Work(s.size() / kBytesPerWorkUnit + 1)) return BudgetSpent();
  if (test) return Json(RE2::PartialMatch(s, regex));
  int groups = regex.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> match(groups + 1);
  std::vector<std::string> names(groups + 1);
  for (const auto& [group_name, index] : regex.NamedCapturingGroups()) names[index] = group_name;
  // Offsets are in characters: a match's by one count over the whole string
  // (matches come in order), its groups' by counting within the match.
  CharacterCounter match_characters(s);
  Json out = Json::array();
  size_t at = 0;
  while (at <= s.size()) {
    if (!in.Work((s.size() - at) / kBytesPerWorkUnit + 1)) return BudgetSpent();
    if (!regex.Match(s, at, s.size(), RE2::UNANCHORED, match.data(), groups + 1)) break;
    size_t begin = match[0].data() - s.data();
    size_t end = begin + match[0].size();
    int64_t offset = match_characters.At(begin);
    auto characters = [&](size_t byte) {
      return offset + CharacterCounter(std::string_view(s).substr(begin)).At(byte - begin);
    };
    Json captures = Json::array();
    for (int g = 1; g <= groups; ++g) {
      Json name = names[g].empty() ? Json(nullptr) : Json(names[g]);
      if (match[g].data() == nullptr) {
        captures.push_back({{"name", name}, {"offset", -1}, {"length", 0}, {"string", nullptr}});
        continue;
      }
      size_t b = match[g].data() - s.data();
      int64_t group_offset = characters(b);
      captures.push_back({{"name", name},
                          {"offset", group_offset},
                          {"length", characters(b + match[g].size()) - group_offset},
                          {"string", std::string(match[g].data(), match[g].size())}});
    }
    out.push_back({{"offset", offset},
                   {"length", characters(end) - offset},
                   {"string", std::string(match[0].data(), match[0].size())},
                   {"captures", std::move(captures)}});
    if (!in.Charge(ApproximateBytes(out.back()))) return BudgetSpent();
    if (!global) break;
    // An empty match advances one character, as Go's FindAll does.
    if (end == begin) {
      if (end >= s.size()) break;
      ++end;
      while (end < s.size() && IsContinuationByte(s[end])) ++end;
    }
    at = end;
  }
  return out;
}

Flow Match(Interpreter& in, const Op& call, const Frame* env, const Value& input,
           const PathNode* path, Emit emit) {
  return in.EvalValue(call.operand(0), env, input, [&](const Value& re) {
    return in.EvalValue(call.operand(1), env, input, [&](const Value& flags) {
      return in.EvalValue(call.operand(2), env, input, [&](const Value& test) {
        // Not Emit0: MatchImpl has charged what it built.
        Result matches = MatchImpl(in, *input, *re, *flags, Truthy(*test));
        if (in.error_is_bound()) return Flow::kError;
        if (!matches.ok()) return in.Fail(matches.status());
        return in.EmitComputed(input, path, Value::Owned(*std::move(matches)), emit);
      });
    });
  });
}

Result Captures(const Json& v) {
  if (!v.is_array())
    return absl::InvalidArgumentError("expected an array but got: " + TypePreview(v));
  Json out = Json::object();
  for (const Json& capture : v) {
    if (capture.is_object() && capture.contains("name") && capture["name"].is_string()) {
      out[capture["name"].get<std::string>()] = capture.value("string", Json(nullptr));
    }
  }
  return out;
}

struct NativeEntry {
  const char* name;
  NativeFunction function;
  NativeOutputs outputs;
};

const absl::flat_hash_map<std::string, NativeEntry>& Natives() {
  static const auto* const kNatives = [] {
    auto* m = new absl::flat_hash_map<std::string, NativeEntry>;
    auto add = [&](const char* name_arity, NativeFunction f,
                   NativeOutputs outputs = NativeOutputs::kAny) {
      (*m)[name_arity] = {name_arity, f, outputs};
    };
    add("empty/0", Empty);
    add("error/0", Error0);
    add("error/1", Error1);
    add("not/0", Not, NativeOutputs::kOne);
    add("debug/0", Identity, NativeOutputs::kOne);
    add("_plus/0", Plus, NativeOutputs::kOne);
    add("select/1", Select);
    add("recurse/0", Recurse0);
    add("recurse/1", Recurse1);
    add("first/1", First);
    add("last/1", Last);
    add("limit/2", Limit);
    add("isempty/1", IsEmpty, NativeOutputs::kOne);
    add("any/0", AnyAll0<true>, NativeOutputs::kOne);
    add("any/1", AnyAll1<true>, NativeOutputs::kOne);
    add("any/2", AnyAll2<true>, NativeOutputs::kOne);
    add("all/0", AnyAll0<false>, NativeOutputs::kOne);
    add("all/1", AnyAll1<false>, NativeOutputs::kOne);
    add("all/2", AnyAll2<false>, NativeOutputs::kOne);
    add("range/1", Range1);
    add("range/2", Range2);
    add("range/3", Range3);
    add("path/1", PathOf);
    add("getpath/1", GetPathOf, NativeOutputs::kOneIfArgumentsAreOne);
    add("setpath/2", Of2<SetPathOf>, NativeOutputs::kOneIfArgumentsAreOne);
    add("delpaths/1", Of1<DelPathsOf>, NativeOutputs::kOneIfArgumentsAreOne);
    add("length/0", Of0<Length>, NativeOutputs::kOne);
    add("utf8bytelength/0", Of0<Utf8ByteLength>, NativeOutputs::kOne);
    add("keys/0", Of0<Keys>, NativeOutputs::kOne);
    add("has/1", Of1<Has>, NativeOutputs::kOneIfArgumentsAreOne);
    add("contains/1", Metered1<Contains>, NativeOutputs::kOneIfArgumentsAreOne);
    add("add/0", Of0<AddAll>, NativeOutputs::kOne);
    add("tostring/0", ToStringOf, NativeOutputs::kOne);
    add("tonumber/0", Of0<ToNumber>, NativeOutputs::kOne);
    add("toboolean/0", Of0<ToBoolean>, NativeOutputs::kOne);
    add("type/0", TypeOf, NativeOutputs::kOne);
    add("tojson/0", Of0<ToJson>, NativeOutputs::kOne);
    add("fromjson/0", Of0<FromJson>, NativeOutputs::kOne);
    add("ascii_downcase/0", Of0<AsciiDowncase>, NativeOutputs::kOne);
    add("ascii_upcase/0", Of0<AsciiUpcase>, NativeOutputs::kOne);
    add("startswith/1", Of1<StartsWith>, NativeOutputs::kOneIfArgumentsAreOne);
    add("endswith/1", Of1<EndsWith>, NativeOutputs::kOneIfArgumentsAreOne);
    add("ltrimstr/1", Of1<LtrimStr>, NativeOutputs::kOneIfArgumentsAreOne);
    add("rtrimstr/1", Of1<RtrimStr>, NativeOutputs::kOneIfArgumentsAreOne);
    add("trimstr/1", Of1<TrimStr>, NativeOutputs::kOneIfArgumentsAreOne);
    add("trim/0", Of0<Trim<true, true>>, NativeOutputs::kOne);
    add("ltrim/0", Of0<Trim<true, false>>, NativeOutputs::kOne);
    add("rtrim/0", Of0<Trim<false, true>>, NativeOutputs::kOne);
    add("join/1", Of1<Join>, NativeOutputs::kOneIfArgumentsAreOne);
    add("split/1", Of1<Split1>, NativeOutputs::kOneIfArgumentsAreOne);
    add("explode/0", Of0<Explode>, NativeOutputs::kOne);
    add("implode/0", Of0<Implode>, NativeOutputs::kOne);
    add("reverse/0", Of0<Reverse>, NativeOutputs::kOne);
    add("sort/0", Of0<Sort>, NativeOutputs::kOne);
    add("unique/0", Of0<Unique>, NativeOutputs::kOne);
    add("min/0", Of0<Min>, NativeOutputs::kOne);
    add("max/0", Of0<Max>, NativeOutputs::kOne);
    add("flatten/0", Of0<Flatten0>, NativeOutputs::kOne);
    add("flatten/1", Of1<Flatten1>, NativeOutputs::kOneIfArgumentsAreOne);
    add("floor/0", Of0<Floor>, NativeOutputs::kOne);
    add("ceil/0", Of0<Ceil>, NativeOutputs::kOne);
    add("round/0", Of0<Round>, NativeOutputs::kOne);
    add("sqrt/0", Of0<Sqrt>, NativeOutputs::kOne);
    add("fabs/0", Of0<Fabs>, NativeOutputs::kOne);
    add("abs/0", Of0<Abs>, NativeOutputs::kOne);
    add("infinite/0", Of0<Infinite>, NativeOutputs::kOne);
    add("nan/0", Of0<Nan>, NativeOutputs::kOne);
    add("isnan/0", Of0<IsNan>, NativeOutputs::kOne);
    add("isinfinite/0", Of0<IsInfinite>, NativeOutputs::kOne);
    add("isnormal/0", Of0<IsNormal>, NativeOutputs::kOne);
    add("isfinite/0", Of0<IsFinite>, NativeOutputs::kOne);
    add("to_entries/0", Of0<ToEntries>, NativeOutputs::kOne);
    add("indices/1", Metered1<Indices>, NativeOutputs::kOneIfArgumentsAreOne);
    add("index/1", Metered1<Index>, NativeOutputs::kOneIfArgumentsAreOne);
    add("rindex/1", Metered1<Rindex>, NativeOutputs::kOneIfArgumentsAreOne);
    add("map/1", Map, NativeOutputs::kOne);
    add("sort_by/1", SortBy, NativeOutputs::kOne);
    add("group_by/1", GroupBy, NativeOutputs::kOne);
    add("unique_by/1", UniqueBy, NativeOutputs::kOne);
    add("min_by/1", MinMaxBy<true>, NativeOutputs::kOne);
    add("max_by/1", MinMaxBy<false>, NativeOutputs::kOne);
    add("_match/3", Match, NativeOutputs::kOneIfArgumentsAreOne);
    add("_captures/0", Of0<Captures>, NativeOutputs::kOne);
    return m;
  }();
  return *kNatives;
}

}  // namespace

NativeFunction FindNative(absl::string_view name, int arity) {
  auto it = Natives().find(absl::StrCat(name, "/", arity));
  return it == Natives().end() ? nullptr : it->second.function;
}

NativeOutputs OutputsOfNative(absl::string_view name_arity) {
  auto it = Natives().find(name_arity);
  return it == Natives().end() ? NativeOutputs::kAny : it->second.outputs;
}

const char* NativeName(absl::string_view name, int arity) {
  auto it = Natives().find(absl::StrCat(name, "/", arity));
  return it == Natives().end() ? "" : it->second.name;
}

}  // namespace wm::expressions::native
