#include "server/expressions/native/lexer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace wm::expressions::native {
namespace {

// The tokens of `source`, each as its source text and, when the token has
// one, "=text"; an error ends the list as "error: <message>".
std::vector<std::string> Tokens(const std::string& source) {
  Lexer lexer(source);
  std::vector<std::string> out;
  while (true) {
    absl::StatusOr<Token> t = lexer.Next();
    if (!t.ok()) {
      out.push_back("error: " + std::string(t.status().message()));
      return out;
    }
    if (t->kind == TokenKind::kEndOfInput) return out;
    out.push_back(source.substr(t->begin, t->end - t->begin) +
                  (t->text.empty() ? "" : "=" + t->text));
  }
}

std::vector<TokenKind> Kinds(const std::string& source) {
  Lexer lexer(source);
  std::vector<TokenKind> out;
  while (true) {
    absl::StatusOr<Token> t = lexer.Next();
    if (!t.ok() || t->kind == TokenKind::kEndOfInput) return out;
    out.push_back(t->kind);
  }
}

using V = std::vector<std::string>;

TEST(LexerTest, NamesFieldsVariablesAndFormats) {
  EXPECT_EQ(Tokens("foo _x1 a::b"), (V{"foo=foo", "_x1=_x1", "a::b=a::b"}));
  EXPECT_EQ(Tokens(".foo .and .if ._"), (V{".foo=foo", ".and=and", ".if=if", "._=_"}));
  EXPECT_EQ(Tokens("$x $__loc__ $m::v"), (V{"$x=x", "$__loc__=__loc__", "$m::v=m::v"}));
  EXPECT_EQ(Tokens("@base64d @sh"), (V{"@base64d=@base64d", "@sh=@sh"}));
  EXPECT_EQ(Tokens("@0 @1a"), (V{"@0=@0", "@1a=@1a"}));  // as in gojq
  // "a::" without a name after it is a name and two colons.
  EXPECT_EQ(Tokens("a::1"), (V{"a=a", ":", ":", "1=1"}));
  EXPECT_EQ(Kinds("if then elif else end and or not"),
            (std::vector<TokenKind>{TokenKind::kIf, TokenKind::kThen, TokenKind::kElif,
                                    TokenKind::kElse, TokenKind::kEnd, TokenKind::kAnd,
                                    TokenKind::kOr, TokenKind::kIdent}));
  EXPECT_EQ(
      Kinds(".a a::b $a::b .. ."),
      (std::vector<TokenKind>{TokenKind::kField, TokenKind::kModuleIdent,
                              TokenKind::kModuleVariable, TokenKind::kRecurse, TokenKind::kDot}));
  EXPECT_TRUE(IsKeyword(TokenKind::kForeach));
  EXPECT_TRUE(IsKeyword(TokenKind::kOr));
  EXPECT_FALSE(IsKeyword(TokenKind::kIdent));
}

TEST(LexerTest, OperatorsTakeTheLongestMatch) {
  EXPECT_EQ(Tokens("|= | //= // ?// ? == = != <= < >= > += -= *= /= %= + - * / %"),
            (V{"|=", "|",  "//=", "//", "?//", "?",  "==", "=", "!=", "<=", "<", ">=",
               ">",  "+=", "-=",  "*=", "/=",  "%=", "+",  "-", "*",  "/",  "%"}));
  EXPECT_EQ(Tokens(".a?//1"), (V{".a=a", "?//", "1=1"}));
  EXPECT_EQ(Tokens("1?/1"), (V{"1=1", "?", "/", "1=1"}));
  EXPECT_EQ(Tokens("...a"), (V{"..", ".a=a"}));
  EXPECT_EQ(Tokens("[]{}();:,"), (V{"[", "]", "{", "}", "(", ")", ";", ":", ","}));
}

TEST(LexerTest, NumbersFollowGojq) {
  EXPECT_EQ(Tokens("0 12 1.5 1. .5 1e3 1E+3 1.5e-3 01"),
            (V{"0=0", "12=12", "1.5=1.5", "1.=1.", ".5=.5", "1e3=1e3", "1E+3=1E+3", "1.5e-3=1.5e-3",
               "01=01"}));
  EXPECT_EQ(Tokens("123456789012345678901234567890"),
            (V{"123456789012345678901234567890=123456789012345678901234567890"}));
  EXPECT_EQ(Tokens("-1"), (V{"-", "1=1"}));
  EXPECT_EQ(Tokens(".e3"), (V{".e3=e3"}));  // a field, not a number
  EXPECT_EQ(Tokens("0.."), (V{"error: 1:1: invalid number literal \"0..\""}));
  EXPECT_EQ(Tokens("1.2.3"), (V{"error: 1:1: invalid number literal \"1.2.\""}));
  EXPECT_EQ(Tokens("0then"), (V{"error: 1:1: invalid number literal \"0t\""}));
  EXPECT_EQ(Tokens("1e"), (V{"error: 1:1: invalid number literal \"1e\""}));
  EXPECT_EQ(Tokens("1e+"), (V{"error: 1:1: invalid number literal \"1e+\""}));
  EXPECT_EQ(Tokens("1ex"), (V{"error: 1:1: invalid number literal \"1ex\""}));
  EXPECT_EQ(Tokens("1e5x"), (V{"error: 1:1: invalid number literal \"1e5x\""}));
  EXPECT_EQ(Tokens(" .5."), (V{"error: 1:2: invalid number literal \".5.\""}));
}

TEST(LexerTest, StringsDecodeEscapes) {
  EXPECT_EQ(Tokens("\"abc\""), (V{"\"", "abc=abc", "\""}));
  EXPECT_EQ(Tokens("\"\""), (V{"\"", "\""}));
  EXPECT_EQ(Tokens(R"("\" \\ \/ \b \f \n \r \t")"), (V{"\"",
                                                       R"(\" \\ \/ \b \f \n \r \t=" \ / )"
                                                       "\b \f \n \r \t",
                                                       "\""}));
  EXPECT_EQ(Tokens(R"("\u00e9\u00C9")"), (V{"\"", "\\u00e9\\u00C9=\xC3\xA9\xC3\x89", "\""}));
  EXPECT_EQ(Tokens(R"("\ud83d\ude00")"), (V{"\"", "\\ud83d\\ude00=\xF0\x9F\x98\x80", "\""}));
  // Unpaired surrogates and invalid UTF-8 become U+FFFD, as in Go.
  EXPECT_EQ(Tokens(R"("\ud83d")"), (V{"\"", "\\ud83d=\xEF\xBF\xBD", "\""}));
  EXPECT_EQ(Tokens(R"("\ude00x")"), (V{"\"", "\\ude00x=\xEF\xBF\xBDx", "\""}));
  EXPECT_EQ(Tokens(R"("\ud83d\u0041")"), (V{"\"",
                                            "\\ud83d\\u0041=\xEF\xBF\xBD"
                                            "A",
                                            "\""}));
  EXPECT_EQ(Tokens("\"a\xFF\""), (V{"\"", "a\xFF=a\xEF\xBF\xBD", "\""}));
  EXPECT_EQ(Tokens("\"\xED\xA0\x80\""),
            (V{"\"", "\xED\xA0\x80=\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "\""}));
  // Raw control characters and line breaks are kept.
  EXPECT_EQ(Tokens("\"a\nb\tc\""), (V{"\"", "a\nb\tc=a\nb\tc", "\""}));
}

