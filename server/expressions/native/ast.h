#ifndef WM_SERVER_EXPRESSIONS_NATIVE_AST_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_AST_H_

// The syntax tree of a jq program in gojq's dialect, as the parser builds
// it (parser.h). Nodes are immutable once built and shared by const
// pointer; a tree owns its nodes through unique_ptr.
//
// The tree keeps what evaluation needs and nothing of the concrete syntax
// that does not change meaning: parentheses disappear, `.a`, `."a"` and
// `.["a"]` are the same kIndex, `elif` is an `if` in the else slot. It keeps
// apart what gojq evaluates differently: a postfix `?` (kOptional) is not a
// `try` (see kOptional), `{a}` (shorthand) is not `{"a": .a}`, `@f "s"` is
// not `"s"`, and number literals keep their text.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wm::expressions::native {

// Children are listed per kind as [first, second, ...]; "?" marks a slot
// that may be null (absent in the source).
enum class NodeKind {
  // Paths.
  kIdentity,  // .
  kRecurse,   // ..
  kIndex,     // [target, key]: .a, ."a", .["a"], .[0], x[e]; a name key is a kString
  kSlice,     // [target, from?, to?]: x[f:t], x[:t], x[f:]
  kIterate,   // [target]: x[]
  // [operand]: postfix `?` after a step of a suffix chain. gojq protects
  // only that last step: `.a.b?` evaluates `.a` unprotected, then
  // `try .b`. A `?` right after a primary (`(.a.b)?`, `f?`, `.a?`) protects
  // the whole term and parses as kTry without a handler.
  kOptional,

  // Literals and constructors.
  kNull,
  kTrue,
  kFalse,
  kNumber,  // text: the literal as written ("1", "1.50", "1e1000", big integers)
  kString,  // text: the decoded value of a string without interpolation or format
  // [part, ...]: a string with interpolations, or any string with a format
  // (`@base64 "x\(.)"`, `@json "x"`); text: the format ("" when none).
  // Parts are kTemplateText runs and interpolated expressions; the format
  // applies to the interpolated values only.
  kTemplate,
  kTemplateText,  // text: a decoded run; only as a part of kTemplate
  kFormat,        // text: "@base64"; the format applied to `.`
  kArray,         // [] or [query]
  kObject,        // [entry, ...]
  // [key, value?]. The key is a kString (a name, a keyword or a literal
  // string), a kTemplate (an interpolated string), a kVariable, or any
  // expression (from `(e): v`). Without a value it is shorthand: {a} and
  // {"a"} mean {"a": .a}, {"\(e)"} evaluates e once and indexes `.` by
  // each result, {$x} means {"x": $x}; with one, {$x: v} uses $x's value
  // as the key.
  kObjectEntry,

  // Names.
  kVariable,  // text: the name without "$" ("x", "mod::x", "__loc__")
  kCall,      // text: the function name ("f", "mod::f"); [argument, ...]

  // Unary operators: [operand].
  kNegate,     // -x
  kUnaryPlus,  // +x

  // Binary operators: [left, right].
  kPipe,
  kComma,
  kAlternative,  // //
  kAssign,       // =
  kUpdate,       // |=
  kUpdateAdd,    // +=
  kUpdateSub,
  kUpdateMul,
  kUpdateDiv,
  kUpdateMod,
  kUpdateAlt,  // //=
  kOr,
  kAnd,
  kEqual,
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kModulo,

  // Control.
  kBind,     // [source, body, pattern, pattern...]: source as P1 ?// P2 | body
  kReduce,   // [source, pattern, init, update]
  kForeach,  // [source, pattern, init, update, extract?]
  kIf,       // [condition, then, else?]; no else means `else .`
  kTry,      // [body, handler?]
  kLabel,    // text: the label name; [body]
  kBreak,    // text: the label name
  // text: the function name; params(): the parameter names as written
  // ("f" for a filter, "$x" for a value); [body, rest]: `def f: body; rest`.
  kFuncDef,

  // Destructuring patterns.
  kPatternVariable,  // text: the name without "$"
  kPatternArray,     // [pattern, ...]
  kPatternObject,    // [entry, ...]
  // [key, pattern?]: the key as for kObjectEntry, minus shorthand forms but
  // `$x` (binds $x to .x); `$x: P` binds $x to .x and destructures it with P.
  kPatternEntry,
};

// A half-open byte range of the source.
struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
};

class Node;
using NodePtr = std::unique_ptr<const Node>;

class Node {
 public:
  Node(NodeKind kind, Span span, std::string text = "", std::vector<NodePtr> children = {},
       std::vector<std::string> params = {});
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeKind kind() const { return kind_; }
  Span span() const { return span_; }
  const std::string& text() const { return text_; }
  const std::vector<NodePtr>& children() const { return children_; }
  // Child `i`, or null for an absent optional slot.
  const Node* child(size_t i) const { return children_[i].get(); }
  const std::vector<std::string>& params() const { return params_; }
  // 1 for a leaf; 1 + the deepest child otherwise. The parser bounds it, so
  // recursive walks over a parsed tree have bounded stack use.
  int depth() const { return depth_; }

 private:
  NodeKind kind_;
  Span span_;
  std::string text_;
  std::vector<NodePtr> children_;
  std::vector<std::string> params_;
  int depth_;
};

// "kPipe".
const char* NodeKindName(NodeKind kind);

// The jq text of a binary operator's kind ("|", "//", "and"); null for
// other kinds.
const char* BinaryOperatorText(NodeKind kind);

// Canonical jq source for `node`: every binary operator, binding,
// definition and label is parenthesized (`((.a | .b) , .c)`), string keys
// are quoted, names index as `.name`, elif becomes a nested if. Parsing the
// result gives a tree equal to `node` (SameTree).
std::string ToString(const Node& node);

// Whether two trees have the same kinds, texts, parameters and shape
// (spans are not compared).
bool SameTree(const Node& a, const Node& b);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_AST_H_
