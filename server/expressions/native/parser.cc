#include "server/expressions/native/parser.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/common/thread_stack.h"
#include "server/expressions/native/lexer.h"

namespace wm::expressions::native {
namespace {

// Evaluates `expr` (a StatusOr), returning its status on failure and
// otherwise moving the value into a new variable `var`.
#define WM_PARSE_ASSIGN(var, expr)              \
  auto var##_or = (expr);                       \
  if (!var##_or.ok()) return var##_or.status(); \
  auto var = std::move(*var##_or)

#define WM_PARSE_RETURN_IF_ERROR(expr)      \
  if (absl::Status s_ = (expr); !s_.ok()) { \
    return s_;                              \
  }

// Marks a function on the parser's recursive path that must keep a frame
// of its own. Each nesting level of a source costs the frames of the
// functions it goes through (about eight for `try (...)`), so those frames
// must hold only their own state: inlined into one another they would each
// carry the locals of every construct (under AddressSanitizer, whose
// redzones multiply locals, that was 40 KB of stack per level, and a
// source within max_depth overflowed an 8 MB stack).
#define WM_PARSER_STEP ABSL_ATTRIBUTE_NOINLINE

struct BinaryOperator {
  NodeKind kind;
  int precedence;  // higher binds tighter
  enum Associativity { kLeft, kRight, kNone } associativity;
};

// gojq's %right/%nonassoc/%left lines for the expr rules, loosest first.
std::optional<BinaryOperator> BinaryOperatorFor(TokenKind t) {
  using A = BinaryOperator;
  switch (t) {
    case TokenKind::kAlt:
      return A{NodeKind::kAlternative, 1, A::kRight};
    case TokenKind::kAssign:
      return A{NodeKind::kAssign, 2, A::kNone};
    case TokenKind::kUpdate:
      return A{NodeKind::kUpdate, 2, A::kNone};
    case TokenKind::kUpdateAdd:
      return A{NodeKind::kUpdateAdd, 2, A::kNone};
    case TokenKind::kUpdateSub:
      return A{NodeKind::kUpdateSub, 2, A::kNone};
    case TokenKind::kUpdateMul:
      return A{NodeKind::kUpdateMul, 2, A::kNone};
    case TokenKind::kUpdateDiv:
      return A{NodeKind::kUpdateDiv, 2, A::kNone};
    case TokenKind::kUpdateMod:
      return A{NodeKind::kUpdateMod, 2, A::kNone};
    case TokenKind::kUpdateAlt:
      return A{NodeKind::kUpdateAlt, 2, A::kNone};
    case TokenKind::kOr:
      return A{NodeKind::kOr, 3, A::kLeft};
    case TokenKind::kAnd:
      return A{NodeKind::kAnd, 4, A::kLeft};
    case TokenKind::kEqual:
      return A{NodeKind::kEqual, 5, A::kNone};
    case TokenKind::kNotEqual:
      return A{NodeKind::kNotEqual, 5, A::kNone};
    case TokenKind::kLess:
      return A{NodeKind::kLess, 5, A::kNone};
    case TokenKind::kLessEqual:
      return A{NodeKind::kLessEqual, 5, A::kNone};
    case TokenKind::kGreater:
      return A{NodeKind::kGreater, 5, A::kNone};
    case TokenKind::kGreaterEqual:
      return A{NodeKind::kGreaterEqual, 5, A::kNone};
    case TokenKind::kPlus:
      return A{NodeKind::kAdd, 6, A::kLeft};
    case TokenKind::kMinus:
      return A{NodeKind::kSubtract, 6, A::kLeft};
    case TokenKind::kStar:
      return A{NodeKind::kMultiply, 7, A::kLeft};
    case TokenKind::kSlash:
      return A{NodeKind::kDivide, 7, A::kLeft};
    case TokenKind::kPercent:
      return A{NodeKind::kModulo, 7, A::kLeft};
    default:
      return std::nullopt;
  }
}
constexpr int kLoosestBinary = 1;

class Parser {
 public:
  Parser(absl::string_view source, const ParseLimits& limits)
      : source_(source), limits_(limits), lexer_(source) {}

  absl::StatusOr<NodePtr> ParseProgram() {
    WM_PARSE_RETURN_IF_ERROR(Advance());
    switch (token_.kind) {
      case TokenKind::kModule:
      case TokenKind::kImport:
      case TokenKind::kInclude:
        return Error(token_.begin,
                     absl::StrCat("\"", token_.text,
                                  "\" is not supported: expressions cannot load modules"));
      case TokenKind::kEndOfInput:
        return Error(token_.begin, "missing query (try \".\")");
      default:
        break;
    }
    WM_PARSE_ASSIGN(query, ParsePipe());
    if (token_.kind != TokenKind::kEndOfInput) {
      return Error(token_.begin, absl::StrCat("unexpected ", Describe(token_)));
    }
    return query;
  }

  // The deepest address of this thread's stack the parse reached.
  uintptr_t deepest() const { return deepest_; }

 private:
  // Counts one level of recursion for as long as it lives, and notes how
  // deep into the stack the parse went.
  class Nesting {
   public:
    explicit Nesting(Parser& parser, int levels = 1) : parser_(parser), levels_(levels) {
      parser_.depth_ += levels_;
      parser_.deepest_ = std::min(parser_.deepest_, reinterpret_cast<uintptr_t>(this));
    }
    ~Nesting() { parser_.depth_ -= levels_; }

   private:
    Parser& parser_;
    int levels_;
  };

  absl::Status Advance() {
    previous_end_ = token_.end;
    absl::StatusOr<Token> next = lexer_.Next();
    if (!next.ok()) return next.status();
    token_ = std::move(*next);
    return absl::OkStatus();
  }

  bool At(TokenKind kind) const { return token_.kind == kind; }

  absl::Status Error(size_t offset, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(SourcePosition(source_, offset), ": ", message));
  }

  std::string Describe(const Token& t) const {
    switch (t.kind) {
      case TokenKind::kEndOfInput:
        return "end of input";
      case TokenKind::kStringStart:
        return "a string";
      default:
        return absl::StrCat("\"", source_.substr(t.begin, t.end - t.begin), "\"");
    }
  }

  // "L:C: expected <what> <context>, got <token>".
  absl::Status Expected(absl::string_view what, absl::string_view context) const {
    return Error(token_.begin, absl::StrCat("expected ", what, context.empty() ? "" : " ", context,
                                            ", got ", Describe(token_)));
  }

  // Consumes a token of `kind` or fails with Expected.
  absl::Status Expect(TokenKind kind, absl::string_view what, absl::string_view context) {
    if (!At(kind)) return Expected(what, context);
    return Advance();
  }

  absl::Status DepthError() const {
    return Error(token_.begin, absl::StrCat("expression nests deeper than ", limits_.max_depth,
                                            " levels (the parser's max_depth)"));
  }

  // Builds a node spanning from `begin` to the end of the last token read.
  absl::StatusOr<NodePtr> Make(NodeKind kind, uint32_t begin, std::string text = "",
                               std::vector<NodePtr> children = {},
                               std::vector<std::string> params = {}) {
    auto node = std::make_unique<const Node>(kind, Span{begin, previous_end_}, std::move(text),
                                             std::move(children), std::move(params));
    if (node->depth() > limits_.max_depth) return DepthError();
    return NodePtr(std::move(node));
  }

  template <typename... Children>
  static std::vector<NodePtr> List(Children... children) {
    std::vector<NodePtr> list;
    (list.push_back(std::move(children)), ...);
    return list;
  }

  // query '|' query, right-associative.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParsePipe() {
    std::vector<NodePtr> parts;
    while (true) {
      WM_PARSE_ASSIGN(part, ParseComma());
      parts.push_back(std::move(part));
      if (!At(TokenKind::kPipe)) break;
      WM_PARSE_RETURN_IF_ERROR(Advance());
    }
    return FoldPipes(std::move(parts));
  }

  // a | b | c as Pipe(a, Pipe(b, c)); every pipe ends where the last part
  // does, at the last token read.
  WM_PARSER_STEP absl::StatusOr<NodePtr> FoldPipes(std::vector<NodePtr> parts) {
    NodePtr result = std::move(parts.back());
    for (size_t i = parts.size() - 1; i-- > 0;) {
      uint32_t begin = parts[i]->span().begin;
      WM_PARSE_ASSIGN(
          pipe, Make(NodeKind::kPipe, begin, "", List(std::move(parts[i]), std::move(result))));
      result = std::move(pipe);
    }
    return result;
  }

  // query ',' query, left-associative.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseComma() {
    WM_PARSE_ASSIGN(left, ParseOperand());
    while (At(TokenKind::kComma)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      WM_PARSE_ASSIGN(right, ParseOperand());
      uint32_t begin = left->span().begin;
      WM_PARSE_ASSIGN(comma,
                      Make(NodeKind::kComma, begin, "", List(std::move(left), std::move(right))));
      left = std::move(comma);
    }
    return left;
  }

