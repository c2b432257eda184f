#ifndef WM_SERVER_EXPRESSIONS_NATIVE_LEXER_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_LEXER_H_

// The tokens of gojq's jq dialect, read one at a time (the parser pulls
// them, so the first error in source order is the one reported).
//
// Lexical rules follow gojq's lexer.go:
//  - whitespace is space, tab, CR and LF only; `#` starts a comment to the
//    end of the line, and a backslash before a line break continues it
//    (`\\` is an escaped backslash and does not);
//  - `.name` is one token (kField) whatever the name, so `.and` indexes;
//    `..` is kRecurse; `.5` is a number;
//  - numbers are `digits[.digits][(e|E)[+|-]digits]` or `.digits...`; a
//    letter, a second `.` or a bare exponent right after one makes the whole
//    run an invalid number ("0..", "0then", "1e"); the literal text is kept
//    as written (gojq turns integers that do not fit an int into big
//    integers, so the evaluator needs the digits);
//  - `name::name` and `$name::name` are module-qualified names; a format
//    `@name` may start with a digit (`@0` lexes; it is undefined at run
//    time);
//  - `?//` is always the destructuring alternative, so `.a?//1` does not
//    lex as `.a? // 1` (as in gojq);
//  - strings decode JSON escapes plus `\(`, which starts an interpolation
//    that ends at its matching `)`; an invalid UTF-8 byte or an unpaired
//    surrogate escape becomes U+FFFD, as Go's JSON decoder does.
// Deliberate difference: gojq reads a NUL byte outside a string as the end
// of the program (silently dropping the rest); we reject it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm::expressions::native {

enum class TokenKind {
  kEndOfInput,
  kIdent,           // foo
  kModuleIdent,     // mod::foo
  kVariable,        // $foo (text: foo)
  kModuleVariable,  // $mod::foo (text: mod::foo)
  kField,           // .foo (text: foo)
  kRecurse,         // ..
  kNumber,          // text: the literal as written
  kFormat,          // @base64 (text: @base64)
  // A string is kStringStart, then kStringText and interpolations
  // (kInterpolationStart, the tokens of a query, kInterpolationEnd) in
  // source order, then kStringEnd. Empty text runs are not emitted.
  kStringStart,
  kStringText,  // text: decoded
  kInterpolationStart,
  kInterpolationEnd,
  kStringEnd,
  // Keywords.
  kOr,
  kAnd,
  kModule,
  kImport,
  kInclude,
  kDef,
  kAs,
  kLabel,
  kBreak,
  kNull,
  kTrue,
  kFalse,
  kIf,
  kThen,
  kElif,
  kElse,
  kEnd,
  kTry,
  kCatch,
  kReduce,
  kForeach,
  // Punctuation and operators.
  kDot,
  kLeftBracket,
  kRightBracket,
  kLeftBrace,
  kRightBrace,
  kLeftParen,
  kRightParen,
  kPipe,
  kComma,
  kColon,
  kSemicolon,
  kQuestion,
  kDestructuringAlt,  // ?//
  kAlt,               // //
  kAssign,            // =
  kUpdate,            // |=
  kUpdateAdd,         // +=
  kUpdateSub,         // -=
  kUpdateMul,         // *=
  kUpdateDiv,         // /=
  kUpdateMod,         // %=
  kUpdateAlt,         // //=
  kEqual,             // ==
  kNotEqual,          // !=
  kLess,              // <
  kLessEqual,         // <=
  kGreater,           // >
  kGreaterEqual,      // >=
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
};

struct Token {
  TokenKind kind = TokenKind::kEndOfInput;
  // Byte range in the source.
  uint32_t begin = 0;
  uint32_t end = 0;
  // Names without their sigil, a keyword's spelling, a number's literal, a
  // string run decoded; empty for the rest.
  std::string text;
};

// Whether `kind` is a keyword; keywords may also be object keys (`{if: 1}`).
bool IsKeyword(TokenKind kind);

// "line:column" of byte `offset` (both from 1; columns count UTF-8
// characters).
std::string SourcePosition(absl::string_view source, size_t offset);

class Lexer {
 public:
  explicit Lexer(absl::string_view source) : source_(source) {}

  // The next token. Errors are InvalidArgument, prefixed with line:column:
  // an unterminated string, an invalid escape sequence or number literal, a
  // character that starts no token.
  absl::StatusOr<Token> Next();

 private:
  absl::StatusOr<Token> NextInString();
  absl::StatusOr<Token> NextInCode();
  absl::Status SkipWhitespaceAndComments();
  absl::StatusOr<Token> ScanNumber(size_t begin, bool after_dot);
  absl::Status Error(size_t offset, absl::string_view message) const;

  absl::string_view source_;
  size_t offset_ = 0;
  // One frame per string being read, innermost last.
  struct StringFrame {
    size_t quote;  // offset of the opening quote
    // Parentheses open inside the current interpolation, or -1 while
    // reading the string's text.
    int open_parens;
  };
  std::vector<StringFrame> strings_;
};

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_LEXER_H_
