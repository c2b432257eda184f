#include "server/expressions/native/compiler.h"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/expressions/native/builtins.h"
#include "server/expressions/native/format.h"
#include "server/expressions/native/parser.h"
#include "server/expressions/native/prelude.h"

namespace wm::expressions::native {
namespace {

// One name in scope; each corresponds to one runtime Frame (program.h).
struct ScopeEntry {
  enum class Kind { kVariable, kClosure, kFunction, kLabel };
  Kind kind;
  std::string name;
  int arity = 0;
  const FunctionDefinition* function = nullptr;
};

Json NumberLiteral(const std::string& text) {
  bool integral = text.find_first_of(".eE") == std::string::npos;
  if (integral) {
    int64_t value = 0;
    auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec == std::errc() && result.ptr == text.data() + text.size()) return Json(value);
  }
  // Big integers and decimals: the nearest double (gojq keeps big integer
  // literals exact; docs/divergences.md).
  double value = std::strtod(text.c_str(), nullptr);
  return Json(value);
}

class Compiler {
 public:
  explicit Compiler(std::vector<ScopeEntry> scope) : scope_(std::move(scope)) {}

  absl::StatusOr<std::unique_ptr<Op>> Compile(const Node& node);

  std::vector<ScopeEntry>& scope() { return scope_; }

 private:
  std::unique_ptr<Op> Make(OpKind kind, const Node& node) {
    auto op = std::make_unique<Op>();
    op->kind = kind;
    op->span = node.span();
    return op;
  }
  // The fold `op` (the right side of a pipe) stands for, if any: the
  // builtins length, any, all, min, max and add, and `.[0]` and `.[-1]` whether
  // written so or through a function without parameters that is only
  // that (the prelude's first and last). A redefined builtin is not one.
  static std::optional<Fold> FoldOf(const Op* op) {
    if (op == nullptr) return std::nullopt;
    if (op->kind == OpKind::kCallNative) {
      if (!op->children.empty() || op->native_name == nullptr) return std::nullopt;
      static constexpr std::pair<std::string_view, Fold> kNatives[] = {
          {"length/0", Fold::kLength}, {"any/0", Fold::kAny}, {"all/0", Fold::kAll},
          {"min/0", Fold::kMin},       {"max/0", Fold::kMax}, {"add/0", Fold::kAdd},
      };
      for (const auto& [name, fold] : kNatives) {
        if (name == op->native_name) return fold;
      }
      return std::nullopt;
    }
    const Op* index = op;
    if (op->kind == OpKind::kCallDefined) {
      if (!op->children.empty()) return std::nullopt;
      index = op->function->body.get();  // null while the function is being compiled
    }
    if (index == nullptr || index->kind != OpKind::kIndex || index->optional ||
        index->child(0)->kind != OpKind::kIdentity) {
      return std::nullopt;
    }
    // The key: a literal 0, or -1 (compiled as the negation of 1).
    const Op* key = index->child(1);
    bool negated = key->kind == OpKind::kNegate;
    if (negated) key = key->child(0);
    if (key->kind != OpKind::kConstant || !key->constant.is_number_integer()) return std::nullopt;
    int64_t k = key->constant.get<int64_t>();
    if (k == 0) return Fold::kFirst;
    if (k == 1 && negated) return Fold::kLast;
    return std::nullopt;
  }
  // `[query] | f` becomes a kFold over that pipe when f is a fold (FoldOf),
  // and so does the head of `[query] | f | rest` (pipes nest to the
  // right). Status matchers are full of `[.status.conditions[]? |
  // select(...)] | length` and `[...] | any`: folding skips copying every
  // selected element into an array only to count or test them.
  static std::unique_ptr<Op> FoldInsteadOfCollecting(std::unique_ptr<Op> pipe) {
    const Op* left = pipe->child(0);
    const Op* right = pipe->child(1);
    if (left == nullptr || left->kind != OpKind::kArray) return pipe;
    auto fold = std::make_unique<Op>();
    fold->kind = OpKind::kFold;
    fold->span = pipe->span;
    if (std::optional<Fold> kind = FoldOf(right)) {
      fold->fold = *kind;
      fold->children.push_back(std::move(pipe));
      return fold;
    }
    if (right == nullptr) return pipe;
    // [q] | (f | rest)  ->  ([q] | f) | rest, and [q] | (f // c)  ->
    // ([q] | f) // c for a c that ignores its input (`first // {}`).
    bool then_rest = right->kind == OpKind::kPipe;
    bool or_else = right->kind == OpKind::kAlternative && IgnoresInput(*right->child(1));
    if (!then_rest && !or_else) return pipe;
    std::optional<Fold> kind = FoldOf(right->child(0));
    if (!kind) return pipe;
    fold->fold = *kind;
    std::unique_ptr<Op> outer = std::move(pipe->children[1]);
    auto head = std::make_unique<Op>();
    head->kind = OpKind::kPipe;
    head->span = pipe->span;
    head->children.push_back(std::move(pipe->children[0]));
    head->children.push_back(std::move(outer->children[0]));
    fold->children.push_back(std::move(head));
    outer->children[0] = std::move(fold);
    outer->span = pipe->span;
    return outer;
  }
  // Whether `op` is a literal: the same value whatever its input.
  static bool IgnoresInput(const Op& op) {
    switch (op.kind) {
      case OpKind::kConstant:
        return true;
      case OpKind::kObject:  // {}
        return op.children.empty();
      case OpKind::kArray:  // []
        return op.child(0) == nullptr;
      default:
        return false;
    }
  }

