#include "server/expressions/native/parser.h"

#include <pthread.h>

#include <cctype>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/common/testing/process_memory.h"
#include "server/expressions/native/test_support.h"

namespace wm::expressions::native {
namespace {

using ::wm::expressions::native::testing::ExpectRoundTrip;

// The canonical form of `source`'s tree, or "error: <message>".
std::string Canonical(const std::string& source, const ParseLimits& limits = {}) {
  absl::StatusOr<NodePtr> tree = Parse(source, limits);
  if (!tree.ok()) return absl::StrCat("error: ", tree.status().message());
  return ToString(**tree);
}

struct Case {
  const char* source;
  const char* expected;  // ToString of the tree
};

void ExpectParses(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(Canonical(c.source), c.expected) << "source: " << c.source;
    ExpectRoundTrip(c.source);
  }
}

TEST(ParserTest, PathsAndSuffixes) {
  ExpectParses({
      {".", "."},
      {"..", ".."},
      {".a", ".a"},
      {".a.b.c", ".a.b.c"},
      {".and", ".and"},  // keywords index after "."
      {".if.then.reduce", ".if.then.reduce"},
      {"._a1", "._a1"},
      {".\"a b\"", ".[\"a b\"]"},
      {".\"a\"", ".a"},
      {".[\"a\"]", ".a"},
      {". [\"a\"]", ".a"},
      {".a.\"b\"", ".a.b"},
      {".a.[0]", ".a[0]"},
      {".a.[]", ".a[]"},
      {".[0]", ".[0]"},
      {". [0]", ".[0]"},
      {".[-1]", ".[-1]"},
      {".[.5]", ".[.5]"},
      {".[]", ".[]"},
      {".[]?", ".[]?"},
      {".a[]", ".a[]"},
      {".a[]?", ".a[]?"},
      {".a?", "(try .a)"},
      // `?` after a step of `.` protects the step (found by jq_parser_fuzzer).
      {". .a?", ". .a?"},
      {".[\"a\"]?", ". .a?"},
      {". .an? .y", ". .an?.y"},
      {".a?.b", "(try .a).b"},
      {".a.b?", ".a.b?"},
      {".a??", "(try (try .a))"},
      {"..?", "(try ..)"},
      {"...a", "(..).a"},
      {".[1:2]", ".[1:2]"},
      {".[:2]", ".[:2]"},
      {".[1:]", ".[1:]"},
      {".[.a:.b]", ".[.a:.b]"},
      {".[1, 2]", ".[(1 , 2)]"},
      {".[. | 1]", ".[(. | 1)]"},
      {".a[1:][0]", ".a[1:][0]"},
      {".\"a\\(1)\"", ".[\"a\\(1)\"]"},
      {"$x.a", "$x.a"},
      {"$x[0]", "$x[0]"},
      {"f.a", "f.a"},
      {"\"s\".a", "\"s\".a"},
      {"[1][0]", "[1][0]"},
      {"{a: 1}.a", "{\"a\": 1}.a"},
      {"(1).a", "(1).a"},
      {"1[0]", "(1)[0]"},
      {"(.a | .b).c", "(.a | .b).c"},
      {"(.a, .b)[]", "(.a , .b)[]"},
      {"(1 + 2)?", "(try (1 + 2))"},
      {"f?", "(try f)"},
      {"$__loc__", "$__loc__"},
      {"$m::v", "$m::v"},
      {"null.a", "null.a"},
      {"if . then . end.a", "if . then . end.a"},
  });
}

TEST(ParserTest, Literals) {
  ExpectParses({
      {"null", "null"},
      {"true", "true"},
      {"false", "false"},
      {"1", "1"},
      {"1.50", "1.50"},  // literal text kept
      {"1.", "1."},
      {".5", ".5"},
      {"1e3", "1e3"},
      {"1E+3", "1E+3"},
      {"1.5e-3", "1.5e-3"},
      {"01", "01"},
      {"100000000000000000000000000000000000001", "100000000000000000000000000000000000001"},
      {"-1", "-1"},
      {"+1", "+1"},
      {"- -1", "--1"},
      {"-(1)", "-1"},
      {"-(1 + 2)", "-(1 + 2)"},
      {"-.a.b", "-.a.b"},
      {"-.a?", "-(try .a)"},
      {"(-1).a", "(-1).a"},
      {"\"\"", "\"\""},
      {"\"abc\"", "\"abc\""},
      {"\"a\\\"b\\\\c\\/d\"", "\"a\\\"b\\\\c/d\""},
      {"\"\\b\\f\\n\\r\\t\"", "\"\\b\\f\\n\\r\\t\""},
      {"\"\\u00e9\\u00E9\"", "\"\xC3\xA9\xC3\xA9\""},
      {"\"\\ud83d\\ude00\"", "\"\xF0\x9F\x98\x80\""},
      {"\"\\u0000\"", "\"\\u0000\""},
      {"\"line\nbreak\"", "\"line\\nbreak\""},
      {"[]", "[]"},
      {"[1]", "[1]"},
      {"[1, 2, 3]", "[((1 , 2) , 3)]"},
      {"[.[] | . * 2]", "[(.[] | (. * 2))]"},
      {"[def f: 1; f]", "[(def f: 1; f)]"},
      {"{}", "{}"},
  });
}

TEST(ParserTest, StringsTemplatesAndFormats) {
  ExpectParses({
      {"\"a\\(1)b\"", "\"a\\(1)b\""},
      {"\"\\(1)\"", "\"\\(1)\""},
      {"\"\\(1)\\(2)\"", "\"\\(1)\\(2)\""},
      {"\"a\\(1 + 2)b\"", "\"a\\((1 + 2))b\""},
      {"\"\\(\"x\")\"", "\"\\(\"x\")\""},
      {"\"\\(\"in\\(1)\")\"", "\"\\(\"in\\(1)\")\""},
      {"\"\\((1))\"", "\"\\(1)\""},
      {"\"\\(f(1; 2))\"", "\"\\(f(1; 2))\""},
      {"\"\\(. as $x | $x)\"", "\"\\((. as $x | $x))\""},
      {"\"x\\\\(not interpolated)\"", "\"x\\\\(not interpolated)\""},
      {"@base64", "@base64"},
      {"@base64d", "@base64d"},
      {"@0", "@0"},
      {"@foo?, @bar\"\\(0)\"?, 1", "(((try @foo) , (try @bar \"\\(0)\")) , 1)"},
      {"@json \"x\"", "@json \"x\""},
      {"@base64 \"x\\(.)y\"", "@base64 \"x\\(.)y\""},
      {"@sh \"echo \\(.a)\"", "@sh \"echo \\(.a)\""},
      {"@base64 \"\"", "@base64 \"\""},
      {"@text .a", "(@text).a"},  // a format is a term, so suffixes apply
      {"(@base64 \"x\").a", "(@base64 \"x\").a"},
      {"@base64 | @json", "(@base64 | @json)"},
  });
}

TEST(ParserTest, Objects) {
  ExpectParses({
      {"{a}", "{\"a\"}"},
      {"{\"a\"}", "{\"a\"}"},
      {"{$x}", "{$x}"},
      {"{$__loc__}", "{$__loc__}"},
      {"{a: 1}", "{\"a\": 1}"},
      {"{a: 1,}", "{\"a\": 1}"},
      {"{\"a b\": 1}", "{\"a b\": 1}"},
      {"{(.a): 1}", "{(.a): 1}"},
      {"{(.a, .b): 1}", "{(.a , .b): 1}"},
      {"{(\"a\"): 1}", "{\"a\": 1}"},
      {"{$x: 1}", "{$x: 1}"},
      {"{\"a\\(1)\": 2}", "{\"a\\(1)\": 2}"},
      {"{\"\\(.k)\"}", "{\"\\(.k)\"}"},
      {"{(@base64 \"x\\(1)\"): 1}", "{(@base64 \"x\\(1)\"): 1}"},
      {"{a: 1, b: 2}", "{\"a\": 1, \"b\": 2}"},
      {"{a: 1 | 2, b: 3}", "{\"a\": (1 | 2), \"b\": 3}"},
      {"{a: 1 | 2 | 3}", "{\"a\": (1 | (2 | 3))}"},
      {"{a: (1, 2)}", "{\"a\": (1 , 2)}"},
      {"{a: 1 + 2 // 3}", "{\"a\": ((1 + 2) // 3)}"},
      {"{a: -1}", "{\"a\": -1}"},
      {"{a: reduce .[] as $x (0; 1)}", "{\"a\": reduce .[] as $x (0; 1)}"},
      {"{a: {b: {c}}}", "{\"a\": {\"b\": {\"c\"}}}"},
      // Every keyword is a key, alone or with a value.
      {"{if: 0, and: 1, or: 2, then: 3, else: 4, elif: 5, end: 6, as: 7, def: 8}",
       "{\"if\": 0, \"and\": 1, \"or\": 2, \"then\": 3, \"else\": 4, \"elif\": 5, \"end\": 6, "
       "\"as\": 7, \"def\": 8}"},
      {"{reduce: 9, foreach: 10, try: 11, catch: 12, label: 13, import: 14, include: 15}",
       "{\"reduce\": 9, \"foreach\": 10, \"try\": 11, \"catch\": 12, \"label\": 13, "
       "\"import\": 14, \"include\": 15}"},
      {"{module: 16, null: 17, true: 18, false: 19, break: 20}",
       "{\"module\": 16, \"null\": 17, \"true\": 18, \"false\": 19, \"break\": 20}"},
      {"{as, and, null, module}", "{\"as\", \"and\", \"null\", \"module\"}"},
  });
}

TEST(ParserTest, CallsAndDefinitions) {
  ExpectParses({
      {"f", "f"},
      {"not", "not"},
      {"f(1)", "f(1)"},
      {"f(1; 2)", "f(1; 2)"},
      {"f(1, 2; 3 | 4)", "f((1 , 2); (3 | 4))"},
      {"f(def g: 1; g)", "f((def g: 1; g))"},
      {"mod::f", "mod::f"},
      {"mod::f(1)", "mod::f(1)"},
      {"def f: 1; f", "(def f: 1; f)"},
      {"def f: 1; def g: 2; f, g", "(def f: 1; (def g: 2; (f , g)))"},
      {"def f(g): g; f(.)", "(def f(g): g; f(.))"},
      {"def f($x): $x; f(1)", "(def f($x): $x; f(1))"},
      {"def f(g; $x): g + $x; f(.; 1)", "(def f(g; $x): (g + $x); f(.; 1))"},
      {"def f: def g: 1; g; f", "(def f: (def g: 1; g); f)"},
      {"def f: 1, 2; f", "(def f: (1 , 2); f)"},
      {"def f: 1; f | f", "(def f: 1; (f | f))"},
      // A definition may start any query: after "," and "|", in brackets,
      // parentheses, arguments, conditions and interpolations.
      {"1, def f: 2; f, 3", "(1 , (def f: 2; (f , 3)))"},
      {"1 | def f: 2; f | 3", "(1 | (def f: 2; (f | 3)))"},
      {"(def f: 1; f) + 1", "((def f: 1; f) + 1)"},
      {"if def f: 1; f then 2 end", "if (def f: 1; f) then 2 end"},
      {"\"\\(def f: 1; f)\"", "\"\\((def f: 1; f))\""},
      {"def f: 1; f as $x | $x", "(def f: 1; (f as $x | $x))"},
      {"def f: reduce .[] as $x (0; . + $x); f", "(def f: reduce .[] as $x (0; (. + $x)); f)"},
  });
}

TEST(ParserTest, ControlFlow) {
  ExpectParses({
      {"if . then 1 else 2 end", "if . then 1 else 2 end"},
      {"if . then 1 end", "if . then 1 end"},
      {"if . then 1 elif .a then 2 else 3 end", "if . then 1 else if .a then 2 else 3 end end"},
      {"if . then 1 elif .a then 2 end", "if . then 1 else if .a then 2 end end"},
      {"if .a, .b then 1, 2 else 3 | 4 end", "if (.a , .b) then (1 , 2) else (3 | 4) end"},
      {"if . then . as $x | $x end", "if . then (. as $x | $x) end"},
      {". + if 1 then 2 else 3 end + 4", "((. + if 1 then 2 else 3 end) + 4)"},
      {"-if . then 1 end", "-if . then 1 end"},
      {"try .a", "(try .a)"},
      {"try .a catch .b", "(try .a catch .b)"},
      {"try error(\"x\") catch . + 1", "((try error(\"x\") catch .) + 1)"},
      {"1 + try 2 catch 3 + 4", "((1 + (try 2 catch 3)) + 4)"},
      {"try 0 * error(0)", "((try 0) * error(0))"},
      {"try error(0) // 1", "((try error(0)) // 1)"},
      {"try error(0) = 1", "((try error(0)) = 1)"},
      {"1, try error(2), 3", "((1 , (try error(2))) , 3)"},
      {"try 0 .[error(0)]", "(try (0)[error(0)])"},
      {"try .a.b?", "(try .a.b?)"},
      {"try -1", "(try -1)"},
      {"[-try .]", "[-(try .)]"},
      {"try try a catch b", "(try (try a catch b))"},
      {"try (try a) catch b", "(try (try a) catch b)"},
      {"try a catch try b catch c", "(try a catch (try b catch c))"},
      {"try 1 as $x | $x", "((try 1) as $x | $x)"},
      {"try if . then 1 end catch 2", "(try if . then 1 end catch 2)"},
      {"reduce .[] as $x (0; . + $x)", "reduce .[] as $x (0; (. + $x))"},
      {"reduce .[] as [$a, $b] (0; . + $a * $b)", "reduce .[] as [$a, $b] (0; (. + ($a * $b)))"},
      {"reduce .[] + 1 as $x (0; .)", "reduce (.[] + 1) as $x (0; .)"},
      {"reduce (1, 2) as $x (0, 1; ., 1)", "reduce (1 , 2) as $x ((0 , 1); (. , 1))"},
      {"reduce .[] as $x (0; . + $x) as $x | $x", "(reduce .[] as $x (0; (. + $x)) as $x | $x)"},
      {". + reduce . as $n (. + [2]; [.]) + .", "((. + reduce . as $n ((. + [2]); [.])) + .)"},
      {"reduce reduce . as $a (0; 1) as $b (2; 3)", "reduce reduce . as $a (0; 1) as $b (2; 3)"},
      {"foreach .[] as $x (0; . + $x)", "foreach .[] as $x (0; (. + $x))"},
      {"foreach .[] as $x (0; . + $x; [$x, .])", "foreach .[] as $x (0; (. + $x); [($x , .)])"},
      {"foreach .[] as {a: $a} (0; 1; 2) | 3", "(foreach .[] as {\"a\": $a} (0; 1; 2) | 3)"},
      {"[foreach .[] as $x (0; . + $x) as $x | $x]",
       "[(foreach .[] as $x (0; (. + $x)) as $x | $x)]"},
      {"label $out | 1, break $out", "(label $out | (1 , break $out))"},
      {"label $x | label $y | break $x", "(label $x | (label $y | break $x))"},
      {"1, label $x | 2, 3", "(1 , (label $x | (2 , 3)))"},
      {"1 | label $x | 2 | 3", "(1 | (label $x | (2 | 3)))"},
      {"[(label $x | .[] | if . > 2 then break $x else . end), 0]",
       "[((label $x | (.[] | if (. > 2) then break $x else . end)) , 0)]"},
      {"break $x + 1", "(break $x + 1)"},
      {"(break $x).a", "(break $x).a"},
      {"label $x | (label $y | try break $y catch .), .",
       "(label $x | ((label $y | (try break $y catch .)) , .))"},
  });
}

TEST(ParserTest, Patterns) {
  ExpectParses({
      {". as $x | $x", "(. as $x | $x)"},
      {". as [$a] | $a", "(. as [$a] | $a)"},
      {". as [$a, $b, [$c]] | $a", "(. as [$a, $b, [$c]] | $a)"},
      {". as {$a} | $a", "(. as {$a} | $a)"},
      {". as {a: $x} | $x", "(. as {\"a\": $x} | $x)"},
      {". as {if: $x} | $x", "(. as {\"if\": $x} | $x)"},
      {". as {\"a b\": $x} | $x", "(. as {\"a b\": $x} | $x)"},
      {". as {\"a\\(1)\": $x} | $x", "(. as {\"a\\(1)\": $x} | $x)"},
      {". as {(.k): $x} | $x", "(. as {(.k): $x} | $x)"},
      {". as {$a: [$b]} | $b", "(. as {$a: [$b]} | $b)"},
      {". as [$a, {b: $c, $d}] | $a", "(. as [$a, {\"b\": $c, $d}] | $a)"},
      {". as {a: {b: [$x, {$y}]}} | 1", "(. as {\"a\": {\"b\": [$x, {$y}]}} | 1)"},
      {". as [$a] ?// $a | $a", "(. as [$a] ?// $a | $a)"},
      {". as [$a] ?// {$a} ?// $a | $a", "(. as [$a] ?// {$a} ?// $a | $a)"},
      {". as $x ?// [$x] | $x", "(. as $x ?// [$x] | $x)"},
  });
}

// `as` takes the longest expr on its left (gojq's `query as patterns |
// query` with tokAs above every binary operator's reduction), and the rest
// of the query as its body.
TEST(ParserTest, AsBindsTheWholeExpressionOnItsLeft) {
  ExpectParses({
      // jq 1.6 reads this `.a and .b and ((.c) as $s | $s)`.
      {".a and .b and (.c) as $s | $s", "(((.a and .b) and .c) as $s | $s)"},
      {"A and B and (C) as $status | body", "(((A and B) and C) as $status | body)"},
      {"1 + 2 as $x | -$x", "((1 + 2) as $x | -$x)"},
      {"true // 1 as $x | [$x]", "((true // 1) as $x | [$x])"},
      {"-1 as $x | 1, $x", "(-1 as $x | (1 , $x))"},
      {". as $x | .a , .b", "(. as $x | (.a , .b))"},
      {". as $x | .a | .b", "(. as $x | (.a | .b))"},
      {"a, b as $x | c, d", "(a , (b as $x | (c , d)))"},
      {"a | b as $x | c | d", "(a | (b as $x | (c | d)))"},
      {"1 as $x | 2 as $y | 3", "(1 as $x | (2 as $y | 3))"},
      {"(1 as $x | $x) + 1", "((1 as $x | $x) + 1)"},
      {".[] as [$a] | $a", "(.[] as [$a] | $a)"},
      {"label $l | . as $x | $x", "(label $l | (. as $x | $x))"},
  });
  // The same for every binary operator below ",".
  for (const char* op : {"//", "=",  "|=", "+=", "-=", "*=", "/=", "%=", "//=", "or", "and",
                         "==", "!=", "<",  "<=", ">",  ">=", "+",  "-",  "*",   "/",  "%"}) {
    EXPECT_EQ(Canonical(absl::StrCat(".a ", op, " .b as $x | $x")),
              absl::StrCat("((.a ", op, " .b) as $x | $x)"))
        << op;
  }
}

// The operators of gojq's precedence declarations, loosest first:
// %right '|', %left ',', %right //, %nonassoc update operators, %left or,
// %left and, %nonassoc comparisons, %left + -, %left * / %.
struct OperatorInfo {
  const char* text;
  int precedence;
  enum { kLeft, kRight, kNone } associativity;
};
const OperatorInfo kOperators[] = {
    {"|", 0, OperatorInfo::kRight},  {",", 1, OperatorInfo::kLeft},
    {"//", 2, OperatorInfo::kRight}, {"=", 3, OperatorInfo::kNone},
    {"|=", 3, OperatorInfo::kNone},  {"+=", 3, OperatorInfo::kNone},
    {"-=", 3, OperatorInfo::kNone},  {"*=", 3, OperatorInfo::kNone},
    {"/=", 3, OperatorInfo::kNone},  {"%=", 3, OperatorInfo::kNone},
    {"//=", 3, OperatorInfo::kNone}, {"or", 4, OperatorInfo::kLeft},
    {"and", 5, OperatorInfo::kLeft}, {"==", 6, OperatorInfo::kNone},
    {"!=", 6, OperatorInfo::kNone},  {"<", 6, OperatorInfo::kNone},
    {"<=", 6, OperatorInfo::kNone},  {">", 6, OperatorInfo::kNone},
    {">=", 6, OperatorInfo::kNone},  {"+", 7, OperatorInfo::kLeft},
    {"-", 7, OperatorInfo::kLeft},   {"*", 8, OperatorInfo::kLeft},
    {"/", 8, OperatorInfo::kLeft},   {"%", 8, OperatorInfo::kLeft},
};

TEST(ParserTest, EveryOperatorPairHasGojqPrecedenceAndAssociativity) {
  int checked = 0;
  for (const OperatorInfo& first : kOperators) {
    for (const OperatorInfo& second : kOperators) {
      std::string source = absl::StrCat(".a ", first.text, " .b ", second.text, " .c");
      std::string left = absl::StrCat("((.a ", first.text, " .b) ", second.text, " .c)");
      std::string right = absl::StrCat("(.a ", first.text, " (.b ", second.text, " .c))");
      std::string expected;
      if (first.precedence > second.precedence) {
        expected = left;
      } else if (first.precedence < second.precedence) {
        expected = right;
      } else if (first.associativity == OperatorInfo::kLeft) {
        expected = left;
      } else if (first.associativity == OperatorInfo::kRight) {
        expected = right;
      } else {
        expected = absl::StrCat("error: 1:", 8 + std::string(first.text).size(), ": ",
                                first.precedence == 6 ? "comparison" : "assignment",
                                " operators are non-associative: parenthesize one side of \"",
                                second.text, "\"");
      }
      EXPECT_EQ(Canonical(source), expected) << source;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24 * 24);
}

// Unary minus takes a term: it binds tighter than every binary operator and
// looser than every suffix.
TEST(ParserTest, UnaryOperatorsTakeATerm) {
  for (const OperatorInfo& op : kOperators) {
    EXPECT_EQ(Canonical(absl::StrCat("-.a ", op.text, " -.b")),
              absl::StrCat("(-.a ", op.text, " -.b)"))
        << op.text;
  }
  ExpectParses({
      {"-.a[0]?", "-.a[0]?"},
      {"-1 as $x | $x", "(-1 as $x | $x)"},
      {"-reduce . as $x (0; 1)", "-reduce . as $x (0; 1)"},
      {"+-+1", "+-+1"},
  });
}

TEST(ParserTest, CommentsAndWhitespace) {
  ExpectParses({
      {". # comment", "."},
      {"1, # comment\n2", "(1 , 2)"},
      {"1, # comment \\\n still comment\n2", "(1 , 2)"},
      {"1, # comment \\\\\n2", "(1 , 2)"},
      {"1, # \r\n2, # \\\r\ncomment\\\\\r\n3", "((1 , 2) , 3)"},
      {"1, # \r2, # \\\rcomment\\\\\r3", "((1 , 2) , 3)"},
      {"path(.a # a trailing comment\n)", "path(.a)"},
      {"\t.a\r\n|\n.b ", "(.a | .b)"},
      {"\"# not a comment\"", "\"# not a comment\""},
  });
}

struct ErrorCase {
  const char* source;
  const char* message;
};

TEST(ParserTest, ErrorsSayWhereAndWhatWasExpected) {
  const ErrorCase cases[] = {
      {"", "1:1: missing query (try \".\")"},
      {"  # only a comment", "1:19: missing query (try \".\")"},
      {"def f: 0;", "1:10: missing query after the definition of f (try \".\")"},
      {"if . else 1 end", "1:6: expected \"then\" after if condition, got \"else\""},
      {"if . then 1 elif 2 else 3 end",
       "1:20: expected \"then\" after elif condition, got \"else\""},
      {"if . then 1", "1:12: expected \"elif\", \"else\" or \"end\" in if, got end of input"},
      {"if . then 1 else 2", "1:19: expected \"end\" in if, got end of input"},
      {"if . then 1 else 2 elif 3 then 4 end", "1:20: expected \"end\" in if, got \"elif\""},
      {". == . == .",
       "1:8: comparison operators are non-associative: parenthesize one side of \"==\""},
      {"1 < 2 > 3",
       "1:7: comparison operators are non-associative: parenthesize one side of \">\""},
      {". += 1 -= 2",
       "1:8: assignment operators are non-associative: parenthesize one side of \"-=\""},
      {".a = .b |= 1",
       "1:9: assignment operators are non-associative: parenthesize one side of \"|=\""},
      {".a?//1", "1:3: unexpected \"?//\""},  // lexes as ?//, as in gojq
      {".?/", "1:4: expected an expression, got end of input"},
      {"1 +", "1:4: expected an expression, got end of input"},
      {">abc", "1:1: expected an expression, got \">\""},
      {".abc[", "1:6: expected an expression, got end of input"},
      {".[1", "1:4: expected \"]\" or \":\" in an index, got end of input"},
      {".[1:2", "1:6: expected \"]\" to close the slice, got end of input"},
      {".[:]", "1:4: expected an expression, got \"]\""},
      {"(1", "1:3: expected \")\" to close the parenthesis, got end of input"},
      {"(1))", "1:4: unexpected \")\""},
      {"[1", "1:3: expected \"]\" to close the array, got end of input"},
      {". a", "1:3: unexpected \"a\""},
      {"1 2", "1:3: unexpected \"2\""},
      {"..a", "1:3: unexpected \"a\""},
      {". .", "1:4: expected a name, \"[\" or a string after \".\", got end of input"},
      {".a.", "1:4: expected a name, \"[\" or a string after \".\", got end of input"},
      {"label foo | .", "1:7: expected a label name ($name) after \"label\", got \"foo\""},
      {"label $x .", "1:10: expected \"|\" after label $x, got \".\""},
      {"label $x | break x", "1:18: expected a label name ($name) after \"break\", got \"x\""},
      {"label $x | break", "1:17: expected a label name ($name) after \"break\", got end of input"},
      {"1 + label $x | 2",
       "1:5: \"label\" must start a query, not an operand: wrap it in parentheses"},
      {"1 + def f: 1; f",
       "1:5: \"def\" must start a query, not an operand: wrap it in parentheses"},
      {"try def f: 1; f",
       "1:5: \"def\" must start a query, not an operand: wrap it in parentheses"},
      {"\"\\(1 +)\"", "1:7: expected an expression, got \")\""},
      {"\"\\(1 2)\"", "1:6: expected \")\" to close the string interpolation, got \"2\""},
      {".foo as foo | 1", "1:9: expected a pattern ($name, [...] or {...}), got \"foo\""},
      {". as $x", "1:8: expected \"|\" after the binding's patterns, got end of input"},
      {". as $x, $y | 1", "1:8: expected \"|\" after the binding's patterns, got \",\""},
      {". as [] | 1", "1:7: expected a pattern ($name, [...] or {...}), got \"]\""},
      {". as [$a | 1", "1:10: expected \",\" or \"]\" in an array pattern, got \"|\""},
      {". as {} | 1",
       "1:7: expected an object pattern key ($name, a name, a string or (expression)), got \"}\""},
      {". as {a} | 1",
       "1:8: expected \":\" after an object pattern key (only $name stands alone), got \"}\""},
      {". as {$a,} | 1",
       "1:10: expected an object pattern key ($name, a name, a string or (expression)), got "
       "\"}\""},
      {". as $m::x | 1", "1:6: expected a pattern ($name, [...] or {...}), got \"$m::x\""},
      {"[ .[] | { .id } ]",
       "1:11: expected an object key (a name, a keyword, a $variable, a string or (expression)), "
       "got \".id\""},
      {"{a: 1 as $x | $x}", "1:7: expected \",\" or \"}\" in an object, got \"as\""},
      {"{a: 1 b: 2}", "1:7: expected \",\" or \"}\" in an object, got \"b\""},
      {"{(1)}", "1:5: expected \":\" after a computed object key, got \"}\""},
      {"{a: def f: 1; f}",
       "1:5: \"def\" must start a query, not an operand: wrap it in parentheses"},
      {"{@base64: 1}",
       "1:2: expected an object key (a name, a keyword, a $variable, a string or (expression)), "
       "got \"@base64\""},
      {"{a::b: 1}",
       "1:2: expected an object key (a name, a keyword, a $variable, a string or (expression)), "
       "got \"a::b\""},
      {"{a: 1,,}",
       "1:7: expected an object key (a name, a keyword, a $variable, a string or (expression)), "
       "got \",\""},
      {"def $f: .; $f",
       "1:5: expected a function name after \"def\" (keywords and $names cannot be defined), got "
       "\"$f\""},
      {"def true: .; true",
       "1:5: expected a function name after \"def\" (keywords and $names cannot be defined), got "
       "\"true\""},
      {"def m::f: .; m::f",
       "1:5: expected a function name after \"def\" (keywords and $names cannot be defined), got "
       "\"m::f\""},
      {"def f(): 1; f",
       "1:7: expected a parameter name (f or $x) in the definition of f, got \")\""},
      {"def f(a, b): 1; f", "1:8: expected \";\" or \")\" after a parameter of f, got \",\""},
      {"def f 1; f", "1:7: expected \":\" after def f, got \"1\""},
      {"def f: 1 f", "1:10: expected \";\" after the body of def f, got \"f\""},
      {"f()", "1:3: expected an expression, got \")\""},
      {"f(1, 2", "1:7: expected \";\" or \")\" after an argument of f, got end of input"},
      {"reduce . as $x (0)", "1:18: expected \";\" after the reduce initial value, got \")\""},
      {"reduce . as $x (0; 1; 2)", "1:21: expected \")\" in reduce, got \";\""},
      {"reduce . (0; 1)", "1:10: expected \"as\" after the reduce source, got \"(\""},
      {"reduce . as $x ?// [$x] (0; 1)",
       "1:16: expected \"(\" after the reduce pattern, got \"?//\""},
      {"foreach . as $x (0; 1; 2; 3)", "1:25: expected \";\" or \")\" in foreach, got \";\""},
      {"try", "1:4: expected an expression, got end of input"},
      {"try 1 catch", "1:12: expected an expression, got end of input"},
      {"(try try a) catch b", "1:13: unexpected \"catch\""},
      {"import \"x\" as y; .", "1:1: \"import\" is not supported: expressions cannot load modules"},
      {"include \"x\"; .", "1:1: \"include\" is not supported: expressions cannot load modules"},
      {"module {a: 1}; .", "1:1: \"module\" is not supported: expressions cannot load modules"},
      {"then", "1:1: expected an expression, got \"then\""},
      {"1 as $x | 2 end", "1:13: unexpected \"end\""},
      // Lexical errors surface where the parser reaches them.
      {"if 0then. else. end", "1:4: invalid number literal \"0t\""},
      {"0..[empty]", "1:1: invalid number literal \"0..\""},
      {"[1..2]", "1:2: invalid number literal \"1..\""},
      {"1e", "1:1: invalid number literal \"1e\""},
      {".foo & .bar", "1:6: unexpected character \"&\""},
      {"foo\xE2\x98\x86", "1:4: unexpected character \"\xE2\x98\x86\""},
      {"\"foo\\,bar\"", "1:5: invalid escape sequence \"\\,\" in string literal"},
      {"\"\\uAA\\uAA\"", "1:2: invalid escape sequence \"\\uAA\" in string literal"},
      {"\"\\ufffg\"", "1:2: invalid escape sequence \"\\ufff\" in string literal"},
      {"\"\\(1) \\x \"", "1:7: invalid escape sequence \"\\x\" in string literal"},
      {". + \"foo", "1:5: unterminated string literal"},
      {"\"\\\"", "1:1: unterminated string literal"},
      {"\"\\(1", "1:1: unterminated string literal (its interpolation misses \")\")"},
      {"$ x", "1:1: expected a variable name after \"$\""},
      {"@ x", "1:1: expected a format name after \"@\""},
      {"1\n+\n  )", "3:3: expected an expression, got \")\""},
      {"\"\xC3\xA9\xC3\xA9\" )", "1:6: unexpected \")\""},
  };
  for (const ErrorCase& c : cases) {
    EXPECT_EQ(Canonical(c.source), absl::StrCat("error: ", c.message)) << "source: " << c.source;
  }
}

TEST(ParserTest, NulBytesAreErrorsNotTheEndOfTheProgram) {
  // gojq stops reading at a NUL byte and would run `1,` ... here nothing is
  // silently dropped.
  EXPECT_EQ(Canonical(std::string("1\0 | error", 10)), "error: 1:2: unexpected NUL byte");
  EXPECT_EQ(Canonical(std::string("1 # c\0\n, 2", 10)), "error: 1:6: NUL byte in a comment");
  // Inside a string it is a character.
  EXPECT_EQ(Canonical(std::string("\"a\0b\"", 5)), "\"a\\u0000b\"");
}

TEST(ParserTest, TreeKindsKeepWhatGojqEvaluatesDifferently) {
  auto tree = [](const char* source) { return Parse(source).value(); };
  // Postfix ? after a step protects that step only; after a primary it is
  // a try of the whole term (gojq: `(.a.b)?` catches `.a` failing too).
  EXPECT_EQ(tree(".a.b?")->kind(), NodeKind::kOptional);
  EXPECT_EQ(tree("(.a.b)?")->kind(), NodeKind::kTry);
  EXPECT_EQ(tree(".a?")->kind(), NodeKind::kTry);
  EXPECT_EQ(tree("try .a")->kind(), NodeKind::kTry);
  EXPECT_EQ(tree("try .a")->child(1), nullptr);
  // Shorthand entries have no value.
  NodePtr object = tree("{a, $b, \"c\", \"\\(1)\", d: 1}");
  ASSERT_EQ(object->children().size(), 5u);
  EXPECT_EQ(object->child(0)->child(0)->kind(), NodeKind::kString);
  EXPECT_EQ(object->child(0)->child(1), nullptr);
  EXPECT_EQ(object->child(1)->child(0)->kind(), NodeKind::kVariable);
  EXPECT_EQ(object->child(1)->child(1), nullptr);
  EXPECT_EQ(object->child(3)->child(0)->kind(), NodeKind::kTemplate);
  EXPECT_EQ(object->child(4)->child(1)->kind(), NodeKind::kNumber);
  // A format makes even a plain string a template.
  EXPECT_EQ(tree("\"x\"")->kind(), NodeKind::kString);
  NodePtr formatted = tree("@json \"x\"");
  EXPECT_EQ(formatted->kind(), NodeKind::kTemplate);
  EXPECT_EQ(formatted->text(), "@json");
  ASSERT_EQ(formatted->children().size(), 1u);
  EXPECT_EQ(formatted->child(0)->kind(), NodeKind::kTemplateText);
  // Numbers keep their text; variables and labels lose their "$".
  EXPECT_EQ(tree("1.50")->text(), "1.50");
  EXPECT_EQ(tree("$x")->text(), "x");
  EXPECT_EQ(tree("label $out | 1")->text(), "out");
  // Function parameters keep their sigil: filters and values differ.
  NodePtr def = tree("def f(g; $x): 1; 2");
  EXPECT_EQ(def->params(), (std::vector<std::string>{"g", "$x"}));
  // A binding lists its patterns after source and body.
  NodePtr bind = tree(". as [$a] ?// $a | $a");
  ASSERT_EQ(bind->children().size(), 4u);
  EXPECT_EQ(bind->child(0)->kind(), NodeKind::kIdentity);
  EXPECT_EQ(bind->child(1)->kind(), NodeKind::kVariable);
  EXPECT_EQ(bind->child(2)->kind(), NodeKind::kPatternArray);
  EXPECT_EQ(bind->child(3)->kind(), NodeKind::kPatternVariable);
  // Optional slots.
  EXPECT_EQ(tree(".[:1]")->child(1), nullptr);
  EXPECT_EQ(tree(".[1:]")->child(2), nullptr);
  EXPECT_EQ(tree("if . then 1 end")->child(2), nullptr);
  EXPECT_EQ(tree("foreach . as $x (0; 1)")->children().size(), 5u);
  EXPECT_EQ(tree("foreach . as $x (0; 1)")->child(4), nullptr);
}

TEST(ParserTest, SpansCoverTheSource) {
  NodePtr tree = Parse("  .a.b + f(1; 2)  ").value();
  EXPECT_EQ(tree->span().begin, 2u);
  EXPECT_EQ(tree->span().end, 16u);
  EXPECT_EQ(tree->child(0)->span().begin, 2u);  // .a.b
  EXPECT_EQ(tree->child(0)->span().end, 6u);
  EXPECT_EQ(tree->child(0)->child(1)->span().begin, 4u);  // the key .b
  EXPECT_EQ(tree->child(1)->span().begin, 9u);            // f(1; 2)
  EXPECT_EQ(tree->child(1)->span().end, 16u);
  NodePtr pipe = Parse("a | b | c").value();
  EXPECT_EQ(pipe->span().end, 9u);
  EXPECT_EQ(pipe->child(1)->span().begin, 4u);
  EXPECT_EQ(pipe->child(1)->span().end, 9u);
  NodePtr chain = Parse("if . then 1 elif 2 then 3 end").value();
  EXPECT_EQ(chain->child(2)->span().begin, 12u);  // the elif
  EXPECT_EQ(chain->child(2)->span().end, 29u);
  NodePtr formatted = Parse("@base64 \"x\"").value();
  EXPECT_EQ(formatted->span().begin, 0u);
  EXPECT_EQ(formatted->span().end, 11u);
}

TEST(ParserTest, SourceLengthIsBounded) {
  ParseLimits limits;
  limits.max_source_bytes = 8;
  EXPECT_EQ(Canonical("1 + 2", limits), "(1 + 2)");
  EXPECT_EQ(Canonical(".a + .b + .c", limits),
            "error: expression is 12 bytes; the limit is 8 bytes");
  EXPECT_EQ(ParseLimits().max_source_bytes, 64u << 10);
}

// Parsing to max_depth takes up to 400 KiB of stack (`.[` nested, the
// deepest way per level); the pages go back to the system afterwards, or
// every thread that ever parsed a hostile definition would keep them.
TEST(ParserTest, StackPagesOfADeepParseAreGivenBack) {
  std::thread([] {
    std::string deep;
    for (int i = 0; i < 10000; ++i) deep += ".[";
    deep += "1" + std::string(10000, ']');
    EXPECT_FALSE(Parse(deep).ok());
    const int pages = wm::testing::ResidentStackPagesBelow(size_t{128} << 10);
    ASSERT_GE(pages, 0);
    EXPECT_LT(pages, 8);
  }).join();
}

// Deep nesting of every kind fails with the bound in the message instead
// of overflowing the stack (in parsing, printing or destroying the tree).
TEST(ParserTest, NestingDepthIsBounded) {
  EXPECT_EQ(ParseLimits().max_depth, 256);
  const std::string too_deep = "nests deeper than 256 levels (the parser's max_depth)";
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const int n = 10000;
  const std::vector<std::string> deep = {
      repeat("(", n) + "1" + repeat(")", n),
      repeat("[", n) + "1" + repeat("]", n),
      repeat("{a:", n) + "1" + repeat("}", n),
      repeat("-", n) + "1",
      repeat("try ", n) + "1",
      repeat("if . then ", n) + "1" + repeat(" end", n),
      repeat("reduce ", n) + "." + repeat(" as $x (0; 1)", n),
      repeat("\"\\(", n) + "1" + repeat(")\"", n),
      repeat("f(", n) + "1" + repeat(")", n),
      repeat(".[", n) + "1" + repeat("]", n),
      repeat("def f: ", n) + "1" + repeat("; f", n),
      repeat("def f: 1; ", n) + "f",
      repeat("label $x | ", n) + "1",
      repeat(". as $x | ", n) + "1",
      "1" + repeat(" // 1", n),
      "1" + repeat(" + 1", n),
      "1" + repeat(", 1", n),
      "1" + repeat(" | 1", n),
      ". as " + repeat("[", n) + "$x" + repeat("]", n) + " | 1",
      repeat(".a", n),
      "." + repeat("[]", n),
      "." + repeat("?", n),
      "if . then 1 " + repeat("elif . then 1 ", n) + "end",
      "{a: 1" + repeat(" | 1", n) + "}",
  };
  ParseLimits long_sources;
  long_sources.max_source_bytes = 1 << 20;
  for (const std::string& source : deep) {
    std::string result = Canonical(source, long_sources);
    EXPECT_NE(result.find(too_deep), std::string::npos) << source.substr(0, 40) << ": " << result;
  }
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kSanitizerStackScale = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr size_t kSanitizerStackScale = 4;
#else
constexpr size_t kSanitizerStackScale = 1;
#endif
#else
constexpr size_t kSanitizerStackScale = 1;
#endif

// Runs `body` on a thread whose stack is `bytes` long; a deeper recursion
// crashes the test binary (the failure this guards against).
void RunOnStackOf(size_t bytes, const std::function<void()>& body) {
  pthread_attr_t attributes;
  ASSERT_EQ(pthread_attr_init(&attributes), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attributes, bytes), 0);
  pthread_t thread;
  auto run = [](void* b) -> void* {
    (*static_cast<const std::function<void()>*>(b))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attributes, run, const_cast<std::function<void()>*>(&body)),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
}

// Every way of nesting, taken to the depth bound, fits in a stack far
// smaller than a thread's default 8 MB: 1 MB at the default max_depth
// (about 512 KB was measured in a release build), and, under sanitizers,
// whose redzones grow every frame, 4 MB at the default bound and 16 MB at
// four times it (the depth the jq parser fuzzer reparses printed text with).
// Each nesting level goes through several parser functions; this fails if
// they grow (say, by being inlined into one another) until a source within
// the bound can overflow a thread's stack.
TEST(ParserTest, SourcesAtTheDepthBoundFitInABoundedStack) {
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const int n = 5000;
  const std::vector<std::string> deep = {
      repeat("try (", n) + "." + repeat(")", n),
      repeat("(", n) + "1" + repeat(")", n),
      repeat("[", n) + "1" + repeat("]", n),
      repeat("{a:", n) + "1" + repeat("}", n),
      repeat("{(", n) + "1" + repeat("):1}", n),
      repeat("-", n) + "1",
      repeat("try ", n) + "1",
      repeat("if . then ", n) + "1" + repeat(" end", n),
      repeat("reduce . as $x (.; ", n) + "1" + repeat(")", n),
      repeat("foreach . as $x (.; .; ", n) + "1" + repeat(")", n),
      repeat("\"\\(", n) + "1" + repeat(")\"", n),
      repeat("f(", n) + "1" + repeat(")", n),
      repeat(".[", n) + "1" + repeat("]", n),
      repeat(".[:", n) + "1" + repeat("]", n),
      repeat("def f: ", n) + "1" + repeat("; f", n),
      repeat("label $x | ", n) + "1",
      repeat(". as $x | ", n) + "1",
      ". as " + repeat("[$a, ", n) + "$b" + repeat("]", n) + " | .",
      "1" + repeat(" // 1", n),
  };
  for (int depth_scale : {1, 4}) {
    ParseLimits limits;
    limits.max_depth *= depth_scale;
    limits.max_source_bytes = 1 << 20;
    size_t stack = (1u << 20) * depth_scale * kSanitizerStackScale;
    RunOnStackOf(stack, [&] {
      for (const std::string& source : deep) {
        std::string result = Canonical(source, limits);
        EXPECT_NE(result.find("nests deeper than"), std::string::npos)
            << source.substr(0, 40) << ": " << result;
      }
    });
  }
}

TEST(ParserTest, NestingWithinTheBoundParses) {
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  // One level per parenthesis, bracket, unary operator or binding; each of
  // these nests 250 deep.
  for (const std::string& source : {
           repeat("(", 250) + "1" + repeat(")", 250),
           repeat("[", 250) + "1" + repeat("]", 250),
           repeat("-", 250) + "1",
           repeat(". as $x | ", 250) + "1",
           "1" + repeat(" + 1", 250),
           repeat(".a", 250),
       }) {
    EXPECT_TRUE(Parse(source).ok()) << source.substr(0, 40) << ": " << Parse(source).status();
    ExpectRoundTrip(source);
  }
  ParseLimits shallow;
  shallow.max_depth = 3;
  EXPECT_TRUE(Parse("[[1]]", shallow).ok());
  EXPECT_EQ(Canonical("[[[1]]]", shallow),
            "error: 1:4: expression nests deeper than 3 levels (the parser's max_depth)");
}

// Random sequences of jq tokens: parsing either fails with a positioned
// message or gives a tree whose canonical text parses back to it.
TEST(ParserTest, RandomTokenSequencesParseOrFailCleanly) {
  const std::vector<std::string> tokens = {
      ".",     "..",   ".a",      ".if",    "$x",    "$__loc__", "f",       "g(",
      "1",     "1.5",  "\"s\"",   "\"a\\(", ")",     "(",        "[",       "]",
      "{",     "}",    ":",       ";",      ",",     "|",        "//",      "=",
      "|=",    "+=",   "==",      "<",      "+",     "-",        "*",       "/",
      "%",     "?",    "?//",     "as",     "and",   "or",       "if",      "then",
      "elif",  "else", "end",     "try",    "catch", "reduce",   "foreach", "label",
      "break", "def",  "@base64", "null",   "a:",    "\"k\":",   "$y"};
  std::mt19937 random(13);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string source;
    int length = 1 + static_cast<int>(random() % 12);
    for (int j = 0; j < length; ++j) source += tokens[random() % tokens.size()] + " ";
    absl::StatusOr<NodePtr> tree = Parse(source);
    if (!tree.ok()) {
      EXPECT_TRUE(absl::IsInvalidArgument(tree.status())) << source;
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(tree.status().message()[0]))) << source;
      continue;
    }
    ++parsed;
    ExpectRoundTrip(source);
  }
  EXPECT_GT(parsed, 100);  // the sequences do exercise the printer
}