TEST(LexerTest, StringErrors) {
  EXPECT_EQ(Tokens(R"("foo\,bar")"),
            (V{"\"", "error: 1:5: invalid escape sequence \"\\,\" in string literal"}));
  EXPECT_EQ(Tokens(R"("\a")"),
            (V{"\"", "error: 1:2: invalid escape sequence \"\\a\" in string literal"}));
  EXPECT_EQ(Tokens(R"("\u")"),
            (V{"\"", "error: 1:2: invalid escape sequence \"\\u\" in string literal"}));
  EXPECT_EQ(Tokens(R"("\u00:00")"),
            (V{"\"", "error: 1:2: invalid escape sequence \"\\u00\" in string literal"}));
  EXPECT_EQ(Tokens(R"("0\u0000\u000/0")"),
            (V{"\"", "error: 1:9: invalid escape sequence \"\\u000\" in string literal"}));
  EXPECT_EQ(Tokens("\"\n\\u\n\""),
            (V{"\"", "error: 2:1: invalid escape sequence \"\\u\" in string literal"}));
  EXPECT_EQ(Tokens("\"\\\xC3\xA9\""),
            (V{"\"", "error: 1:2: invalid escape sequence \"\\\xC3\xA9\" in string literal"}));
  EXPECT_EQ(Tokens(R"(. + "foo)"), (V{".", "+", "\"", "error: 1:5: unterminated string literal"}));
  EXPECT_EQ(Tokens(R"("\)"), (V{"\"", "error: 1:1: unterminated string literal"}));
  EXPECT_EQ(Tokens(R"("\")"), (V{"\"", "error: 1:1: unterminated string literal"}));
}

