#include "server/expressions/native/ast.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/json_string.h"

namespace wm::expressions::native {
namespace {

bool IsName(const std::string& s) {
  if (s.empty()) return false;
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!start(s[0])) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

// Whether ToString wraps the node in parentheses itself.
bool PrintsParenthesized(const Node& n) {
  switch (n.kind()) {
    case NodeKind::kBind:
    case NodeKind::kTry:
    case NodeKind::kLabel:
    case NodeKind::kFuncDef:
      return true;
    default:
      return BinaryOperatorText(n.kind()) != nullptr;
  }
}

class Printer {
 public:
  void Print(const Node& n) {
    switch (n.kind()) {
      case NodeKind::kIdentity:
        out_ += '.';
        return;
      case NodeKind::kRecurse:
        out_ += "..";
        return;
      case NodeKind::kIndex: {
        const Node& key = *n.child(1);
        if (key.kind() == NodeKind::kString && IsName(key.text())) {
          PrintTarget(*n.child(0), /*dot_for_identity=*/false);
          absl::StrAppend(&out_, ".", key.text());
          return;
        }
        PrintTarget(*n.child(0), /*dot_for_identity=*/true);
        out_ += '[';
        Print(key);
        out_ += ']';
        return;
      }
      case NodeKind::kSlice:
        PrintTarget(*n.child(0), true);
        out_ += '[';
        if (n.child(1)) Print(*n.child(1));
        out_ += ':';
        if (n.child(2)) Print(*n.child(2));
        out_ += ']';
        return;
      case NodeKind::kIterate:
        PrintTarget(*n.child(0), true);
        out_ += "[]";
        return;
      case NodeKind::kOptional: {
        // `.a?` alone parses as a try of the primary `.a`; a step `.a` after
        // `.` (`. .a?`, `.["a"]?`) is what `?` protects as a step.
        const Node& step = *n.child(0);
        if (step.kind() == NodeKind::kIndex && step.child(0)->kind() == NodeKind::kIdentity &&
            step.child(1)->kind() == NodeKind::kString && IsName(step.child(1)->text())) {
          out_ += ". ";
        }
        PrintTarget(step, true);
        out_ += '?';
        return;
      }
      case NodeKind::kNull:
        out_ += "null";
        return;
      case NodeKind::kTrue:
        out_ += "true";
        return;
      case NodeKind::kFalse:
        out_ += "false";
        return;
      case NodeKind::kNumber:
      case NodeKind::kFormat:
        out_ += n.text();
        return;
      case NodeKind::kString:
      case NodeKind::kTemplateText:
        AppendJsonString(n.text(), out_);
        return;
      case NodeKind::kTemplate:
        PrintTemplate(n);
        return;
      case NodeKind::kArray:
        out_ += '[';
        if (!n.children().empty()) Print(*n.child(0));
        out_ += ']';
        return;
      case NodeKind::kObject:
        out_ += '{';
        PrintEntries(n);
        out_ += '}';
        return;
      case NodeKind::kObjectEntry:
      case NodeKind::kPatternEntry:
        PrintKey(*n.child(0));
        if (n.child(1)) {
          out_ += ": ";
          Print(*n.child(1));
        }
        return;
      case NodeKind::kVariable:
      case NodeKind::kPatternVariable:
        absl::StrAppend(&out_, "$", n.text());
        return;
      case NodeKind::kCall:
        out_ += n.text();
        if (!n.children().empty()) {
          out_ += '(';
          for (size_t i = 0; i < n.children().size(); ++i) {
            if (i > 0) out_ += "; ";
            Print(*n.child(i));
          }
          out_ += ')';
        }
        return;
      case NodeKind::kNegate:
      case NodeKind::kUnaryPlus:
        out_ += n.kind() == NodeKind::kNegate ? '-' : '+';
        Print(*n.child(0));
        return;
      case NodeKind::kBind:
        out_ += '(';
        Print(*n.child(0));
        for (size_t i = 2; i < n.children().size(); ++i) {
          out_ += i == 2 ? " as " : " ?// ";
          Print(*n.child(i));
        }
        out_ += " | ";
        Print(*n.child(1));
        out_ += ')';
        return;
      case NodeKind::kReduce:
      case NodeKind::kForeach:
        out_ += n.kind() == NodeKind::kReduce ? "reduce " : "foreach ";
        Print(*n.child(0));
        out_ += " as ";
        Print(*n.child(1));
        out_ += " (";
        for (size_t i = 2; i < n.children().size(); ++i) {
          if (!n.child(i)) continue;
          if (i > 2) out_ += "; ";
          Print(*n.child(i));
        }
        out_ += ')';
        return;
      case NodeKind::kIf:
        out_ += "if ";
        Print(*n.child(0));
        out_ += " then ";
        Print(*n.child(1));
        if (n.child(2)) {
          out_ += " else ";
          Print(*n.child(2));
        }
        out_ += " end";
        return;
      case NodeKind::kTry:
        out_ += "(try ";
        Print(*n.child(0));
        if (n.child(1)) {
          out_ += " catch ";
          Print(*n.child(1));
        }
        out_ += ')';
        return;
      case NodeKind::kLabel:
        absl::StrAppend(&out_, "(label $", n.text(), " | ");
        Print(*n.child(0));
        out_ += ')';
        return;
      case NodeKind::kBreak:
        absl::StrAppend(&out_, "break $", n.text());
        return;
      case NodeKind::kFuncDef:
        absl::StrAppend(&out_, "(def ", n.text());
        if (!n.params().empty()) absl::StrAppend(&out_, "(", absl::StrJoin(n.params(), "; "), ")");
        out_ += ": ";
        Print(*n.child(0));
        out_ += "; ";
        Print(*n.child(1));
        out_ += ')';
        return;
      case NodeKind::kPatternArray:
        out_ += '[';
        for (size_t i = 0; i < n.children().size(); ++i) {
          if (i > 0) out_ += ", ";
          Print(*n.child(i));
        }
        out_ += ']';
        return;
      case NodeKind::kPatternObject:
        out_ += '{';
        PrintEntries(n);
        out_ += '}';
        return;
      default:
        break;
    }
    // The binary operators.
    absl::StrAppend(&out_, "(");
    Print(*n.child(0));
    absl::StrAppend(&out_, " ", BinaryOperatorText(n.kind()), " ");
    Print(*n.child(1));
    out_ += ')';
  }