// Builds random trees of every kind, within the shapes the grammar can
// express (a template without format has an interpolation, text runs are
// not adjacent, shorthand entries have simple keys).
class TreeGenerator {
 public:
  explicit TreeGenerator(uint32_t seed) : random_(seed) {}

  NodePtr Expression(int depth) {
    if (depth <= 0) return Leaf();
    switch (Pick(16)) {
      case 0:
        return Leaf();
      case 1:
        return Make(NodeKind::kIndex, List(Expression(depth - 1), Key(depth - 1)));
      case 2: {
        // At least one bound: `x[:]` is not jq.
        NodePtr from = Maybe(depth - 1);
        NodePtr to = !from || Pick(2) ? Expression(depth - 1) : nullptr;
        return Make(NodeKind::kSlice, List(Expression(depth - 1), std::move(from), std::move(to)));
      }
      case 3: {
        // A postfix `?` is a kOptional only after a step (`x[]?`).
        NodePtr iterate = Make(NodeKind::kIterate, List(Expression(depth - 1)));
        if (Pick(2)) return iterate;
        return Make(NodeKind::kOptional, List(std::move(iterate)));
      }
      case 4:
        return Template(depth - 1, Pick(2) ? "" : "@base64");
      case 5: {
        std::vector<NodePtr> entries;
        for (int i = Pick(3); i > 0; --i) entries.push_back(Entry(depth - 1));
        return Make(NodeKind::kObject, std::move(entries));
      }
      case 6: {
        std::vector<NodePtr> args;
        for (int i = Pick(3); i > 0; --i) args.push_back(Expression(depth - 1));
        return Make(NodeKind::kCall, std::move(args), "f");
      }
      case 7:
        return Make(Pick(2) ? NodeKind::kNegate : NodeKind::kUnaryPlus,
                    List(Expression(depth - 1)));
      case 8: {
        static const NodeKind kBinary[] = {
            NodeKind::kPipe,     NodeKind::kComma,     NodeKind::kAlternative, NodeKind::kAssign,
            NodeKind::kUpdate,   NodeKind::kUpdateAlt, NodeKind::kOr,          NodeKind::kAnd,
            NodeKind::kEqual,    NodeKind::kLess,      NodeKind::kAdd,         NodeKind::kSubtract,
            NodeKind::kMultiply, NodeKind::kModulo};
        return Make(kBinary[Pick(std::size(kBinary))],
                    List(Expression(depth - 1), Expression(depth - 1)));
      }
      case 9: {
        std::vector<NodePtr> children = List(Expression(depth - 1), Expression(depth - 1));
        for (int i = 1 + Pick(2); i > 0; --i) children.push_back(Pattern(depth - 1));
        return Make(NodeKind::kBind, std::move(children));
      }
      case 10:
        return Make(NodeKind::kReduce, List(Expression(depth - 1), Pattern(depth - 1),
                                            Expression(depth - 1), Expression(depth - 1)));
      case 11:
        return Make(NodeKind::kForeach,
                    List(Expression(depth - 1), Pattern(depth - 1), Expression(depth - 1),
                         Expression(depth - 1), Maybe(depth - 1)));
      case 12:
        return Make(NodeKind::kIf,
                    List(Expression(depth - 1), Expression(depth - 1), Maybe(depth - 1)));
      case 13:
        return Make(NodeKind::kTry, List(Expression(depth - 1), Maybe(depth - 1)));
      case 14:
        return Pick(2) ? Make(NodeKind::kLabel, List(Expression(depth - 1)), "l")
                       : Make(NodeKind::kArray, List(Expression(depth - 1)));
      default:
        return std::make_unique<const Node>(
            NodeKind::kFuncDef, Span{}, "f", List(Expression(depth - 1), Expression(depth - 1)),
            Pick(2) ? std::vector<std::string>{"g", "$x"} : std::vector<std::string>{});
    }
  }