  absl::StatusOr<std::unique_ptr<Op>> Children(OpKind kind, const Node& node) {
    auto op = Make(kind, node);
    for (const NodePtr& child : node.children()) {
      if (child == nullptr) {
        op->children.push_back(nullptr);
        continue;
      }
      auto compiled = Compile(*child);
      if (!compiled.ok()) return compiled.status();
      op->children.push_back(*std::move(compiled));
    }
    return op;
  }
  // The distance to the innermost entry matching, or -1.
  int Find(ScopeEntry::Kind kind, const std::string& name, int arity, size_t* index) const {
    for (size_t i = scope_.size(); i-- > 0;) {
      const ScopeEntry& e = scope_[i];
      bool callable = kind == ScopeEntry::Kind::kFunction &&
                      (e.kind == ScopeEntry::Kind::kFunction ||
                       (e.kind == ScopeEntry::Kind::kClosure && arity == 0));
      if ((e.kind == kind || callable) && e.name == name && e.arity == arity) {
        *index = i;
        return static_cast<int>(scope_.size() - 1 - i);
      }
    }
    return -1;
  }
  std::unique_ptr<Op> Constant(const Node& node, Json value) {
    auto op = Make(OpKind::kConstant, node);
    op->constant = std::move(value);
    return op;
  }
  absl::StatusOr<std::unique_ptr<Op>> Call(const Node& node);
  absl::StatusOr<std::unique_ptr<Op>> Object(const Node& node);
  absl::StatusOr<std::unique_ptr<Op>> Binding(const Node& node);
  absl::StatusOr<std::unique_ptr<Op>> Define(const Node& node);
  absl::Status CollectVariables(const Node& pattern, std::vector<std::string>& names);
  absl::StatusOr<Pattern> CompilePattern(const Node& node, const std::vector<std::string>& names);