TEST(LexerTest, InterpolationsNestAndEndAtTheirParenthesis) {
  EXPECT_EQ(Tokens(R"j("a\(1)b")j"), (V{"\"", "a=a", "\\(", "1=1", ")", "b=b", "\""}));
  EXPECT_EQ(Tokens(R"j("\((1))")j"), (V{"\"", "\\(", "(", "1=1", ")", ")", "\""}));
  EXPECT_EQ(Tokens(R"j("\("\(1)")")j"), (V{"\"", "\\(", "\"", "\\(", "1=1", ")", "\"", ")", "\""}));
  EXPECT_EQ(Tokens(R"j("\(1))")j"), (V{"\"", "\\(", "1=1", ")", ")=)", "\""}));
  EXPECT_EQ(Tokens(R"j("x\\(y)")j"), (V{"\"", "x\\\\(y)=x\\(y)", "\""}));
  EXPECT_EQ(Kinds(R"j("\(1)")j"),
            (std::vector<TokenKind>{TokenKind::kStringStart, TokenKind::kInterpolationStart,
                                    TokenKind::kNumber, TokenKind::kInterpolationEnd,
                                    TokenKind::kStringEnd}));
  EXPECT_EQ(Tokens(R"j("\(1 ")j"),
            (V{"\"", "\\(", "1=1", "\"", "error: 1:6: unterminated string literal"}));
  EXPECT_EQ(Tokens(R"j("\(1)" ))j"), (V{"\"", "\\(", "1=1", ")", "\"", ")"}));
  EXPECT_EQ(Tokens(R"j("\(1)" "\(2)j"),
            (V{"\"", "\\(", "1=1", ")", "\"", "\"", "\\(", "2=2",
               "error: 1:8: unterminated string literal (its interpolation misses \")\")"}));
}

TEST(LexerTest, CommentsEndAtALineBreakUnlessEscaped) {
  EXPECT_EQ(Tokens("1 # c\n2"), (V{"1=1", "2=2"}));
  EXPECT_EQ(Tokens("1 # c \\\n still\n2"), (V{"1=1", "2=2"}));
  EXPECT_EQ(Tokens("1 # c \\\\\n2"), (V{"1=1", "2=2"}));
  EXPECT_EQ(Tokens("1 # c \\\\\\\n still\n2"), (V{"1=1", "2=2"}));
  EXPECT_EQ(Tokens("1 # c \\\r\n still\r\n2"), (V{"1=1", "2=2"}));
  EXPECT_EQ(Tokens("1 # c \\\r still\r2"), (V{"1=1", "2=2"}));
  EXPECT_EQ(Tokens("1 # c \\"), (V{"1=1"}));
  EXPECT_EQ(Tokens("# only"), (V{}));
  EXPECT_EQ(Tokens("\"#\" # \"x"), (V{"\"", "#=#", "\""}));
}

TEST(LexerTest, OtherCharactersAreErrorsWithTheirPosition) {
  EXPECT_EQ(Tokens(".foo & .bar"), (V{".foo=foo", "error: 1:6: unexpected character \"&\""}));
  EXPECT_EQ(Tokens("\n  !x"), (V{"error: 2:3: unexpected character \"!\""}));
  EXPECT_EQ(Tokens("\xC3\xA9 \xE2\x98\x86"), (V{"error: 1:1: unexpected character \"\xC3\xA9\""}));
  EXPECT_EQ(
      Tokens("\"\xC3\xA9\" \xE2\x98\x86"),
      (V{"\"", "\xC3\xA9=\xC3\xA9", "\"", "error: 1:5: unexpected character \"\xE2\x98\x86\""}));
  EXPECT_EQ(Tokens("1 \xFF"), (V{"1=1", "error: 1:3: invalid UTF-8 byte"}));
  EXPECT_EQ(Tokens("\f1"), (V{"error: 1:1: unexpected character \"\f\""}));
  EXPECT_EQ(Tokens("$1"), (V{"error: 1:1: expected a variable name after \"$\""}));
  EXPECT_EQ(Tokens("@-"), (V{"error: 1:1: expected a format name after \"@\""}));
  EXPECT_EQ(Tokens(std::string("1\0", 2)), (V{"1=1", "error: 1:2: unexpected NUL byte"}));
}

TEST(LexerTest, PositionsCountLinesAndCharacters) {
  EXPECT_EQ(SourcePosition("abc", 0), "1:1");
  EXPECT_EQ(SourcePosition("abc", 2), "1:3");
  EXPECT_EQ(SourcePosition("a\nbc", 3), "2:2");
  EXPECT_EQ(SourcePosition("a\r\nbc", 4), "2:2");
  EXPECT_EQ(SourcePosition("a\rbc", 3), "2:2");
  EXPECT_EQ(SourcePosition("\xC3\xA9\xC3\xA9x", 4), "1:3");
  EXPECT_EQ(SourcePosition("ab", 2), "1:3");  // the end
}

}  // namespace
}  // namespace wm::expressions::native