 private:
  int Pick(size_t n) { return static_cast<int>(random_() % n); }

  template <typename... Children>
  static std::vector<NodePtr> List(Children... children) {
    std::vector<NodePtr> list;
    (list.push_back(std::move(children)), ...);
    return list;
  }

  static NodePtr Make(NodeKind kind, std::vector<NodePtr> children, std::string text = "") {
    return std::make_unique<const Node>(kind, Span{}, std::move(text), std::move(children));
  }

  NodePtr Maybe(int depth) { return Pick(2) ? Expression(depth) : nullptr; }

  NodePtr Leaf() {
    switch (Pick(10)) {
      case 0:
        return Make(NodeKind::kIdentity, {});
      case 1:
        return Make(NodeKind::kRecurse, {});
      case 2:
        return Make(NodeKind::kNull, {});
      case 3:
        return Make(NodeKind::kNumber, {}, Pick(2) ? "1" : "2.5e3");
      case 4:
        return Make(NodeKind::kString, {}, Pick(2) ? "a b" : "if");
      case 5:
        return Make(NodeKind::kFormat, {}, "@json");
      case 6:
        return Make(NodeKind::kVariable, {}, "x");
      case 7:
        return Make(NodeKind::kBreak, {}, "l");
      case 8:
        return Make(NodeKind::kCall, {}, "empty");
      default:
        return Make(NodeKind::kTrue, {});
    }
  }