  // An operand of ',' and '|': a definition, a label or a binding (each
  // taking the rest of the query as its body), or an expr.
  absl::StatusOr<NodePtr> ParseOperand() {
    // Definitions, labels and bindings nest their bodies without going
    // through ParseTerm.
    if (At(TokenKind::kDef) || At(TokenKind::kLabel)) {
      Nesting nesting(*this);
      if (depth_ > limits_.max_depth) return DepthError();
      return At(TokenKind::kDef) ? ParseDefinitionOperand() : ParseLabelOperand();
    }
    uint32_t begin = token_.begin;
    WM_PARSE_ASSIGN(source, ParseBinary(kLoosestBinary));
    if (!At(TokenKind::kAs)) return source;
    Nesting binding(*this);
    if (depth_ > limits_.max_depth) return DepthError();
    return ParseBinding(std::move(source), begin);
  }

  // `def f: body; rest` at the current "def".
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseDefinitionOperand() {
    uint32_t begin = token_.begin;
    std::string name;
    std::vector<std::string> params;
    WM_PARSE_ASSIGN(body, ParseFuncDef(name, params));
    if (At(TokenKind::kEndOfInput)) {
      return Error(token_.begin,
                   absl::StrCat("missing query after the definition of ", name, " (try \".\")"));
    }
    WM_PARSE_ASSIGN(rest, ParsePipe());
    return Make(NodeKind::kFuncDef, begin, std::move(name), List(std::move(body), std::move(rest)),
                std::move(params));
  }

