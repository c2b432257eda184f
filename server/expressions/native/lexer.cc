#include "server/expressions/native/lexer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace wm::expressions::native {
namespace {

bool IsWhite(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentTail(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

struct Keyword {
  absl::string_view name;
  TokenKind kind;
};
constexpr Keyword kKeywords[] = {
    {"or", TokenKind::kOr},           {"and", TokenKind::kAnd},
    {"module", TokenKind::kModule},   {"import", TokenKind::kImport},
    {"include", TokenKind::kInclude}, {"def", TokenKind::kDef},
    {"as", TokenKind::kAs},           {"label", TokenKind::kLabel},
    {"break", TokenKind::kBreak},     {"null", TokenKind::kNull},
    {"true", TokenKind::kTrue},       {"false", TokenKind::kFalse},
    {"if", TokenKind::kIf},           {"then", TokenKind::kThen},
    {"elif", TokenKind::kElif},       {"else", TokenKind::kElse},
    {"end", TokenKind::kEnd},         {"try", TokenKind::kTry},
    {"catch", TokenKind::kCatch},     {"reduce", TokenKind::kReduce},
    {"foreach", TokenKind::kForeach},
};

// Operators, longest first so that a prefix never shadows a longer one.
struct Operator {
  absl::string_view text;
  TokenKind kind;
};
constexpr Operator kOperators[] = {
    {"?//", TokenKind::kDestructuringAlt},
    {"//=", TokenKind::kUpdateAlt},
    {"|=", TokenKind::kUpdate},
    {"+=", TokenKind::kUpdateAdd},
    {"-=", TokenKind::kUpdateSub},
    {"*=", TokenKind::kUpdateMul},
    {"/=", TokenKind::kUpdateDiv},
    {"%=", TokenKind::kUpdateMod},
    {"//", TokenKind::kAlt},
    {"==", TokenKind::kEqual},
    {"!=", TokenKind::kNotEqual},
    {"<=", TokenKind::kLessEqual},
    {">=", TokenKind::kGreaterEqual},
    {"[", TokenKind::kLeftBracket},
    {"]", TokenKind::kRightBracket},
    {"{", TokenKind::kLeftBrace},
    {"}", TokenKind::kRightBrace},
    {"(", TokenKind::kLeftParen},
    {")", TokenKind::kRightParen},
    {"|", TokenKind::kPipe},
    {",", TokenKind::kComma},
    {":", TokenKind::kColon},
    {";", TokenKind::kSemicolon},
    {"?", TokenKind::kQuestion},
    {"=", TokenKind::kAssign},
    {"<", TokenKind::kLess},
    {">", TokenKind::kGreater},
    {"+", TokenKind::kPlus},
    {"-", TokenKind::kMinus},
    {"*", TokenKind::kStar},
    {"/", TokenKind::kSlash},
    {"%", TokenKind::kPercent},
};

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

constexpr uint32_t kReplacementCharacter = 0xFFFD;

// The length of the well-formed UTF-8 sequence at the start of `s`, or 0
// (overlong forms, surrogates and code points past U+10FFFF are
// ill-formed, as for Go's utf8.DecodeRune).
size_t WellFormedUtf8Length(absl::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto continuation = [&](size_t i) { return i < s.size() && (byte(i) & 0xC0) == 0x80; };
  unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b0 == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (b0 == 0xED && byte(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b0 == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

uint32_t HexValue(absl::string_view four) {
  uint32_t v = 0;
  for (char c : four) {
    v <<= 4;
    if (IsDigit(c)) {
      v |= c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v |= c - 'a' + 10;
    } else {
      v |= c - 'A' + 10;
    }
  }
  return v;
}

}  // namespace

bool IsKeyword(TokenKind kind) { return kind >= TokenKind::kOr && kind <= TokenKind::kForeach; }

std::string SourcePosition(absl::string_view source, size_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < offset && i < source.size(); ++i) {
    char c = source[i];
    if (c == '\n' || (c == '\r' && (i + 1 >= source.size() || source[i + 1] != '\n'))) {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && c != '\r') {
      ++column;
    }
  }
  return absl::StrCat(line, ":", column);
}

absl::Status Lexer::Error(size_t offset, absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(SourcePosition(source_, offset), ": ", message));
}

absl::StatusOr<Token> Lexer::Next() {
  if (!strings_.empty() && strings_.back().open_parens < 0) return NextInString();
  return NextInCode();
}

absl::Status Lexer::SkipWhitespaceAndComments() {
  while (offset_ < source_.size()) {
    char c = source_[offset_];
    if (IsWhite(c)) {
      ++offset_;
    } else if (c == '#') {
      while (offset_ < source_.size() && source_[offset_] != '\n' && source_[offset_] != '\r') {
        if (source_[offset_] == '\0') return Error(offset_, "NUL byte in a comment");
        if (source_[offset_] == '\\' && offset_ + 1 < source_.size()) {
          // `\\` is an escaped backslash; `\` before a line break continues
          // the comment on the next line.
          char escaped = source_[offset_ + 1];
          if (escaped == '\\' || escaped == '\n') {
            offset_ += 2;
            continue;
          }
          if (escaped == '\r') {
            offset_ += 2;
            if (offset_ < source_.size() && source_[offset_] == '\n') ++offset_;
            continue;
          }
        }
        ++offset_;
      }
    } else {
      break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Token> Lexer::ScanNumber(size_t begin, bool after_dot) {
  enum State { kLead, kFraction, kExponentLead, kExponent };
  State state = after_dot ? kFraction : kLead;
  auto invalid = [&](size_t end) {
    return Error(
        begin, absl::StrCat("invalid number literal \"", source_.substr(begin, end - begin), "\""));
  };
  size_t i = offset_;
  while (true) {
    char c = i < source_.size() ? source_[i] : '\0';
    if (state == kLead || state == kFraction) {
      if (IsDigit(c)) {
        ++i;
      } else if (c == '.') {
        if (state == kFraction) return invalid(i + 1);
        ++i;
        state = kFraction;
      } else if (c == 'e' || c == 'E') {
        ++i;
        if (i < source_.size() && (source_[i] == '+' || source_[i] == '-')) ++i;
        state = kExponentLead;
      } else if (IsIdentStart(c)) {
        return invalid(i + 1);
      } else {
        break;
      }
    } else {
      if (IsDigit(c)) {
        ++i;
        state = kExponent;
      } else if (IsIdentStart(c)) {
        return invalid(i + 1);
      } else if (state == kExponentLead) {
        return invalid(i);
      } else {
        break;
      }
    }
  }
  offset_ = i;
  return Token{TokenKind::kNumber, static_cast<uint32_t>(begin), static_cast<uint32_t>(i),
               std::string(source_.substr(begin, i - begin))};
}

absl::StatusOr<Token> Lexer::NextInCode() {
  if (absl::Status s = SkipWhitespaceAndComments(); !s.ok()) return s;
  size_t begin = offset_;
  auto token = [&](TokenKind kind, size_t length, std::string text = "") {
    offset_ = begin + length;
    return Token{kind, static_cast<uint32_t>(begin), static_cast<uint32_t>(offset_),
                 std::move(text)};
  };
  if (begin >= source_.size()) {
    if (!strings_.empty()) {
      return Error(strings_.back().quote,
                   "unterminated string literal (its interpolation misses \")\")");
    }
    return token(TokenKind::kEndOfInput, 0);
  }
  // The end of a name at `from`, including one `::name` qualification;
  // `qualified` tells whether there was one.
  auto scan_name = [&](size_t from, bool& qualified) {
    size_t i = from;
    while (i < source_.size() && IsIdentTail(source_[i])) ++i;
    qualified = false;
    if (i + 2 < source_.size() && source_[i] == ':' && source_[i + 1] == ':' &&
        IsIdentStart(source_[i + 2])) {
      i += 2;
      while (i < source_.size() && IsIdentTail(source_[i])) ++i;
      qualified = true;
    }
    return i;
  };
  char c = source_[begin];
  char next = begin + 1 < source_.size() ? source_[begin + 1] : '\0';
  if (IsIdentStart(c)) {
    bool qualified;
    size_t end = scan_name(begin, qualified);
    std::string name(source_.substr(begin, end - begin));
    if (qualified) return token(TokenKind::kModuleIdent, end - begin, std::move(name));
    for (const Keyword& k : kKeywords) {
      if (k.name == name) return token(k.kind, end - begin, std::move(name));
    }
    return token(TokenKind::kIdent, end - begin, std::move(name));
  }
  if (IsDigit(c)) {
    offset_ = begin;
    return ScanNumber(begin, false);
  }
  switch (c) {
    case '.':
      if (next == '.') return token(TokenKind::kRecurse, 2);
      if (IsIdentStart(next)) {
        size_t end = begin + 1;
        while (end < source_.size() && IsIdentTail(source_[end])) ++end;
        return token(TokenKind::kField, end - begin,
                     std::string(source_.substr(begin + 1, end - begin - 1)));
      }
      if (IsDigit(next)) {
        offset_ = begin + 1;
        return ScanNumber(begin, true);
      }
      return token(TokenKind::kDot, 1);
    case '$': {
      if (!IsIdentStart(next)) return Error(begin, "expected a variable name after \"$\"");
      bool qualified;
      size_t end = scan_name(begin + 1, qualified);
      return token(qualified ? TokenKind::kModuleVariable : TokenKind::kVariable, end - begin,
                   std::string(source_.substr(begin + 1, end - begin - 1)));
    }
    case '@': {
      // Unlike other names, a format name may start with a digit ("@0" is a
      // format, undefined at run time).
      if (!IsIdentTail(next)) return Error(begin, "expected a format name after \"@\"");
      size_t end = begin + 1;
      while (end < source_.size() && IsIdentTail(source_[end])) ++end;
      return token(TokenKind::kFormat, end - begin,
                   std::string(source_.substr(begin, end - begin)));
    }
    case '"':
      strings_.push_back({begin, -1});
      return token(TokenKind::kStringStart, 1);
    case '(':
      if (!strings_.empty()) ++strings_.back().open_parens;
      return token(TokenKind::kLeftParen, 1);
    case ')':
      if (!strings_.empty()) {
        if (strings_.back().open_parens == 0) {
          strings_.back().open_parens = -1;
          return token(TokenKind::kInterpolationEnd, 1);
        }
        --strings_.back().open_parens;
      }
      return token(TokenKind::kRightParen, 1);
    default:
      break;
  }
  for (const Operator& op : kOperators) {
    if (source_.substr(begin, op.text.size()) == op.text) return token(op.kind, op.text.size());
  }
  if (c == '\0') return Error(begin, "unexpected NUL byte");
  size_t length = WellFormedUtf8Length(source_.substr(begin));
  if (length == 0) return Error(begin, "invalid UTF-8 byte");
  return Error(begin, absl::StrCat("unexpected character \"", source_.substr(begin, length), "\""));
}

absl::StatusOr<Token> Lexer::NextInString() {
  size_t begin = offset_;
  auto unterminated = [&] { return Error(strings_.back().quote, "unterminated string literal"); };
  if (begin >= source_.size()) return unterminated();
  if (source_[begin] == '"') {
    strings_.pop_back();
    offset_ = begin + 1;
    return Token{TokenKind::kStringEnd, static_cast<uint32_t>(begin),
                 static_cast<uint32_t>(offset_), ""};
  }
  if (source_.substr(begin, 2) == "\\(") {
    strings_.back().open_parens = 0;
    offset_ = begin + 2;
    return Token{TokenKind::kInterpolationStart, static_cast<uint32_t>(begin),
                 static_cast<uint32_t>(offset_), ""};
  }
  std::string text;
  size_t i = begin;
  while (true) {
    if (i >= source_.size()) return unterminated();
    char c = source_[i];
    if (c == '"') break;
    if (c != '\\') {
      size_t length = WellFormedUtf8Length(source_.substr(i));
      if (length == 0) {
        AppendUtf8(kReplacementCharacter, text);
        ++i;
      } else {
        text.append(source_.data() + i, length);
        i += length;
      }
      continue;
    }
    if (i + 1 >= source_.size()) return unterminated();
    char escaped = source_[i + 1];
    if (escaped == '(') break;
    switch (escaped) {
      case '"':
      case '\\':
      case '/':
        text += escaped;
        i += 2;
        continue;
      case 'b':
        text += '\b';
        i += 2;
        continue;
      case 'f':
        text += '\f';
        i += 2;
        continue;
      case 'n':
        text += '\n';
        i += 2;
        continue;
      case 'r':
        text += '\r';
        i += 2;
        continue;
      case 't':
        text += '\t';
        i += 2;
        continue;
      case 'u':
        break;
      default: {
        size_t length = WellFormedUtf8Length(source_.substr(i + 1));
        return Error(i, absl::StrCat("invalid escape sequence \"\\",
                                     source_.substr(i + 1, length == 0 ? 1 : length),
                                     "\" in string literal"));
      }
    }
    size_t hex = 0;
    while (hex < 4 && i + 2 + hex < source_.size() && IsHex(source_[i + 2 + hex])) ++hex;
    if (hex < 4) {
      return Error(i, absl::StrCat("invalid escape sequence \"", source_.substr(i, 2 + hex),
                                   "\" in string literal"));
    }
    uint32_t unit = HexValue(source_.substr(i + 2, 4));
    i += 6;
    if (unit >= 0xD800 && unit <= 0xDFFF) {
      // A high surrogate pairs with an immediately following low one;
      // anything else is replaced, as Go's JSON decoder does.
      uint32_t code_point = kReplacementCharacter;
      if (unit < 0xDC00 && source_.substr(i, 2) == "\\u" && i + 6 <= source_.size()) {
        absl::string_view low_hex = source_.substr(i + 2, 4);
        bool all_hex = true;
        for (char h : low_hex) all_hex = all_hex && IsHex(h);
        uint32_t low = all_hex ? HexValue(low_hex) : 0;
        if (low >= 0xDC00 && low <= 0xDFFF) {
          code_point = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
      }
      AppendUtf8(code_point, text);
    } else {
      AppendUtf8(unit, text);
    }
  }
  offset_ = i;
  return Token{TokenKind::kStringText, static_cast<uint32_t>(begin), static_cast<uint32_t>(i),
               std::move(text)};
}

}  // namespace wm::expressions::native