  NodePtr Key(int depth) {
    return Pick(2) ? Make(NodeKind::kString, {}, Pick(2) ? "name" : "two words")
                   : Expression(depth);
  }

  NodePtr Template(int depth, std::string format) {
    std::vector<NodePtr> parts;
    bool text_last = false;
    for (int i = Pick(4); i >= 0; --i) {
      if (!text_last && Pick(2)) {
        parts.push_back(Make(NodeKind::kTemplateText, {}, "t\"\\\n"));
        text_last = true;
      } else {
        parts.push_back(Expression(depth));
        text_last = false;
      }
    }
    if (format.empty() && text_last && parts.size() == 1) parts.push_back(Expression(depth));
    return Make(NodeKind::kTemplate, std::move(parts), std::move(format));
  }

  NodePtr Entry(int depth) {
    switch (Pick(4)) {
      case 0:
        return Make(NodeKind::kObjectEntry,
                    List(Make(NodeKind::kString, {}, "k"), Pick(2) ? Expression(depth) : nullptr));
      case 1:
        return Make(NodeKind::kObjectEntry, List(Make(NodeKind::kVariable, {}, "v"),
                                                 Pick(2) ? Expression(depth) : nullptr));
      case 2:
        return Make(NodeKind::kObjectEntry,
                    List(Template(depth, ""), Pick(2) ? Expression(depth) : nullptr));
      default:
        return Make(NodeKind::kObjectEntry, List(Expression(depth), Expression(depth)));
    }
  }