  // `label $name | body` at the current "label".
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseLabelOperand() {
    uint32_t begin = token_.begin;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (!At(TokenKind::kVariable)) return Expected("a label name ($name)", "after \"label\"");
    std::string name = token_.text;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    WM_PARSE_RETURN_IF_ERROR(
        Expect(TokenKind::kPipe, "\"|\"", absl::StrCat("after label $", name)));
    WM_PARSE_ASSIGN(body, ParsePipe());
    return Make(NodeKind::kLabel, begin, std::move(name), List(std::move(body)));
  }

  // `source as patterns | body` at the current "as"; `source` began at `begin`.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseBinding(NodePtr source, uint32_t begin) {
    WM_PARSE_RETURN_IF_ERROR(Advance());
    std::vector<NodePtr> children;
    children.push_back(std::move(source));
    children.push_back(nullptr);  // the body, below
    while (true) {
      WM_PARSE_ASSIGN(pattern, ParsePattern());
      children.push_back(std::move(pattern));
      if (!At(TokenKind::kDestructuringAlt)) break;
      WM_PARSE_RETURN_IF_ERROR(Advance());
    }
    WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kPipe, "\"|\"", "after the binding's patterns"));
    WM_PARSE_ASSIGN(body, ParsePipe());
    children[1] = std::move(body);
    return Make(NodeKind::kBind, begin, "", std::move(children));
  }

  // `def name[(params)]: body;` at the current "def"; returns the body.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseFuncDef(std::string& name,
                                                      std::vector<std::string>& params) {
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (!At(TokenKind::kIdent)) {
      return Expected("a function name", "after \"def\" (keywords and $names cannot be defined)");
    }
    name = token_.text;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (At(TokenKind::kLeftParen)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      while (true) {
        if (At(TokenKind::kIdent)) {
          params.push_back(token_.text);
        } else if (At(TokenKind::kVariable)) {
          params.push_back(absl::StrCat("$", token_.text));
        } else {
          return Expected("a parameter name (f or $x)",
                          absl::StrCat("in the definition of ", name));
        }
        WM_PARSE_RETURN_IF_ERROR(Advance());
        if (At(TokenKind::kRightParen)) break;
        WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kSemicolon, "\";\" or \")\"",
                                        absl::StrCat("after a parameter of ", name)));
      }
      WM_PARSE_RETURN_IF_ERROR(Advance());
    }
    WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kColon, "\":\"", absl::StrCat("after def ", name)));
    WM_PARSE_ASSIGN(body, ParsePipe());
    WM_PARSE_RETURN_IF_ERROR(
        Expect(TokenKind::kSemicolon, "\";\"", absl::StrCat("after the body of def ", name)));
    return body;
  }

  // expr: precedence climbing over BinaryOperatorFor.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseBinary(int min_precedence) {
    WM_PARSE_ASSIGN(left, ParseTerm());
    int non_associative = 0;  // precedence of a non-associative operator just applied
    while (true) {
      std::optional<BinaryOperator> op = BinaryOperatorFor(token_.kind);
      if (!op || op->precedence < min_precedence) break;
      if (op->precedence == non_associative) return NonAssociative(op->precedence);
      WM_PARSE_RETURN_IF_ERROR(Advance());
      // A right operand of a right-associative operator is one more level
      // (`a // b // c ...` recurses); the others recurse at most once per
      // precedence level.
      bool right_associative = op->associativity == BinaryOperator::kRight;
      Nesting nesting(*this, right_associative ? 1 : 0);
      if (depth_ > limits_.max_depth) return DepthError();
      WM_PARSE_ASSIGN(right, ParseBinary(right_associative ? op->precedence : op->precedence + 1));
      uint32_t begin = left->span().begin;
      WM_PARSE_ASSIGN(node, Make(op->kind, begin, "", List(std::move(left), std::move(right))));
      left = std::move(node);
      non_associative = op->associativity == BinaryOperator::kNone ? op->precedence : 0;
    }
    return left;
  }

  WM_PARSER_STEP absl::Status NonAssociative(int precedence) const {
    return Error(token_.begin,
                 absl::StrCat(precedence == 5 ? "comparison" : "assignment",
                              " operators are non-associative: parenthesize one side of ",
                              Describe(token_)));
  }

  // term: unary operators, then a primary and its suffixes.
  // Every construct that nests (parentheses, brackets, objects, strings,
  // if, try, reduce, unary operators, ...) goes through here, so this
  // counts the nesting depth.
  absl::StatusOr<NodePtr> ParseTerm() {
    Nesting nesting(*this);
    if (depth_ > limits_.max_depth) return DepthError();
    if (At(TokenKind::kMinus) || At(TokenKind::kPlus)) return ParseUnary();
    uint32_t begin = token_.begin;
    WM_PARSE_ASSIGN(term, ParsePrimary());
    return ParseSuffixes(std::move(term), begin);
  }

  // `-term` or `+term`.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseUnary() {
    uint32_t begin = token_.begin;
    NodeKind kind = At(TokenKind::kMinus) ? NodeKind::kNegate : NodeKind::kUnaryPlus;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    WM_PARSE_ASSIGN(operand, ParseTerm());
    return Make(kind, begin, "", List(std::move(operand)));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseSuffixes(NodePtr term, uint32_t begin) {
    // Whether `term` ends in a step of this suffix chain: `?` then protects
    // that step only (kOptional); after a primary alone (`(.a.b)?`, `f?`)
    // it protects the whole term, a `try` (gojq's compileTermSuffix).
    bool stepped = false;
    while (true) {
      if (At(TokenKind::kField)) {
        WM_PARSE_ASSIGN(key, Leaf(NodeKind::kString, token_.text));
        WM_PARSE_ASSIGN(index,
                        Make(NodeKind::kIndex, begin, "", List(std::move(term), std::move(key))));
        term = std::move(index);
        stepped = true;
      } else if (At(TokenKind::kLeftBracket)) {
        WM_PARSE_ASSIGN(suffixed, ParseBracketSuffix(std::move(term), begin));
        term = std::move(suffixed);
        stepped = true;
      } else if (At(TokenKind::kQuestion)) {
        WM_PARSE_RETURN_IF_ERROR(Advance());
        // A try's children are [body, handler]: none here.
        std::vector<NodePtr> children = List(std::move(term));
        if (!stepped) children.push_back(nullptr);
        WM_PARSE_ASSIGN(optional, Make(stepped ? NodeKind::kOptional : NodeKind::kTry, begin, "",
                                       std::move(children)));
        term = std::move(optional);
        // A `?` is not a step: another `?` right after it protects the
        // whole term (`.a.b??` is `try (.a.b?)`, as gojq's toTerm of an
        // optional suffix is nil).
        stepped = false;
      } else if (At(TokenKind::kDot)) {
        stepped = true;
        WM_PARSE_RETURN_IF_ERROR(Advance());
        if (At(TokenKind::kLeftBracket)) {
          WM_PARSE_ASSIGN(suffixed, ParseBracketSuffix(std::move(term), begin));
          term = std::move(suffixed);
        } else if (At(TokenKind::kStringStart)) {
          WM_PARSE_ASSIGN(key, ParseString(""));
          WM_PARSE_ASSIGN(index,
                          Make(NodeKind::kIndex, begin, "", List(std::move(term), std::move(key))));
          term = std::move(index);
        } else {
          return Expected("a name, \"[\" or a string", "after \".\"");
        }
      } else {
        return term;
      }
    }
  }

  // [] [e] [e:] [:e] [e:e] at the current "[".
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseBracketSuffix(NodePtr target, uint32_t begin) {
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (At(TokenKind::kRightBracket)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      return Make(NodeKind::kIterate, begin, "", List(std::move(target)));
    }
    NodePtr from;
    if (!At(TokenKind::kColon)) {
      WM_PARSE_ASSIGN(start, ParsePipe());
      from = std::move(start);
      if (At(TokenKind::kRightBracket)) {
        WM_PARSE_RETURN_IF_ERROR(Advance());
        return Make(NodeKind::kIndex, begin, "", List(std::move(target), std::move(from)));
      }
      if (!At(TokenKind::kColon)) return Expected("\"]\" or \":\"", "in an index");
    }
    WM_PARSE_RETURN_IF_ERROR(Advance());  // ':'
    NodePtr to;
    if (!At(TokenKind::kRightBracket) || !from) {
      WM_PARSE_ASSIGN(end, ParsePipe());
      to = std::move(end);
    }
    WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kRightBracket, "\"]\"", "to close the slice"));
    return Make(NodeKind::kSlice, begin, "",
                List(std::move(target), std::move(from), std::move(to)));
  }

  // A dispatcher without locals of its own: every case with state is a
  // function of its own, so a frame on the recursive path holds only the
  // state of the construct being parsed (see WM_PARSER_STEP).
  absl::StatusOr<NodePtr> ParsePrimary() {
    switch (token_.kind) {
      case TokenKind::kDot:
        return ParseDot();
      case TokenKind::kRecurse:
      case TokenKind::kField:
      case TokenKind::kNull:
      case TokenKind::kTrue:
      case TokenKind::kFalse:
      case TokenKind::kNumber:
      case TokenKind::kVariable:
      case TokenKind::kModuleVariable:
        return ParseLeafPrimary();
      case TokenKind::kStringStart:
        return ParseString("");
      case TokenKind::kFormat:
        return ParseFormat();
      case TokenKind::kIdent:
      case TokenKind::kModuleIdent:
        return ParseCall();
      case TokenKind::kLeftParen:
        return ParseParenthesized();
      case TokenKind::kLeftBracket:
        return ParseArray();
      case TokenKind::kLeftBrace:
        return ParseObject();
      case TokenKind::kIf:
        return ParseIf();
      case TokenKind::kTry:
        return ParseTry();
      case TokenKind::kReduce:
      case TokenKind::kForeach:
        return ParseReduceOrForeach();
      case TokenKind::kBreak:
        return ParseBreak();
      default:
        return NotAPrimary();
    }
  }

  // The primaries of one token: `..`, `.name`, literals, `$name`.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseLeafPrimary() {
    uint32_t begin = token_.begin;
    switch (token_.kind) {
      case TokenKind::kRecurse:
        return Leaf(NodeKind::kRecurse, "");
      case TokenKind::kField: {
        WM_PARSE_ASSIGN(key, Leaf(NodeKind::kString, token_.text));
        WM_PARSE_ASSIGN(identity, Make(NodeKind::kIdentity, begin));
        return Make(NodeKind::kIndex, begin, "", List(std::move(identity), std::move(key)));
      }
      case TokenKind::kNull:
        return Leaf(NodeKind::kNull, "");
      case TokenKind::kTrue:
        return Leaf(NodeKind::kTrue, "");
      case TokenKind::kFalse:
        return Leaf(NodeKind::kFalse, "");
      case TokenKind::kNumber:
        return Leaf(NodeKind::kNumber, token_.text);
      default:  // kVariable, kModuleVariable
        return Leaf(NodeKind::kVariable, token_.text);
    }
  }

  // `.` alone or `."key"`.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseDot() {
    uint32_t begin = token_.begin;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (At(TokenKind::kStringStart)) {
      WM_PARSE_ASSIGN(identity, Make(NodeKind::kIdentity, begin));
      WM_PARSE_ASSIGN(key, ParseString(""));
      return Make(NodeKind::kIndex, begin, "", List(std::move(identity), std::move(key)));
    }
    return Make(NodeKind::kIdentity, begin);
  }

  // `@name` alone or `@name "string"`.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseFormat() {
    uint32_t begin = token_.begin;
    std::string format = token_.text;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (At(TokenKind::kStringStart)) return ParseString(std::move(format), begin);
    return Make(NodeKind::kFormat, begin, std::move(format));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseParenthesized() {
    WM_PARSE_RETURN_IF_ERROR(Advance());
    WM_PARSE_ASSIGN(inner, ParsePipe());
    WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, "\")\"", "to close the parenthesis"));
    return inner;
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseArray() {
    uint32_t begin = token_.begin;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    std::vector<NodePtr> children;
    if (!At(TokenKind::kRightBracket)) {
      WM_PARSE_ASSIGN(elements, ParsePipe());
      children.push_back(std::move(elements));
    }
    WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kRightBracket, "\"]\"", "to close the array"));
    return Make(NodeKind::kArray, begin, "", std::move(children));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseTry() {
    uint32_t begin = token_.begin;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    WM_PARSE_ASSIGN(body, ParseTerm());
    NodePtr handler;
    if (At(TokenKind::kCatch)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      WM_PARSE_ASSIGN(h, ParseTerm());
      handler = std::move(h);
    }
    return Make(NodeKind::kTry, begin, "", List(std::move(body), std::move(handler)));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseBreak() {
    uint32_t begin = token_.begin;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (!At(TokenKind::kVariable)) return Expected("a label name ($name)", "after \"break\"");
    return Leaf(NodeKind::kBreak, token_.text, begin);
  }

  WM_PARSER_STEP absl::Status NotAPrimary() const {
    if (At(TokenKind::kDef) || At(TokenKind::kLabel)) {
      return Error(token_.begin,
                   absl::StrCat("\"", token_.text,
                                "\" must start a query, not an operand: wrap it in parentheses"));
    }
    return Expected("an expression", "");
  }

  // A node of the current token alone (or from `begin` to it).
  absl::StatusOr<NodePtr> Leaf(NodeKind kind, std::string text,
                               std::optional<uint32_t> begin = std::nullopt) {
    uint32_t from = begin.value_or(token_.begin);
    WM_PARSE_RETURN_IF_ERROR(Advance());
    return Make(kind, from, std::move(text));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseCall() {
    uint32_t begin = token_.begin;
    std::string name = token_.text;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    std::vector<NodePtr> args;
    if (At(TokenKind::kLeftParen)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      while (true) {
        WM_PARSE_ASSIGN(arg, ParsePipe());
        args.push_back(std::move(arg));
        if (At(TokenKind::kRightParen)) break;
        if (!At(TokenKind::kSemicolon)) return MissingArgumentSeparator(name);
        WM_PARSE_RETURN_IF_ERROR(Advance());
      }
      WM_PARSE_RETURN_IF_ERROR(Advance());
    }
    return Make(NodeKind::kCall, begin, std::move(name), std::move(args));
  }

  WM_PARSER_STEP absl::Status MissingArgumentSeparator(absl::string_view name) const {
    return Expected("\";\" or \")\"", absl::StrCat("after an argument of ", name));
  }

  // A string at the current kStringStart; `format` is "" or the format
  // written before it, whose token started at `begin`.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseString(
      std::string format, std::optional<uint32_t> format_begin = std::nullopt) {
    uint32_t begin = format_begin.value_or(token_.begin);
    WM_PARSE_RETURN_IF_ERROR(Advance());
    std::vector<NodePtr> parts;
    bool interpolated = false;
    while (!At(TokenKind::kStringEnd)) {
      if (At(TokenKind::kStringText)) {
        WM_PARSE_ASSIGN(text, Leaf(NodeKind::kTemplateText, token_.text));
        parts.push_back(std::move(text));
        continue;
      }
      // The lexer yields only text, interpolations and the end in a string.
      WM_PARSE_RETURN_IF_ERROR(Advance());  // "\("
      interpolated = true;
      WM_PARSE_ASSIGN(query, ParsePipe());
      parts.push_back(std::move(query));
      WM_PARSE_RETURN_IF_ERROR(
          Expect(TokenKind::kInterpolationEnd, "\")\"", "to close the string interpolation"));
    }
    WM_PARSE_RETURN_IF_ERROR(Advance());
    if (interpolated || !format.empty()) {
      return Make(NodeKind::kTemplate, begin, std::move(format), std::move(parts));
    }
    return Make(NodeKind::kString, begin, parts.empty() ? "" : parts[0]->text());
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseObject() {
    uint32_t begin = token_.begin;
    WM_PARSE_RETURN_IF_ERROR(Advance());
    std::vector<NodePtr> entries;
    while (!At(TokenKind::kRightBrace)) {
      uint32_t entry_begin = token_.begin;
      // A computed key, `(query)`, needs a value.
      bool shorthand_allowed = !At(TokenKind::kLeftParen);
      WM_PARSE_ASSIGN(key, ParseObjectKey());
      NodePtr value;
      if (At(TokenKind::kColon)) {
        WM_PARSE_RETURN_IF_ERROR(Advance());
        WM_PARSE_ASSIGN(v, ParseObjectValue());
        value = std::move(v);
      } else if (!shorthand_allowed) {
        return Expected("\":\"", "after a computed object key");
      }
      WM_PARSE_ASSIGN(entry, Make(NodeKind::kObjectEntry, entry_begin, "",
                                  List(std::move(key), std::move(value))));
      entries.push_back(std::move(entry));
      if (At(TokenKind::kComma)) {
        WM_PARSE_RETURN_IF_ERROR(Advance());
        continue;
      }
      if (!At(TokenKind::kRightBrace)) return Expected("\",\" or \"}\"", "in an object");
    }
    WM_PARSE_RETURN_IF_ERROR(Advance());
    return Make(NodeKind::kObject, begin, "", std::move(entries));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseObjectKey() {
    if (At(TokenKind::kIdent) || IsKeyword(token_.kind)) {
      return Leaf(NodeKind::kString, token_.text);
    }
    if (At(TokenKind::kVariable)) return Leaf(NodeKind::kVariable, token_.text);
    if (At(TokenKind::kStringStart)) return ParseString("");
    if (At(TokenKind::kLeftParen)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      WM_PARSE_ASSIGN(query, ParsePipe());
      WM_PARSE_RETURN_IF_ERROR(
          Expect(TokenKind::kRightParen, "\")\"", "to close the computed object key"));
      return query;
    }
    return Expected("an object key (a name, a keyword, a $variable, a string or (expression))", "");
  }

  // objectval := expr ('|' expr)*, right-associative; no ',' (it separates
  // entries) and no def, label or as.
  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseObjectValue() {
    std::vector<NodePtr> parts;
    while (true) {
      WM_PARSE_ASSIGN(part, ParseBinary(kLoosestBinary));
      parts.push_back(std::move(part));
      if (!At(TokenKind::kPipe)) break;
      WM_PARSE_RETURN_IF_ERROR(Advance());
    }
    return FoldPipes(std::move(parts));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseIf() {
    struct Branch {
      uint32_t begin;
      NodePtr condition;
      NodePtr then;
    };
    std::vector<Branch> branches;
    absl::string_view keyword = "if";
    while (true) {
      uint32_t begin = token_.begin;
      WM_PARSE_RETURN_IF_ERROR(Advance());  // "if" or "elif"
      WM_PARSE_ASSIGN(condition, ParsePipe());
      WM_PARSE_RETURN_IF_ERROR(
          Expect(TokenKind::kThen, "\"then\"", absl::StrCat("after ", keyword, " condition")));
      WM_PARSE_ASSIGN(then, ParsePipe());
      branches.push_back({begin, std::move(condition), std::move(then)});
      if (!At(TokenKind::kElif)) break;
      keyword = "elif";
    }
    NodePtr otherwise;
    if (At(TokenKind::kElse)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      WM_PARSE_ASSIGN(e, ParsePipe());
      otherwise = std::move(e);
    }
    if (!At(TokenKind::kEnd)) {
      return Expected(otherwise ? "\"end\"" : "\"elif\", \"else\" or \"end\"", "in if");
    }
    WM_PARSE_RETURN_IF_ERROR(Advance());
    // elif chains nest in the else slot, innermost first; every branch
    // ends at the shared "end".
    for (size_t i = branches.size(); i-- > 0;) {
      WM_PARSE_ASSIGN(node, Make(NodeKind::kIf, branches[i].begin, "",
                                 List(std::move(branches[i].condition), std::move(branches[i].then),
                                      std::move(otherwise))));
      otherwise = std::move(node);
    }
    return otherwise;
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParseReduceOrForeach() {
    uint32_t begin = token_.begin;
    bool reduce = At(TokenKind::kReduce);
    absl::string_view keyword = reduce ? "reduce" : "foreach";
    WM_PARSE_RETURN_IF_ERROR(Advance());
    WM_PARSE_ASSIGN(source, ParseBinary(kLoosestBinary));
    WM_PARSE_RETURN_IF_ERROR(
        Expect(TokenKind::kAs, "\"as\"", absl::StrCat("after the ", keyword, " source")));
    WM_PARSE_ASSIGN(pattern, ParsePattern());
    WM_PARSE_RETURN_IF_ERROR(
        Expect(TokenKind::kLeftParen, "\"(\"", absl::StrCat("after the ", keyword, " pattern")));
    WM_PARSE_ASSIGN(init, ParsePipe());
    WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kSemicolon, "\";\"",
                                    absl::StrCat("after the ", keyword, " initial value")));
    WM_PARSE_ASSIGN(update, ParsePipe());
    std::vector<NodePtr> children =
        List(std::move(source), std::move(pattern), std::move(init), std::move(update));
    if (!reduce) {
      NodePtr extract;
      if (At(TokenKind::kSemicolon)) {
        WM_PARSE_RETURN_IF_ERROR(Advance());
        WM_PARSE_ASSIGN(e, ParsePipe());
        extract = std::move(e);
      }
      children.push_back(std::move(extract));
    }
    WM_PARSE_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, reduce ? "\")\"" : "\";\" or \")\"",
                                    absl::StrCat("in ", keyword)));
    return Make(reduce ? NodeKind::kReduce : NodeKind::kForeach, begin, "", std::move(children));
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParsePattern() {
    Nesting nesting(*this);
    if (depth_ > limits_.max_depth) return DepthError();
    uint32_t begin = token_.begin;
    if (At(TokenKind::kVariable)) return Leaf(NodeKind::kPatternVariable, token_.text);
    if (At(TokenKind::kLeftBracket)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      std::vector<NodePtr> elements;
      while (true) {
        WM_PARSE_ASSIGN(element, ParsePattern());
        elements.push_back(std::move(element));
        if (!At(TokenKind::kComma)) break;
        WM_PARSE_RETURN_IF_ERROR(Advance());
      }
      WM_PARSE_RETURN_IF_ERROR(
          Expect(TokenKind::kRightBracket, "\",\" or \"]\"", "in an array pattern"));
      return Make(NodeKind::kPatternArray, begin, "", std::move(elements));
    }
    if (At(TokenKind::kLeftBrace)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      std::vector<NodePtr> entries;
      while (true) {
        WM_PARSE_ASSIGN(entry, ParsePatternEntry());
        entries.push_back(std::move(entry));
        if (!At(TokenKind::kComma)) break;
        WM_PARSE_RETURN_IF_ERROR(Advance());
      }
      WM_PARSE_RETURN_IF_ERROR(
          Expect(TokenKind::kRightBrace, "\",\" or \"}\"", "in an object pattern"));
      return Make(NodeKind::kPatternObject, begin, "", std::move(entries));
    }
    return Expected("a pattern ($name, [...] or {...})", "");
  }

  WM_PARSER_STEP absl::StatusOr<NodePtr> ParsePatternEntry() {
    uint32_t begin = token_.begin;
    NodePtr key;
    bool variable = false;
    if (At(TokenKind::kVariable)) {
      WM_PARSE_ASSIGN(v, Leaf(NodeKind::kVariable, token_.text));
      key = std::move(v);
      variable = true;
    } else if (At(TokenKind::kIdent) || IsKeyword(token_.kind)) {
      WM_PARSE_ASSIGN(name, Leaf(NodeKind::kString, token_.text));
      key = std::move(name);
    } else if (At(TokenKind::kStringStart)) {
      WM_PARSE_ASSIGN(string, ParseString(""));
      key = std::move(string);
    } else if (At(TokenKind::kLeftParen)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      WM_PARSE_ASSIGN(query, ParsePipe());
      WM_PARSE_RETURN_IF_ERROR(
          Expect(TokenKind::kRightParen, "\")\"", "to close the computed pattern key"));
      key = std::move(query);
    } else {
      return Expected("an object pattern key ($name, a name, a string or (expression))", "");
    }
    NodePtr pattern;
    if (At(TokenKind::kColon)) {
      WM_PARSE_RETURN_IF_ERROR(Advance());
      WM_PARSE_ASSIGN(p, ParsePattern());
      pattern = std::move(p);
    } else if (!variable) {
      return Expected("\":\"", "after an object pattern key (only $name stands alone)");
    }
    return Make(NodeKind::kPatternEntry, begin, "", List(std::move(key), std::move(pattern)));
  }

  absl::string_view source_;
  const ParseLimits& limits_;
  Lexer lexer_;
  Token token_;
  uint32_t previous_end_ = 0;
  int depth_ = 0;
  uintptr_t deepest_ = UINTPTR_MAX;
};

#undef WM_PARSE_ASSIGN
#undef WM_PARSE_RETURN_IF_ERROR
#undef WM_PARSER_STEP

}  // namespace

absl::StatusOr<NodePtr> Parse(absl::string_view source, const ParseLimits& limits) {
  // Spans are 32-bit offsets, whatever the limit says.
  size_t max_bytes = std::min<size_t>(limits.max_source_bytes, UINT32_MAX);
  if (source.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("expression is ", source.size(),
                                                   " bytes; the limit is ", max_bytes, " bytes"));
  }
  Parser parser(source, limits);
  absl::StatusOr<NodePtr> tree = parser.ParseProgram();
  // A source nested to max_depth takes up to ~400 KiB of stack to parse.
  ReleaseStackBelow(reinterpret_cast<const void*>(parser.deepest()));
  return tree;
}

}  // namespace wm::expressions::native