  std::vector<ScopeEntry> scope_;
};

absl::StatusOr<std::unique_ptr<Op>> Compiler::Compile(const Node& node) {
  switch (node.kind()) {
    case NodeKind::kIdentity:
      return Make(OpKind::kIdentity, node);
    case NodeKind::kRecurse:
      return Make(OpKind::kRecurseAll, node);
    case NodeKind::kIndex:
      return Children(OpKind::kIndex, node);
    case NodeKind::kSlice:
      return Children(OpKind::kSlice, node);
    case NodeKind::kIterate:
      return Children(OpKind::kIterate, node);
    case NodeKind::kOptional: {
      const Node& operand = *node.child(0);
      auto compiled = Compile(operand);
      if (!compiled.ok()) return compiled;
      auto kind = (*compiled)->kind;
      if (kind == OpKind::kIndex || kind == OpKind::kSlice || kind == OpKind::kIterate) {
        (*compiled)->optional = true;
        return compiled;
      }
      auto op = Make(OpKind::kTry, node);
      op->children.push_back(*std::move(compiled));
      return op;
    }
    case NodeKind::kNull:
      return Constant(node, Json(nullptr));
    case NodeKind::kTrue:
      return Constant(node, Json(true));
    case NodeKind::kFalse:
      return Constant(node, Json(false));
    case NodeKind::kNumber:
      return Constant(node, NumberLiteral(node.text()));
    case NodeKind::kString:
      return Constant(node, Json(node.text()));
    case NodeKind::kTemplateText: {
      auto op = Constant(node, Json(node.text()));
      op->text_run = true;
      return op;
    }
    case NodeKind::kTemplate: {
      if (!node.text().empty() && !IsKnownFormat(node.text())) {
        return absl::InvalidArgumentError(absl::StrCat("format not defined: ", node.text()));
      }
      auto op = Children(OpKind::kTemplate, node);
      if (op.ok()) (*op)->text = node.text();
      return op;
    }
    case NodeKind::kFormat: {
      if (!IsKnownFormat(node.text())) {
        return absl::InvalidArgumentError(absl::StrCat("format not defined: ", node.text()));
      }
      auto op = Make(OpKind::kFormat, node);
      op->text = node.text();
      return op;
    }
    case NodeKind::kArray:
      return Children(OpKind::kArray, node);
    case NodeKind::kObject:
      return Object(node);
    case NodeKind::kVariable: {
      size_t index;
      int depth = Find(ScopeEntry::Kind::kVariable, "$" + node.text(), 0, &index);
      if (depth < 0) return absl::InvalidArgumentError("variable not defined: $" + node.text());
      auto op = Make(OpKind::kVariable, node);
      op->depth = depth;
      return op;
    }
    case NodeKind::kCall:
      return Call(node);
    case NodeKind::kNegate:
      return Children(OpKind::kNegate, node);
    case NodeKind::kUnaryPlus: {
      auto op = Make(OpKind::kPipe, node);
      auto operand = Compile(*node.child(0));
      if (!operand.ok()) return operand;
      op->children.push_back(*std::move(operand));
      auto plus = Make(OpKind::kCallNative, node);
      plus->native = FindNative("_plus", 0);
      plus->native_name = "_plus";
      op->children.push_back(std::move(plus));
      return op;
    }
    case NodeKind::kPipe: {
      auto op = Children(OpKind::kPipe, node);
      if (!op.ok()) return op;
      return FoldInsteadOfCollecting(*std::move(op));
    }
    case NodeKind::kComma:
      return Children(OpKind::kComma, node);
    case NodeKind::kAlternative:
      return Children(OpKind::kAlternative, node);
    case NodeKind::kAssign:
    case NodeKind::kUpdate:
    case NodeKind::kUpdateAdd:
    case NodeKind::kUpdateSub:
    case NodeKind::kUpdateMul:
    case NodeKind::kUpdateDiv:
    case NodeKind::kUpdateMod:
    case NodeKind::kUpdateAlt: {
      auto op = Children(OpKind::kUpdate, node);
      if (op.ok()) (*op)->binary = node.kind();
      return op;
    }
    case NodeKind::kOr:
      return Children(OpKind::kOr, node);
    case NodeKind::kAnd:
      return Children(OpKind::kAnd, node);
    case NodeKind::kEqual:
    case NodeKind::kNotEqual:
    case NodeKind::kLess:
    case NodeKind::kLessEqual:
    case NodeKind::kGreater:
    case NodeKind::kGreaterEqual:
    case NodeKind::kAdd:
    case NodeKind::kSubtract:
    case NodeKind::kMultiply:
    case NodeKind::kDivide:
    case NodeKind::kModulo: {
      auto op = Children(OpKind::kBinary, node);
      if (op.ok()) (*op)->binary = node.kind();
      return op;
    }
    case NodeKind::kBind:
    case NodeKind::kReduce:
    case NodeKind::kForeach:
      return Binding(node);
    case NodeKind::kIf:
      return Children(OpKind::kIf, node);
    case NodeKind::kTry:
      return Children(OpKind::kTry, node);
    case NodeKind::kLabel: {
      scope_.push_back({ScopeEntry::Kind::kLabel, node.text()});
      auto op = Children(OpKind::kLabel, node);
      scope_.pop_back();
      return op;
    }
    case NodeKind::kBreak: {
      size_t index;
      int depth = Find(ScopeEntry::Kind::kLabel, node.text(), 0, &index);
      if (depth < 0) return absl::InvalidArgumentError("label not defined: $" + node.text());
      auto op = Make(OpKind::kBreak, node);
      op->depth = depth;
      return op;
    }
    case NodeKind::kFuncDef:
      return Define(node);
    case NodeKind::kObjectEntry:
    case NodeKind::kPatternVariable:
    case NodeKind::kPatternArray:
    case NodeKind::kPatternObject:
    case NodeKind::kPatternEntry:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported construct ", NodeKindName(node.kind())));
}

absl::StatusOr<std::unique_ptr<Op>> Compiler::Call(const Node& node) {
  int arity = static_cast<int>(node.children().size());
  size_t index;
  int depth = Find(ScopeEntry::Kind::kFunction, node.text(), arity, &index);
  std::unique_ptr<Op> op;
  if (depth >= 0 && scope_[index].kind == ScopeEntry::Kind::kClosure) {
    op = Make(OpKind::kCallParameter, node);
    op->depth = depth;
    return op;
  }
  if (depth >= 0) {
    op = Make(OpKind::kCallDefined, node);
    op->depth = depth;
    op->function = scope_[index].function;
  } else if (NativeFunction native = FindNative(node.text(), arity); native != nullptr) {
    op = Make(OpKind::kCallNative, node);
    op->native = native;
    op->native_name = NativeName(node.text(), arity);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("function not defined: ", node.text(), "/", arity));
  }
  for (const NodePtr& argument : node.children()) {
    auto compiled = Compile(*argument);
    if (!compiled.ok()) return compiled.status();
    op->children.push_back(*std::move(compiled));
  }
  return op;
}

absl::StatusOr<std::unique_ptr<Op>> Compiler::Object(const Node& node) {
  auto op = Make(OpKind::kObject, node);
  for (const NodePtr& entry : node.children()) {
    const Node& key = *entry->child(0);
    const Node* value = entry->children().size() > 1 ? entry->child(1) : nullptr;
    std::unique_ptr<Op> key_op, value_op;
    if (key.kind() == NodeKind::kString) {
      key_op = Constant(key, Json(key.text()));
      if (value == nullptr) {  // {a}: {"a": .a}
        value_op = Make(OpKind::kIndex, key);
        value_op->children.push_back(Make(OpKind::kIdentity, key));
        value_op->children.push_back(Constant(key, Json(key.text())));
      }
    } else if (key.kind() == NodeKind::kVariable && value == nullptr) {  // {$x}: {"x": $x}
      key_op = Constant(key, Json(key.text()));
      auto variable = Compile(key);
      if (!variable.ok()) return variable.status();
      value_op = *std::move(variable);
    } else {
      auto compiled = Compile(key);
      if (!compiled.ok()) return compiled.status();
      key_op = *std::move(compiled);
    }
    if (value != nullptr) {
      auto compiled = Compile(*value);
      if (!compiled.ok()) return compiled.status();
      value_op = *std::move(compiled);
    }
    op->children.push_back(std::move(key_op));
    op->children.push_back(std::move(value_op));
  }
  return op;
}

absl::Status Compiler::CollectVariables(const Node& pattern, std::vector<std::string>& names) {
  auto add = [&](const std::string& name) {
    for (const auto& n : names) {
      if (n == name) return;
    }
    names.push_back(name);
  };
  switch (pattern.kind()) {
    case NodeKind::kPatternVariable:
      add(pattern.text());
      return absl::OkStatus();
    case NodeKind::kPatternArray:
    case NodeKind::kPatternObject:
      for (const NodePtr& child : pattern.children()) {
        if (auto status = CollectVariables(*child, names); !status.ok()) return status;
      }
      return absl::OkStatus();
    case NodeKind::kPatternEntry:
      if (pattern.child(0)->kind() == NodeKind::kVariable) add(pattern.child(0)->text());
      if (pattern.children().size() > 1 && pattern.child(1) != nullptr) {
        return CollectVariables(*pattern.child(1), names);
      }
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected ", NodeKindName(pattern.kind()), " in a pattern"));
  }
}

absl::StatusOr<Pattern> Compiler::CompilePattern(const Node& node,
                                                 const std::vector<std::string>& names) {
  auto slot = [&](const std::string& name) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  Pattern pattern;
  switch (node.kind()) {
    case NodeKind::kPatternVariable:
      pattern.kind = Pattern::Kind::kVariable;
      pattern.slot = slot(node.text());
      return pattern;
    case NodeKind::kPatternArray:
      pattern.kind = Pattern::Kind::kArray;
      for (const NodePtr& child : node.children()) {
        auto element = CompilePattern(*child, names);
        if (!element.ok()) return element.status();
        pattern.elements.push_back(*std::move(element));
      }
      return pattern;
    case NodeKind::kPatternObject:
      pattern.kind = Pattern::Kind::kObject;
      for (const NodePtr& child : node.children()) {
        const Node& key = *child->child(0);
        Pattern::Entry entry;
        if (key.kind() == NodeKind::kVariable) {
          entry.key = Constant(key, Json(key.text()));
          entry.key_slot = slot(key.text());
        } else if (key.kind() == NodeKind::kString) {
          entry.key = Constant(key, Json(key.text()));
        } else {
          auto compiled = Compile(key);
          if (!compiled.ok()) return compiled.status();
          entry.key = *std::move(compiled);
        }
        if (child->children().size() > 1 && child->child(1) != nullptr) {
          auto value = CompilePattern(*child->child(1), names);
          if (!value.ok()) return value.status();
          entry.value = std::make_unique<Pattern>(*std::move(value));
        }
        pattern.entries.push_back(std::move(entry));
      }
      return pattern;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected ", NodeKindName(node.kind()), " in a pattern"));
  }
}

absl::StatusOr<std::unique_ptr<Op>> Compiler::Binding(const Node& node) {
  // kBind: [source, body, pattern...]; kReduce: [source, pattern, init,
  // update]; kForeach: [source, pattern, init, update, extract?].
  bool bind = node.kind() == NodeKind::kBind;
  std::vector<const Node*> patterns;
  if (bind) {
    for (size_t i = 2; i < node.children().size(); ++i) patterns.push_back(node.child(i));
  } else {
    patterns.push_back(node.child(1));
  }
  std::vector<std::string> names;
  for (const Node* p : patterns) {
    if (auto status = CollectVariables(*p, names); !status.ok()) return status;
  }
  auto op = Make(bind                               ? OpKind::kBind
                 : node.kind() == NodeKind::kReduce ? OpKind::kReduce
                                                    : OpKind::kForeach,
                 node);
  op->slots = static_cast<int>(names.size());
  auto source = Compile(*node.child(0));
  if (!source.ok()) return source.status();
  op->children.push_back(*std::move(source));
  std::unique_ptr<Op> init;
  if (!bind) {
    auto compiled = Compile(*node.child(2));
    if (!compiled.ok()) return compiled.status();
    init = *std::move(compiled);
  }
  size_t outer = scope_.size();
  for (const std::string& name : names) {
    scope_.push_back({ScopeEntry::Kind::kVariable, "$" + name});
  }
  for (const Node* p : patterns) {
    auto compiled = CompilePattern(*p, names);
    if (!compiled.ok()) return compiled.status();
    op->patterns.push_back(*std::move(compiled));
  }
  auto inner = [&](const Node* n) -> absl::Status {
    if (n == nullptr) {
      op->children.push_back(nullptr);
      return absl::OkStatus();
    }
    auto compiled = Compile(*n);
    if (!compiled.ok()) return compiled.status();
    op->children.push_back(*std::move(compiled));
    return absl::OkStatus();
  };
  absl::Status status;
  if (bind) {
    status = inner(node.child(1));
  } else {
    op->children.push_back(std::move(init));
    status = inner(node.child(3));
    if (status.ok() && node.kind() == NodeKind::kForeach) {
      status = inner(node.children().size() > 4 ? node.child(4) : nullptr);
    }
  }
  scope_.resize(outer);
  if (!status.ok()) return status;
  return op;
}

absl::StatusOr<std::unique_ptr<Op>> Compiler::Define(const Node& node) {
  auto function = std::make_unique<FunctionDefinition>();
  function->name = node.text();
  for (const std::string& param : node.params()) function->value_params.push_back(param[0] == '$');
  int arity = static_cast<int>(node.params().size());
  size_t outer = scope_.size();
  scope_.push_back({ScopeEntry::Kind::kFunction, node.text(), arity, function.get()});
  for (const std::string& param : node.params()) {
    bool value = param[0] == '$';
    std::string name = value ? param.substr(1) : param;
    scope_.push_back({ScopeEntry::Kind::kClosure, name});
    if (value) scope_.push_back({ScopeEntry::Kind::kVariable, "$" + name});
  }
  auto body = Compile(*node.child(0));
  scope_.resize(outer + 1);
  if (!body.ok()) {
    scope_.resize(outer);
    return body.status();
  }
  function->body = *std::move(body);
  auto op = Make(OpKind::kDefine, node);
  op->owned_function = std::move(function);
  auto rest = Compile(*node.child(1));
  scope_.resize(outer);
  if (!rest.ok()) return rest.status();
  op->children.push_back(*std::move(rest));
  return op;
}

// Sets Op::single over `op`'s tree, children first. A definition's body is
// marked before the rest of its scope, so every call after it knows
// whether the function is single-valued; a call inside the body itself
// (recursion) sees `single` still false.
// Whether `op` is a call of the builtin select (not a redefinition).
bool IsSelect(const Op& op) {
  return op.kind == OpKind::kCallNative && op.native_name != nullptr &&
         std::string_view(op.native_name) == "select/1";
}

void MarkSingle(Op& op) {
  if (op.owned_function != nullptr) {
    MarkSingle(*op.owned_function->body);
    op.owned_function->single = op.owned_function->body->single;
  }
  for (const auto& child : op.children) {
    if (child != nullptr) MarkSingle(*child);
  }
  // Child i exists and is single (an absent optional child counts as one
  // when `absent_is_one`).
  auto one = [&](size_t i, bool absent_is_one = false) {
    const Op* child = op.child(i);
    return child == nullptr ? absent_is_one : child->single;
  };
  auto all_present_are_one = [&] {
    for (const auto& child : op.children) {
      if (child != nullptr && !child->single) return false;
    }
    return true;
  };
  switch (op.kind) {
    case OpKind::kIdentity:
    case OpKind::kConstant:
    case OpKind::kVariable:
    case OpKind::kFormat:
    case OpKind::kArray:  // collects its query's outputs
      op.single = true;
      break;
    case OpKind::kFold: {
      op.single = true;
      // [pipe]: [array, f]; array: [query?].
      const Op* query = op.operand(0).operand(0).child(0);
      op.select_filter = query != nullptr && query->kind == OpKind::kPipe &&
                         IsSelect(query->operand(1)) && query->operand(1).operand(0).single;
      break;
    }
    case OpKind::kIndex: {
      op.single = !op.optional && one(0) && one(1);
      const Op& target = op.operand(0);
      const Op& key = op.operand(1);
      if (!op.optional && key.kind == OpKind::kConstant && key.constant.is_string()) {
        if (target.kind == OpKind::kIdentity) {
          op.name_steps = 1;
        } else if (target.kind == OpKind::kIndex && target.name_steps > 0 &&
                   target.name_steps < Op::kMaxNameSteps) {
          op.name_steps = target.name_steps + 1;
        }
      }
      break;
    }
    case OpKind::kSlice:
      op.single = !op.optional && one(0) && one(1, true) && one(2, true);
      break;
    case OpKind::kNegate:
      op.single = one(0);
      break;
    case OpKind::kPipe:
    case OpKind::kAlternative:
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kBinary:
      op.single = one(0) && one(1);
      break;
    case OpKind::kIf:
      op.single = one(0) && one(1) && one(2, true);
      break;
    case OpKind::kTemplate:
    case OpKind::kObject:
      op.single = all_present_are_one();
      break;
    case OpKind::kBind:
      op.single = one(0) && one(1) && op.slots == 1 && op.patterns.size() == 1 &&
                  op.patterns[0].kind == Pattern::Kind::kVariable;
      break;
    case OpKind::kReduce:  // one state per output of its start
      op.single = one(1);
      break;
    case OpKind::kDefine:
      op.single = one(0);
      break;
    case OpKind::kCallDefined:
      op.single = op.children.empty() && op.function->single;
      break;
    case OpKind::kCallNative: {
      NativeOutputs outputs = OutputsOfNative(op.native_name);
      op.single = outputs == NativeOutputs::kOne ||
                  (outputs == NativeOutputs::kOneIfArgumentsAreOne && all_present_are_one());
      break;
    }
    default:
      op.single = false;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<const Prelude>> Prelude::Build() {
  auto tree = Parse(PreludeSource(), ParseLimits{1 << 20, 256});
  if (!tree.ok()) return tree.status();
  auto prelude = std::unique_ptr<Prelude>(new Prelude);
  Compiler compiler({});
  // The prelude is a chain `def a: ...; def b: ...; .`: each definition
  // is compiled where it stands, and its frame is the next of the chain.
  const Node* node = tree->get();
  size_t count = 0;
  for (const Node* n = node; n->kind() == NodeKind::kFuncDef; n = n->child(1)) ++count;
  prelude->frames_.resize(count);
  size_t i = 0;
  for (; node->kind() == NodeKind::kFuncDef; node = node->child(1), ++i) {
    auto function = std::make_unique<FunctionDefinition>();
    function->name = node->text();
    for (const std::string& param : node->params()) {
      function->value_params.push_back(param[0] == '$');
    }
    int arity = static_cast<int>(node->params().size());
    auto& scope = compiler.scope();
    size_t outer = scope.size();
    scope.push_back({ScopeEntry::Kind::kFunction, node->text(), arity, function.get()});
    for (const std::string& param : node->params()) {
      bool value = param[0] == '$';
      std::string name = value ? param.substr(1) : param;
      scope.push_back({ScopeEntry::Kind::kClosure, name});
      if (value) scope.push_back({ScopeEntry::Kind::kVariable, "$" + name});
    }
    auto body = compiler.Compile(*node->child(0));
    if (!body.ok()) {
      return absl::InternalError(
          absl::StrCat("prelude: ", node->text(), "/", arity, ": ", body.status().message()));
    }
    scope.resize(outer + 1);
    MarkSingle(**body);
    function->single = (*body)->single;
    function->body = *std::move(body);
    prelude->entries_.push_back({node->text(), arity, function.get()});
    auto holder = std::make_unique<Op>();
    holder->kind = OpKind::kDefine;
    holder->owned_function = std::move(function);
    prelude->ops_.push_back(std::move(holder));
    prelude->frames_[i].parent = i == 0 ? nullptr : &prelude->frames_[i - 1];
  }
  return std::unique_ptr<const Prelude>(std::move(prelude));
}

absl::StatusOr<std::unique_ptr<const Op>> Compile(const Node& tree, const Prelude& prelude) {
  std::vector<ScopeEntry> scope;
  for (const Prelude::Entry& entry : prelude.entries()) {
    scope.push_back({ScopeEntry::Kind::kFunction, entry.name, entry.arity, entry.function});
  }
  Compiler compiler(std::move(scope));
  auto op = compiler.Compile(tree);
  if (!op.ok()) return op.status();
  MarkSingle(**op);
  return std::unique_ptr<const Op>(*std::move(op));
}

}  // namespace wm::expressions::native