  NodePtr Pattern(int depth) {
    if (depth <= 0) return Make(NodeKind::kPatternVariable, {}, "p");
    switch (Pick(3)) {
      case 0:
        return Make(NodeKind::kPatternVariable, {}, "p");
      case 1: {
        std::vector<NodePtr> elements;
        for (int i = 1 + Pick(2); i > 0; --i) elements.push_back(Pattern(depth - 1));
        return Make(NodeKind::kPatternArray, std::move(elements));
      }
      default: {
        std::vector<NodePtr> entries;
        entries.push_back(
            Make(NodeKind::kPatternEntry,
                 List(Make(NodeKind::kVariable, {}, "q"), Pick(2) ? Pattern(depth - 1) : nullptr)));
        entries.push_back(Make(NodeKind::kPatternEntry, List(Key(depth - 1), Pattern(depth - 1))));
        return Make(NodeKind::kPatternObject, std::move(entries));
      }
    }
  }

  std::mt19937 random_;
};

// Any tree the grammar can express prints as text that parses back to it:
// the canonical form is unambiguous.
TEST(ParserTest, RandomTreesPrintAsTextThatParsesBackToThem) {
  TreeGenerator generator(13);
  for (int i = 0; i < 3000; ++i) {
    NodePtr tree = generator.Expression(5);
    std::string printed = ToString(*tree);
    absl::StatusOr<NodePtr> parsed = Parse(printed);
    ASSERT_TRUE(parsed.ok()) << parsed.status() << "\nprinted: " << printed;
    EXPECT_TRUE(SameTree(*tree, **parsed))
        << "printed: " << printed << "\nreparsed: " << ToString(**parsed);
  }
}

}  // namespace
}  // namespace wm::expressions::native