  std::string Take() { return std::move(out_); }

 private:
  // A suffix's target. Identity prints as "" before ".name" (".a") and as
  // "." before "[" (".[0]"); targets a suffix would not attach to, or would
  // attach to only in part, are parenthesized.
  void PrintTarget(const Node& target, bool dot_for_identity) {
    if (target.kind() == NodeKind::kIdentity) {
      if (dot_for_identity) out_ += '.';
      return;
    }
    bool parenthesize = false;
    switch (target.kind()) {
      case NodeKind::kNumber:
      case NodeKind::kNegate:
      case NodeKind::kUnaryPlus:
      case NodeKind::kRecurse:
      case NodeKind::kFormat:
      case NodeKind::kBreak:
        parenthesize = true;
        break;
      case NodeKind::kTemplate:
        parenthesize = !target.text().empty();
        break;
      default:
        break;
    }
    if (parenthesize) out_ += '(';
    Print(target);
    if (parenthesize) out_ += ')';
  }

  void PrintTemplate(const Node& n) {
    if (!n.text().empty()) absl::StrAppend(&out_, n.text(), " ");
    out_ += '"';
    for (const NodePtr& part : n.children()) {
      if (part->kind() == NodeKind::kTemplateText) {
        std::string quoted;
        AppendJsonString(part->text(), quoted);
        out_.append(quoted, 1, quoted.size() - 2);
      } else {
        out_ += "\\(";
        Print(*part);
        out_ += ')';
      }
    }
    out_ += '"';
  }

  void PrintKey(const Node& key) {
    bool bare = key.kind() == NodeKind::kString || key.kind() == NodeKind::kVariable ||
                (key.kind() == NodeKind::kTemplate && key.text().empty()) ||
                PrintsParenthesized(key);
    if (!bare) out_ += '(';
    Print(key);
    if (!bare) out_ += ')';
  }

  void PrintEntries(const Node& n) {
    for (size_t i = 0; i < n.children().size(); ++i) {
      if (i > 0) out_ += ", ";
      Print(*n.child(i));
    }
  }

  std::string out_;
};

}  // namespace

Node::Node(NodeKind kind, Span span, std::string text, std::vector<NodePtr> children,
           std::vector<std::string> params)
    : kind_(kind),
      span_(span),
      text_(std::move(text)),
      children_(std::move(children)),
      params_(std::move(params)),
      depth_(1) {
  for (const NodePtr& c : children_) {
    if (c) depth_ = std::max(depth_, c->depth() + 1);
  }
}

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
#define WM_NODE_KIND(k) \
  case NodeKind::k:     \
    return #k;
    WM_NODE_KIND(kIdentity)
    WM_NODE_KIND(kRecurse)
    WM_NODE_KIND(kIndex)
    WM_NODE_KIND(kSlice)
    WM_NODE_KIND(kIterate)
    WM_NODE_KIND(kOptional)
    WM_NODE_KIND(kNull)
    WM_NODE_KIND(kTrue)
    WM_NODE_KIND(kFalse)
    WM_NODE_KIND(kNumber)
    WM_NODE_KIND(kString)
    WM_NODE_KIND(kTemplate)
    WM_NODE_KIND(kTemplateText)
    WM_NODE_KIND(kFormat)
    WM_NODE_KIND(kArray)
    WM_NODE_KIND(kObject)
    WM_NODE_KIND(kObjectEntry)
    WM_NODE_KIND(kVariable)
    WM_NODE_KIND(kCall)
    WM_NODE_KIND(kNegate)
    WM_NODE_KIND(kUnaryPlus)
    WM_NODE_KIND(kPipe)
    WM_NODE_KIND(kComma)
    WM_NODE_KIND(kAlternative)
    WM_NODE_KIND(kAssign)
    WM_NODE_KIND(kUpdate)
    WM_NODE_KIND(kUpdateAdd)
    WM_NODE_KIND(kUpdateSub)
    WM_NODE_KIND(kUpdateMul)
    WM_NODE_KIND(kUpdateDiv)
    WM_NODE_KIND(kUpdateMod)
    WM_NODE_KIND(kUpdateAlt)
    WM_NODE_KIND(kOr)
    WM_NODE_KIND(kAnd)
    WM_NODE_KIND(kEqual)
    WM_NODE_KIND(kNotEqual)
    WM_NODE_KIND(kLess)
    WM_NODE_KIND(kLessEqual)
    WM_NODE_KIND(kGreater)
    WM_NODE_KIND(kGreaterEqual)
    WM_NODE_KIND(kAdd)
    WM_NODE_KIND(kSubtract)
    WM_NODE_KIND(kMultiply)
    WM_NODE_KIND(kDivide)
    WM_NODE_KIND(kModulo)
    WM_NODE_KIND(kBind)
    WM_NODE_KIND(kReduce)
    WM_NODE_KIND(kForeach)
    WM_NODE_KIND(kIf)
    WM_NODE_KIND(kTry)
    WM_NODE_KIND(kLabel)
    WM_NODE_KIND(kBreak)
    WM_NODE_KIND(kFuncDef)
    WM_NODE_KIND(kPatternVariable)
    WM_NODE_KIND(kPatternArray)
    WM_NODE_KIND(kPatternObject)
    WM_NODE_KIND(kPatternEntry)
#undef WM_NODE_KIND
  }
  return "?";
}

const char* BinaryOperatorText(NodeKind kind) {
  switch (kind) {
    case NodeKind::kPipe:
      return "|";
    case NodeKind::kComma:
      return ",";
    case NodeKind::kAlternative:
      return "//";
    case NodeKind::kAssign:
      return "=";
    case NodeKind::kUpdate:
      return "|=";
    case NodeKind::kUpdateAdd:
      return "+=";
    case NodeKind::kUpdateSub:
      return "-=";
    case NodeKind::kUpdateMul:
      return "*=";
    case NodeKind::kUpdateDiv:
      return "/=";
    case NodeKind::kUpdateMod:
      return "%=";
    case NodeKind::kUpdateAlt:
      return "//=";
    case NodeKind::kOr:
      return "or";
    case NodeKind::kAnd:
      return "and";
    case NodeKind::kEqual:
      return "==";
    case NodeKind::kNotEqual:
      return "!=";
    case NodeKind::kLess:
      return "<";
    case NodeKind::kLessEqual:
      return "<=";
    case NodeKind::kGreater:
      return ">";
    case NodeKind::kGreaterEqual:
      return ">=";
    case NodeKind::kAdd:
      return "+";
    case NodeKind::kSubtract:
      return "-";
    case NodeKind::kMultiply:
      return "*";
    case NodeKind::kDivide:
      return "/";
    case NodeKind::kModulo:
      return "%";
    default:
      return nullptr;
  }
}

std::string ToString(const Node& node) {
  Printer printer;
  printer.Print(node);
  return printer.Take();
}

bool SameTree(const Node& a, const Node& b) {
  if (a.kind() != b.kind() || a.text() != b.text() || a.params() != b.params() ||
      a.children().size() != b.children().size()) {
    return false;
  }
  for (size_t i = 0; i < a.children().size(); ++i) {
    const Node* x = a.child(i);
    const Node* y = b.child(i);
    if ((x == nullptr) != (y == nullptr)) return false;
    if (x && !SameTree(*x, *y)) return false;
  }
  return true;
}

}  // namespace wm::expressions::native
