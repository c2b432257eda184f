// The native engine's evaluation, case by case, with gojq's results (the
// differential test, catalog_gojq, holds it to gojq itself over the
// catalogs).

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/testing/process_memory.h"
#include "server/expressions/native/compiler.h"
#include "server/expressions/native/parser.h"
#include "server/expressions/native/path_plan.h"
#include "server/expressions/native_engine.h"

namespace wm::expressions {
namespace {

struct Case {
  friend void PrintTo(const Case& c, std::ostream* out) {
    *out << c.expression << " on " << c.input;
  }

  const char* expression;
  const char* input;
  // The outputs, one JSON text each, joined by spaces; or, when
  // `error` is set, the error message.
  const char* outputs;
  const char* error = nullptr;
};

class NativeEvalTest : public ::testing::TestWithParam<Case> {
 protected:
  static Engine& engine() {
    static Engine* const kEngine = NewNativeEngine().value().release();
    return *kEngine;
  }
};

TEST_P(NativeEvalTest, MatchesGojq) {
  const Case& c = GetParam();
  auto program = engine().Compile({c.expression});
  ASSERT_TRUE(program.ok()) << c.expression << ": " << program.status();
  Json input = Json::parse(c.input);
  absl::StatusOr<std::vector<Json>> outputs;
  ASSERT_TRUE(engine()
                  .Run([&](Session& session) {
                    outputs = session.Evaluate(**program, 0, session.Load(input));
                    return absl::OkStatus();
                  })
                  .ok());
  if (c.error != nullptr) {
    ASSERT_FALSE(outputs.ok()) << c.expression << " gave outputs";
    EXPECT_EQ(outputs.status().message(), c.error) << c.expression;
    return;
  }
  ASSERT_TRUE(outputs.ok()) << c.expression << ": " << outputs.status();
  std::vector<std::string> texts;
  for (const Json& v : *outputs) texts.push_back(v.dump());
  EXPECT_EQ(absl::StrJoin(texts, " "), c.outputs) << c.expression << " on " << c.input;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NativeEvalTest,
    ::testing::Values(
        // Paths and optional access.
        Case{".a.b", R"({"a":{"b":1}})", "1"}, Case{".a.b", "null", "null"},
        Case{".a", "[1]", "", "expected an object but got: array ([1])"}, Case{".a?", "[1]", ""},
        Case{".[0]", "[1,2]", "1"}, Case{".[-1]", "[1,2]", "2"}, Case{".[5]", "[1,2]", "null"},
        Case{".[]", R"({"b":2,"a":1})", "1 2"}, Case{".[]?", "3", ""},
        Case{".[]", "3", "", "cannot iterate over: number (3)"}, Case{".[1:]", "[1,2,3]", "[2,3]"},
        // getpath indexes as `.[k]` does at every step, past null too (a
        // fuzzer found it).
        Case{
            R"(getpath(["a", null]))", "{}", "",
            R"(getpath(["a",null]) cannot be applied to {}: expected a string for object key but got: null)"},
        Case{R"(getpath(["a", "b", 0, [1]]))", "{}", "null"},
        Case{"getpath([[1]])", "[1,2,1]", "[0,2]"},
        // A computed key varies slowest, then the target (gojq's
        // `_index(x; k)`); a slice's start, then its end, then the target
        // (a fuzzer found it).
        Case{"[.[0,1][0,1]]", "[[10,20],[30,40]]", "[10,30,20,40]"},
        Case{"[.[(0,1):(2,3)] | length]", "[1,2,3]", "[2,3,1,2]"},
        Case{"[.[0,1][(0,1):]]", "[[1,2],[3,4]]", "[[1,2],[3,4],[2],[4]]"},
        Case{"1 | .b[empty]", "null", ""}, Case{"1 | .b[empty:]", "null", ""},
        Case{"1 | .b[0]", "null", "", "expected an object but got: number (1)"},
        // gojq evaluates the key of an optional step against the stepped
        // value, not the input (a fuzzer found it).
        Case{".s[.j]?", R"({"s":{"x":1,"j":"x"},"j":"zz"})", "1"},
        Case{".s[.j]", R"({"s":{"x":1,"j":"x"},"j":"zz"})", "null"},
        Case{".[.j]?", R"({"x":1,"j":"x"})", "1"},
        Case{".s[.a:.b]?", R"({"s":[1,2,3],"a":1,"b":2})", ""},
        Case{".s[.a:.b]?", R"({"s":{"a":1,"b":2},"a":0,"b":0})", ""},
        Case{"[.s[.k]?]", R"({"s":[1],"k":0})", "[]"},
        // A second `?` protects the whole term (a fuzzer found it).
        Case{".s.t??", "[1]", ""}, Case{".s[]??", "[1]", ""}, Case{"[.s[]??.name]", "[1]", "[]"},
        Case{".s[]?", "[1]", "", "expected an object but got: array ([1])"},
        Case{".s???", "[1]", ""}, Case{R"(.a??.b)", R"({"a":{"b":2}})", "2"},
        // null indexed by any object is null (a fuzzer found it).
        Case{".[{}]", "null", "null"}, Case{R"(.[{"start":1}])", "null", "null"},
        Case{"path(.[{}])", "null", "[{}]"},
        Case{".[{}]", "[1]", "", R"(expected "start" and "end" for slicing but got: object ({}))"},
        Case{".[true]", "null", "", "expected a string for object key but got: boolean (true)"},
        // gojq's own limit on string repeats is gojq's error (catchable);
        // the memory bound comes first only below it.
        Case{R"(try ("x" * 3e9) catch .)", "null",
             R"("repeat string result too large: \"x\" * 3000000000")"},
        Case{R"("ab" * 2e9)", "null", "", R"(repeat string result too large: "ab" * 2000000000)"},
        // Repeats: by doubling, and nothing repeated is "" at once (a fuzzer
        // found "" * 1e10 counting 2^31 empty copies outside the budget).
        Case{R"("" * 1e10)", "null", R"("")"}, Case{R"("ab" * 0)", "null", R"("")"},
        Case{R"("ab" * 0.5)", "null", R"("")"},
        Case{R"("abc" * 5)", "null", R"("abcabcabcabcabc")"},
        Case{R"("ab" * 3.7 | length)", "null", "6"}, Case{R"("" * -1)", "null", "null"},
        // `[q] | length` counts without building (kFold); errors, paths
        // and the rest of the pipe are as before.
        Case{"[.[] | select(. > 1)] | length", "[1,2,3]", "2"},
        Case{"[.[]?] | length | . + 1", "3", "1"}, Case{"[] | length", "null", "0"},
        Case{"[.[] | select(.a)] | length", "[1]", "", "expected an object but got: number (1)"},
        Case{"[.[] | error] | length", R"(["x"])", "", "error: x"},
        Case{"try ([.[] | error] | length) catch .", R"(["x"])", R"("x")"},
        Case{"path([.[]] | length)", "[1]", "", "invalid path against: number (1)"},
        Case{"[limit(2; .[])] | length", "[5,6,7]", "2"},
        Case{"def length: 7; [.[]] | length", "[1]", "7"},
        // The other folds of `[q] | f` (kFold): the query runs to its end,
        // so an error after the deciding output is still an error.
        Case{"[.[] | select(. > 1)] | first", "[1,2,3]", "2"}, Case{"[.[]] | first", "[]", "null"},
        Case{"[.[]] | .[0]", "[4,5]", "4"}, Case{"[.[]] | last", "[4,5]", "5"},
        Case{"[.[]] | .[-1]", "[]", "null"},
        Case{"[.[] | .a] | first", R"([{"a":1},2])", "", "expected an object but got: number (2)"},
        Case{"[.[]] | any", "[null,1]", "true"}, Case{"[.[]] | any", "[]", "false"},
        Case{"[.[]] | all", "[]", "true"}, Case{"[.[]] | all", "[1,false]", "false"},
        Case{R"([.[] | if . == 2 then error("late") else . end] | any)", "[1,2]", "",
             "error: late"},
        Case{"[.[]] | min", "[3,1,2]", "1"}, Case{"[.[]] | max", "[3,1,2]", "3"},
        Case{"[.[]] | min", "[]", "null"}, Case{R"([.[]] | max)", R"([1,"a",null])", R"("a")"},
        Case{"[.[]] | first | . + 1", "[4,5]", "5"},
        // `[q] | add` sums numbers and nulls as they come and hands the rest,
        // behind the sum so far, to `add` itself: same sums, same errors.
        Case{"[.[]] | add", "[1,2,3]", "6"}, Case{"[.[]] | add", "[]", "null"},
        Case{"[.[]] | add", "[null,1,null]", "1"}, Case{"[.[]] | add // 0", "[]", "0"},
        Case{"[.[]] | add", "[1.5,2]", "3.5"}, Case{"[.[]] | add", R"(["a","b"])", R"("ab")"},
        Case{"[.[]] | add", "[[1],[2]]", "[1,2]"},
        Case{"[.[]] | add", R"([null,{"a":1},{"b":2}])", R"({"a":1,"b":2})"},
        Case{"[.[]] | add", R"([1,"a"])", "", R"(cannot add: number (1) and string ("a"))"},
        Case{"[.[]] | add", "[1,2,[3]]", "", "cannot add: number (3) and array ([3])"},
        Case{R"([.[] | if . == 2 then error("late") else . end] | add)", R"([1,"a",2])", "",
             "error: late"},
        Case{"def add: 7; [.[]] | add", "[1]", "7"},
        Case{"def first: .[1]; [.[]] | first", "[4,5]", "5"},
        Case{"def any: 7; [.[]] | any", "[4,5]", "7"},
        Case{"[.[] | select(.a)] | first // {}", R"([{"a":1,"b":2}])", R"({"a":1,"b":2})"},
        Case{"[.[] | select(.a)] | first // {}", R"([{"a":false}])", "{}"},
        // `[s | select(c)] | f` with c single-valued: the fold tests c
        // itself (Op::select_filter); select's meaning kept (truthiness,
        // errors after the deciding output, the environment, a redefined
        // select).
        Case{"[.[] | select(.)] | length", R"([0,null,false,"",[]])", "3"},
        Case{"[.[] | select(. > 1)] | any", "[1,2]", "true"},
        Case{"[.[] | select(.a > 0)] | first", R"([{"a":1},5])", "",
             "expected an object but got: number (5)"},
        Case{". as $x | [$x[] | select(. != $x[0])] | length", "[1,2,1,3]", "2"},
        Case{"[.[] | select(. > 1)] | add", "[1,2,3]", "5"},
        Case{"[.[] | select(.[] > 1)] | length", "[[1,2,3],[0]]", "2"},
        Case{"def select(f): .; [.[] | select(. > 1)] | length", "[1,2,3]", "3"},
        Case{"[.[]] | first // []", "[false]", "[]"},
        Case{"[.[]] | first // .", "[false]", "[false]"},
        Case{"[.[]] | last // 3 | . + 1", "[]", "4"},
        // Chains of names inside a larger expression (Op::name_steps): one
        // loop, each step's meaning kept (null goes on as null, anything
        // else but an object fails as a single step would); longer chains
        // than kMaxNameSteps continue through the ordinary steps.
        Case{"(.a.b.c, 0)", R"({"a":{"b":{"c":5}}})", "5 0"},
        Case{"(.a.b.c, 0)", R"({"a":null})", "null 0"},
        Case{"(.a.b.c, 0)", R"({"a":{"x":1}})", "null 0"},
        Case{"(.a.b.c, 0)", R"({"a":{"b":7}})", "", "expected an object but got: number (7)"},
        Case{"(.a.b.c, 0)", R"({"a":[1]})", "", "expected an object but got: array ([1])"},
        Case{"(.a.b, 0)", R"("s")", "", R"(expected an object but got: string ("s"))"},
        Case{"(.a.b.c.d.e.f.g.h.i.j, 0)",
             R"({"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":"deep"}}}}}}}}}})",
             R"("deep" 0)"},
        Case{"(.a.b.c.d.e.f.g.h.i.j, 0)", R"({"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":3}}}}}}}})",
             "", "expected an object but got: number (3)"},
        Case{"[.[] | .a.b] | length", R"([{"a":{"b":1}},{"a":null}])", "2"},
        Case{"(.a | .b.c), (1 | .x?.y)", R"({"a":{"b":{"c":2}}})", "2"},
        // Plain walks take the fast lane (path_plan.h) and leave it, for the
        // interpreter's words, where it would have to decide.
        Case{R"(.a["b-c"].d)", R"({"a":{"b-c":{"d":"x"}}})", R"("x")"},
        Case{".a[].b", R"({"a":[{"b":1},null,{"c":2}]})", "1 null null"},
        Case{".a[][]", R"({"a":{"y":[3],"x":{"k":1,"j":2}}})", "2 1 3"},
        Case{".a.b.c", R"({"a":null})", "null"}, Case{".a[]", R"({"a":[]})", ""},
        Case{".a.b", R"({"a":[1]})", "", "expected an object but got: array ([1])"},
        Case{".a[].b", R"({"a":[{"b":1},2]})", "", "expected an object but got: number (2)"},
        Case{".a[]", R"({"a":null})", "", "cannot iterate over: null"},
        Case{".[:-1]", "[1,2,3]", "[1,2]"}, Case{".[1:2]", R"("abc")", R"("b")"},
        Case{"..", "[[1]]", "[[1]] [1] 1"}, Case{".a[].b?", R"({"a":[{"b":1},2]})", "1"},
        Case{".a.b?", R"({"a":5})", ""}, Case{".x // \"d\"", "{}", R"("d")"},
        Case{"(false, null, 1) // 2", "null", "1"}, Case{"empty // 2", "null", "2"},
        // Arithmetic and comparisons.
        Case{"1 + 2 * 3", "null", "7"}, Case{"10 / 4", "null", "2.5"}, Case{"10 / 5", "null", "2"},
        Case{"7 % 3", "null", "1"}, Case{"-7 % 3", "null", "-1"},
        Case{"1 / 0", "null", "", "cannot divide number (1) by: number (0)"},
        Case{"\"a\" + 1", "null", "", "cannot add: string (\"a\") and number (1)"},
        Case{"null + 1", "null", "1"}, Case{"[1,2,1] - [1]", "null", "[2]"},
        Case{"{\"a\":{\"b\":1}} * {\"a\":{\"c\":2}}", "null", R"({"a":{"b":1,"c":2}})"},
        Case{"\"ab\" * 2", "null", R"("abab")"}, Case{"\"ab\" * -1", "null", "null"},
        Case{"\"a,b\" / \",\"", "null", R"(["a","b"])"},
        Case{"[1 < 2, \"a\" < \"b\", null < false, [] < {}]", "null", "[true,true,true,true]"},
        Case{"1 == 1.0", "null", "true"}, Case{"[.[] | -. ]", "[1,-2.5]", "[-1,2.5]"},
        // Logic and conditionals.
        Case{"true and (1, null)", "null", "true false"}, Case{"false or false", "null", "false"},
        Case{"if . then \"t\" end", "null", "null"},
        Case{"if . == 1 then \"a\" elif . == 2 then \"b\" else \"c\" end", "2", R"("b")"},
        Case{"[.[] | not]", "[null, 0]", "[true,false]"},
        // try, error, label.
        Case{"try error(\"x\") catch .", "null", R"("x")"},
        Case{"try (1, error(\"x\"), 2) catch .", "null", R"(1 "x")"},
        Case{"error(\"x\")", "null", "", "error: x"},
        Case{"error({\"a\":1})", "null", "", "error: {\"a\":1}"},
        Case{"[.[] | try tonumber catch \"bad\"]", R"(["1","x"])", R"([1,"bad"])"},
        Case{"label $out | 1, break $out, 2", "null", "1"}, Case{"[limit(0; 1, 2)]", "null", "[]"},
        Case{"[limit(2; 1, 2, 3)]", "null", "[1,2]"}, Case{"first(1, 2)", "null", "1"},
        Case{"[first(empty)]", "null", "[]"}, Case{"last(1, 2)", "null", "2"},
        Case{"isempty(empty)", "null", "true"},
        // Bindings, reduce, foreach, functions.
        Case{". as $x | $x + 1", "1", "2"}, Case{". as [$a, $b] | $b", "[1,2]", "2"},
        Case{". as {a: $x, $b} | [$x, $b]", R"({"a":1,"b":2})", "[1,2]"},
        Case{".[] as [$a] ?// $a | $a", "[[1], 2]", "1 2"},
        Case{"reduce .[] as $x (0; . + $x)", "[1,2,3]", "6"},
        Case{"[foreach .[] as $x (0; . + $x)]", "[1,2,3]", "[1,3,6]"},
        Case{"[foreach .[] as $x (0; . + $x; [$x, .])]", "[1,2]", "[[1,1],[2,3]]"},
        Case{"def f(g): [g, g]; f(.a)", R"({"a":1})", "[1,1]"},
        Case{"def f($x): $x + 1; f(1, 2)", "null", "2 3"},
        Case{"def fac: if . <= 1 then 1 else . * (. - 1 | fac) end; fac", "5", "120"},
        Case{"true and true and (.a) as $s | $s", R"({"a":3})", "true"},
        Case{"1 + 2 as $x | $x", "null", "3"},
        // Builtins.
        Case{"[.[] | select(. > 1)]", "[1,2,3]", "[2,3]"}, Case{"map(. * 2)", "[1,2]", "[2,4]"},
        Case{"map_values(. + 1)", R"({"a":1})", R"({"a":2})"},
        Case{"to_entries", R"({"b":2,"a":1})", R"([{"key":"a","value":1},{"key":"b","value":2}])"},
        Case{"from_entries", R"([{"key":"a","value":1},{"name":"b","value":2}])",
             R"({"a":1,"b":2})"},
        Case{"with_entries(.value += 1)", R"({"a":1})", R"({"a":2})"},
        Case{"keys", R"({"b":1,"a":2})", R"(["a","b"])"}, Case{"has(\"a\")", R"({"a":1})", "true"},
        Case{"[.[] | in({\"a\":1})]", R"(["a","b"])", "[true,false]"},
        Case{"contains({\"a\":[1]})", R"({"a":[1,2]})", "true"},
        Case{"inside(\"foobar\")", R"("bar")", "true"},
        Case{"[.[] | length]", R"([[1,2], "ab", {"a":1}, null, -3])", "[2,2,1,0,3]"},
        Case{"add", "[1,2,3]", "6"}, Case{"add", R"(["a","b"])", R"("ab")"},
        Case{"[any, all]", "[true,false]", "[true,false]"},
        Case{"any(.[]; . > 2)", "[1,3]", "true"}, Case{"all(. > 0)", "[1,3]", "true"},
        Case{"[range(3)]", "null", "[0,1,2]"}, Case{"[range(1; 7; 2)]", "null", "[1,3,5]"},
        Case{"[.[] | until(. > 10; . * 2)]", "[1]", "[16]"}, Case{"min, max", "[3,1,2]", "1 3"},
        Case{"min_by(.a) | .a", R"([{"a":2},{"a":1}])", "1"},
        Case{"sort_by(.a) | map(.a)", R"([{"a":2},{"a":1}])", "[1,2]"},
        Case{"group_by(.a) | map(length)", R"([{"a":2},{"a":1},{"a":2}])", "[1,2]"},
        Case{"unique_by(length)", R"(["a","bb","c"])", R"(["a","bb"])"},
        Case{"unique", "[2,1,2]", "[1,2]"}, Case{"flatten", "[1,[2,[3]]]", "[1,2,3]"},
        Case{"flatten(1)", "[1,[2,[3]]]", "[1,2,[3]]"},
        Case{"[.[] | tostring]", R"([1, "a", [1], 1.5, 100000000000000000000])",
             R"(["1","a","[1]","1.5","100000000000000000000"])"},
        Case{"[.[] | tonumber]", R"(["1", "2.5", 3])", "[1,2.5,3]"},
        Case{"tonumber", R"(" 1")", "", "tonumber cannot be applied to \" 1\": invalid number"},
        Case{"[.[] | type]", R"([null,true,1,"a",[],{}])",
             R"(["null","boolean","number","string","array","object"])"},
        Case{"ascii_downcase, ascii_upcase", R"("aB")", R"("ab" "AB")"},
        Case{"test(\"a.c\")", R"("xabc")", "true"}, Case{"test(\"A\"; \"i\")", R"("a")", "true"},
        Case{"[match(\"a(b)?\"; \"g\") | .offset]", R"("aab")", "[0,1]"},
        Case{"capture(\"(?P<x>[0-9]+)\")", R"("ab12")", R"({"x":"12"})"},
        Case{"capture(\"-(?<i>[0-9]+)$\")", R"("pod-3")", R"({"i":"3"})"},
        Case{"path(([])[])", "null", "", "invalid path on iterating against: array ([])"},
        Case{"sub(\"a\"; \"X\")", R"("aba")", R"("Xba")"},
        Case{"gsub(\"a\"; \"X\")", R"("aba")", R"("XbX")"},
        Case{"[splits(\", *\")]", R"("a, b,c")", R"(["a","b","c"])"},
        Case{"split(\",\")", R"("a,b")", R"(["a","b"])"}, Case{"split(\",\")", R"("")", R"([""])"},
        Case{"flatten", R"({"a":[1]})", "[1]"},
        Case{"join(\",\")", R"({"a":1,"b":"x"})", R"("1,x")"}, Case{"has(\"a\")", "null", "false"},
        Case{"sqrt", "-1", "null"},
        Case{"startswith(\"ab\"), endswith(\"c\")", R"("abc")", "true true"},
        Case{"ltrimstr(\"a\"), rtrimstr(\"c\")", R"("abc")", R"("bc" "ab")"},
        Case{"trim", R"("  a  ")", R"("a")"}, Case{"join(\"-\")", R"(["a",1,null])", R"("a-1-")"},
        Case{"tojson", R"({"a":[1,"x"]})", R"("{\"a\":[1,\"x\"]}")"},
        Case{"fromjson", R"("{\"a\":1}")", R"({"a":1})"},
        Case{"[paths]", R"({"a":[1]})", R"([["a"],["a",0]])"},
        Case{"getpath([\"a\",\"b\"])", R"({"a":{"b":5}})", "5"},
        Case{"setpath([\"a\",1]; 5)", "null", R"({"a":[null,5]})"},
        Case{"del(.a, .c)", R"({"a":1,"b":2,"c":3})", R"({"b":2})"},
        Case{"delpaths([[0],[2]])", "[1,2,3]", "[2]"},
        Case{"path(.a[0].b)", "null", R"(["a",0,"b"])"},
        Case{"[path(..)]", R"({"a":1})", R"([[],["a"]])"},
        Case{"path(.a | select(.b == 0))", R"({"a":{"b":0}})", R"(["a"])"},
        Case{"path(first(.a, .b))", "null", R"(["a"])"},
        Case{"path(1)", "null", "", "invalid path against: number (1)"},
        Case{"path(.b as $x | 1 + $x.a)", R"({"b":{"a":1}})", "",
             "invalid path against: object ({\"a\":1})"},
        Case{"path(1 + .a)", R"({"a":1})", "", "invalid path against: number (2)"},
        Case{".a = 1", "{}", R"({"a":1})"}, Case{".a |= . + 1", R"({"a":1})", R"({"a":2})"},
        Case{".a += 1", R"({"a":1})", R"({"a":2})"}, Case{".a //= 3", "{}", R"({"a":3})"},
        // Every arithmetic update means its operator (answers from gojq).
        Case{".a -= 1", R"({"a":5})", R"({"a":4})"}, Case{".a *= 3", R"({"a":5})", R"({"a":15})"},
        Case{".[] /= 2", "[4,6]", "[2,3]"}, Case{".a %= 3", R"({"a":7})", R"({"a":1})"},
        Case{".s *= 3", R"({"s":"ab"})", R"({"s":"ababab"})"},
        Case{".a *= (1, 2)", R"({"a":5})", R"({"a":5} {"a":10})"},
        Case{".a += .b", R"({"a":[1],"b":[2]})", R"({"a":[1,2],"b":[2]})"},
        Case{".a -= \"x\"", R"({"a":5})", "", "cannot subtract: number (5) and string (\"x\")"},
        Case{".a %= 0", R"({"a":5})", "", "cannot modulo number (5) by: number (0)"},
        Case{".[] |= empty", "[1,2]", "[]"},
        Case{".a = 1", "[1]", "",
             "setpath([\"a\"]; 1) cannot be applied to [1]: expected an object but got: array "
             "([1])"},
        Case{"(.a, .b) = (1, 2)", "{}", R"({"a":1,"b":1} {"a":2,"b":2})"},
        Case{"to_entries | map(.key)", "[5,6]", "[0,1]"},
        Case{"\"x\\(1 + 1)y\"", "null", R"("x2y")"},
        Case{"\"\\(1,2)-\\(3,4)\"", "null", R"("1-3" "2-3" "1-4" "2-4")"},
        Case{"\"<\\(1)>\"", "null", R"("<1>")"}, Case{"@base64", R"("hi")", R"("aGk=")"},
        Case{"@base64d", R"("aGk=")", R"("hi")"}, Case{"@json \"v=\\(.)\"", R"([1])", R"("v=[1]")"},
        Case{"@text", "[1]", R"("[1]")"},
        Case{"{a: 1, \"b\": 2, (\"c\"): 3}", "null", R"({"a":1,"b":2,"c":3})"},
        Case{"{a: (1, 2)}", "null", R"({"a":1} {"a":2})"},
        Case{"[.[] | numbers]", R"([1,"a"])", "[1]"},
        Case{"walk(if type == \"number\" then . + 1 end)", "[1,[2]]", "[2,[3]]"},
        Case{"[splits(\"a\")]", R"("bab")", R"(["b","b"])"},
        Case{"indices(\", \")", R"("a, b, c")", "[1,4]"}, Case{"index(\"b\")", R"("abcb")", "1"},
        Case{"[limit(3; repeat(1))]", "null", "[1,1,1]"},
        Case{"[.[] | tostring]", "[0.1, 1e-7, 1e21, 3.0]", R"(["0.1","1e-7","1e+21","3"])"},
        Case{"abs", "-1", "1"}, Case{"pick(.a)", R"({"a":1,"b":2})", R"({"a":1})"},
        Case{"(.a.b)?", "[1]", ""},
        Case{".a.b?", "[1]", "", "expected an object but got: array ([1])"},
        Case{"reverse", "null", "", "reverse cannot be applied to: null"},
        Case{"ltrimstr(\"a\")", "1", "", "ltrimstr(\"a\") cannot be applied to: number (1)"},
        Case{"sort_by(.)", R"("x")", "", "cannot iterate over: string (\"x\")"},
        Case{"implode", "[97,98]", R"("ab")"}, Case{"explode", R"("ab")", "[97,98]"},
        Case{"reverse", "[1,2]", "[2,1]"}, Case{"IN(1, 2)", "2", "true"},
        Case{"[.[] | values]", "[1,null]", "[1]"},
        Case{"splits(1)", R"("a")", "", "match(1; \"g\") cannot be applied to: string (\"a\")"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::to_string(info.index); });

// Outputs of one evaluation on the engine, or its status.
absl::StatusOr<std::vector<Json>> Evaluate(Engine& engine, const std::string& expression,
                                           const Json& input) {
  auto program = engine.Compile({expression});
  if (!program.ok()) return program.status();
  absl::StatusOr<std::vector<Json>> outputs;
  auto run = engine.Run([&](Session& session) {
    outputs = session.Evaluate(**program, 0, session.Load(input));
    return absl::OkStatus();
  });
  if (!run.ok()) return run;
  return outputs;
}

// An expression and its one output, for ExpectOneOutputEach.
struct OneOutput {
  const char* expression;
  Json expected;
};

// Evaluates each case's expression on null and expects its one output.
void ExpectOneOutputEach(Engine& engine, std::initializer_list<OneOutput> cases) {
  for (const OneOutput& c : cases) {
    auto outputs = Evaluate(engine, c.expression, Json(nullptr));
    ASSERT_TRUE(outputs.ok()) << c.expression << ": " << outputs.status();
    EXPECT_EQ(*outputs, std::vector<Json>{c.expected}) << c.expression;
  }
}

TEST(NativeEngineTest, UndefinedNamesAreCompileErrors) {
  auto engine = NewNativeEngine();
  ASSERT_TRUE(engine.ok());
  std::vector<Engine::CompileError> errors;
  auto program = (*engine)->Compile({".a", "input", "$nope", "@base32", "."}, &errors);
  ASSERT_FALSE(program.ok());
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].index, 1u);
  EXPECT_EQ(errors[0].message, "function not defined: input/0");
  EXPECT_EQ(errors[1].message, "variable not defined: $nope");
  EXPECT_EQ(errors[2].message, "format not defined: @base32");
}

TEST(NativeEngineTest, HostileExpressionsEndWithinTheirBounds) {
  NativeEngineOptions options;
  options.limits.budget = absl::Seconds(2);
  options.max_built_bytes = 64 << 20;
  auto engine = NewNativeEngine(options);
  ASSERT_TRUE(engine.ok());
  // Which bound ends an evaluation first depends on the build (a sanitizer
  // build is slower and has larger frames), so each names the bounds that
  // may end it; every one must end with a bound, never a crash.
  using Code = absl::StatusCode;
  const std::vector<Code> kStackOrTime = {Code::kResourceExhausted, Code::kDeadlineExceeded};
  const std::vector<Code> kAnyBound = {Code::kResourceExhausted, Code::kDeadlineExceeded,
                                       Code::kInvalidArgument};
  struct Hostile {
    const char* expression;
    std::vector<Code> codes;
  };
  for (const Hostile& h : {
           Hostile{"def f: f; f", kStackOrTime},
           Hostile{"def f: 1 + f; f", kStackOrTime},
           Hostile{"[range(1e9)]", kStackOrTime},
           Hostile{"repeat(.)", kAnyBound},
           // Past the memory bound before it is built; not catchable.
           Hostile{"\"x\" * 1e9", {Code::kResourceExhausted}},
           Hostile{"try (\"x\" * 1e9) catch 1", {Code::kResourceExhausted}},
           Hostile{"[limit(1e8; repeat(1))]", kStackOrTime},
           Hostile{"last(range(1e12))", {Code::kDeadlineExceeded}},
           Hostile{"try (def f: f; f) catch 1", kStackOrTime},
       }) {
    auto outputs = Evaluate(**engine, h.expression, Json(nullptr));
    ASSERT_FALSE(outputs.ok()) << h.expression;
    EXPECT_NE(std::find(h.codes.begin(), h.codes.end(), outputs.status().code()), h.codes.end())
        << h.expression << ": " << outputs.status();
  }
  std::string nested = std::string(10000, '(') + "1" + std::string(10000, ')');
  auto deep = Evaluate(**engine, nested, Json(nullptr));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument) << deep.status();
  // The engine still evaluates after all of them.
  auto fine = Evaluate(**engine, ".a", Json{{"a", 1}});
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(*fine, std::vector<Json>{Json(1)});
}

// An evaluation that meets the stack bound touched 1 MiB of its thread's
// stack; the pages go back to the system when it returns, or every server
// thread that ever ran a hostile expression would keep its own megabyte
// (the hostile soak's daemon kept 4.7 MB of stacks after a minute).
TEST(NativeEngineTest, StackPagesOfADeepRecursionAreGivenBack) {
  auto engine = NewNativeEngine();
  ASSERT_TRUE(engine.ok());
  std::thread([&] {
    auto outputs = Evaluate(**engine, "def f: 1 + f; f", Json(nullptr));
    ASSERT_FALSE(outputs.ok());
    ASSERT_THAT(std::string(outputs.status().message()), ::testing::HasSubstr("stack bound"));
    // Below the frames still in use and the release's margin.
    const int pages = wm::testing::ResidentStackPagesBelow(size_t{256} << 10);
    ASSERT_GE(pages, 0);
    EXPECT_LT(pages, 16);
  }).join();
}

// Tail calls take no stack (gojq optimizes them too): loops written as
// tail recursion run to 100,000 calls deep, where without this they met the
// stack bound within a few hundred levels (our own catalog's LeaderWorkerSet
// and Grove definitions counted their groups with `until`). gojq's results
// for each. Deeper, they end at once with the bound on tail calls, not
// after the whole time budget.
TEST(NativeEngineTest, TailCallsRunInConstantStack) {
  // What is measured is stack, not time: a Debug ASan build on a loaded
  // 2-core machine takes over 2 s (the default budget) to build the
  // 2,000-element array below one copy at a time.
  NativeEngineOptions options;
  options.limits.budget = absl::Seconds(60);
  auto engine = NewNativeEngine(options);
  ASSERT_TRUE(engine.ok());
  struct Deep {
    const char* expression;
    Json output;
  };
  for (const Deep& d : {
           Deep{"0 | until(. >= 50000; . + 1)", Json(50000)},
           Deep{"def f: if . >= 50000 then . else (. + 1 | f) end; 0 | f", Json(50000)},
           Deep{"[0 | while(. < 50000; . + 1)] | length", Json(50000)},
           Deep{"[limit(50000; def f: ., (. + 1 | f); 0 | f)] | last", Json(49999)},
           // A parameter's argument in the condition and the step.
           Deep{"def count(c; s): def r: if c then . else s | r end; r; 0 | count(. >= 50000; . + "
                "1)",
                Json(50000)},
           Deep{"[[] | until(length >= 2000; . + [length]) | .[]] | add", Json(1999000)},
       }) {
    auto outputs = Evaluate(**engine, d.expression, Json(nullptr));
    ASSERT_TRUE(outputs.ok()) << d.expression << ": " << outputs.status();
    EXPECT_EQ(*outputs, std::vector<Json>{d.output}) << d.expression;
  }
  for (const char* runaway :
       {"def f: f; f", "0 | until(false; . + 1)", "def r: 1, r; [limit(100000000; r)] | length"}) {
    auto outputs = Evaluate(**engine, runaway, Json(nullptr));
    ASSERT_FALSE(outputs.ok()) << runaway;
    EXPECT_EQ(outputs.status().code(), absl::StatusCode::kResourceExhausted) << runaway;
    EXPECT_EQ(outputs.status().message(),
              "expression recursed too deeply (more than 100000 tail calls)")
        << runaway;
  }
  // A call that is not in tail position still nests, to the stack bound.
  auto nested = Evaluate(**engine, "def f: if . >= 100000 then . else 1 + (. + 1 | f) end; 0 | f",
                         Json(nullptr));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().code(), absl::StatusCode::kResourceExhausted) << nested.status();
  EXPECT_THAT(std::string(nested.status().message()), ::testing::HasSubstr("stack bound"));
}

// One native call can do much work in one step: a global match searches
// again after each match, and each search may read to the end of the
// string. Those calls meter themselves, so the budget ends them within
// about a step's overrun, not minutes later (a fuzzer found
// `[match("a*b|"; "g")]` over a long string running for minutes).
TEST(NativeEngineTest, LongNativeCallsAreInterruptedByTheBudget) {
  NativeEngineOptions options;
  options.limits.budget = absl::Milliseconds(200);
  options.max_built_bytes = 64 << 20;
  auto engine = NewNativeEngine(options);
  ASSERT_TRUE(engine.ok());
  for (const char* expression : {
           R"(("a" * 1000000) | [match("a*b|"; "g")] | length)",
           R"(("a" * 1000000) | [match(""; "g")] | length)",
           // Each needle found last: 10^11 comparisons.
           R"([range(1000000)] | contains([range(100000) | 999999]))",
           // Each start matches 10^5 elements before it fails.
           R"([range(1000000) | 0] | indices([range(100000) | 0] + [1]))",
       }) {
    auto outputs = Evaluate(**engine, expression, Json(nullptr));
    ASSERT_FALSE(outputs.ok()) << expression;
    EXPECT_TRUE(outputs.status().code() == absl::StatusCode::kDeadlineExceeded ||
                outputs.status().code() == absl::StatusCode::kResourceExhausted)
        << expression << ": " << outputs.status();
  }
}

// Searching within strings is linear (std::string::find is quadratic on
// these), and offsets are in characters, counted once per string.
TEST(NativeEngineTest, StringSearchesAreLinearAndCountCharacters) {
  auto engine = NewNativeEngine();
  ASSERT_TRUE(engine.ok());
  ExpectOneOutputEach(
      **engine, {
                    OneOutput{R"(("a" * 1000000) | contains(("a" * 500000) + "b"))", Json(false)},
                    OneOutput{R"(("a" * 1000000) | contains("a" * 500000))", Json(true)},
                    OneOutput{R"(("a" * 200000) | indices(("a" * 100000) + "b"))", Json::array()},
                    OneOutput{R"(("a" * 200000) | indices("a" * 100000) | length)", Json(100001)},
                    OneOutput{R"("aéaéa" | indices("aéa"))", Json::array({0, 2})},
                    OneOutput{R"("ééé" | indices("éé"))", Json::array({0, 1})},
                    OneOutput{R"("xé xé" | [match("é"; "g") | .offset])", Json::array({1, 4})},
                    OneOutput{R"jq("éa-éb" | [match("é(?<l>[a-z])"; "g") | .captures[0].offset])jq",
                              Json::array({1, 4})},
                    OneOutput{R"([range(100000) | "ab"] | add | length)", Json(200000)},
                    OneOutput{R"([range(3) | [.]] | add)", Json::array({0, 1, 2})},
                    OneOutput{R"([{a: 1}, {b: 2}, {a: 3}] | add)", Json{{"a", 3}, {"b", 2}}},
                    OneOutput{R"([null, 1, 2] | add)", Json(3)},
                });
}

// Objects are sorted vectors (Json's internal::SortedObject): adding many
// objects (and so `from_entries`), `+` and `*` of large objects sort or
// merge once instead of inserting each member in the middle (for these
// keys, decimal strings not in byte order, some 10^8 moves each). Their
// results, with repeated keys, at sizes where that matters.
TEST(NativeEngineTest, LargeObjectsAreBuiltWithoutQuadraticInsertion) {
  // A budget for a Debug build under ASan beside other work: what is
  // checked here is the results, not the time (that is resolve_bench's).
  NativeEngineOptions options;
  options.limits.budget = absl::Seconds(60);
  auto engine = NewNativeEngine(options);
  ASSERT_TRUE(engine.ok());
  ExpectOneOutputEach(
      **engine,
      {
          OneOutput{R"jq([range(50000) | {(tostring): .}] | add | length)jq", Json(50000)},
          OneOutput{R"jq([range(30000) | {key: tostring, value: .}] | from_entries | .["12345"])jq",
                    Json(12345)},
          OneOutput{R"jq(([range(40000) | {("a\(.)"): .}] | add) as $a
                   | ([range(40000) | {("a\(. + 20000)"): -1}] | add) as $b
                   | ($a + $b) as $sum | [($sum | length), $sum.a0, $sum.a30000])jq",
                    Json::array({60000, 0, -1})},
          OneOutput{R"jq(([range(20000) | {(tostring): {x: .}}] | add) as $a
                   | ([range(20000) | {(tostring): {y: 1}}] | add) as $b
                   | ($a * $b) | [length, .["7"]])jq",
                    Json::array({20000, Json{{"x", 7}, {"y", 1}}})},
      });
}

TEST(NativeEngineTest, OutputsAreBounded) {
  auto engine = NewNativeEngine();
  ASSERT_TRUE(engine.ok());
  auto outputs = Evaluate(**engine, "range(1000)", Json(nullptr));
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().message(), "query results exceed the allowed number 1000");
  EXPECT_TRUE(Evaluate(**engine, "range(999)", Json(nullptr)).ok());
  // The same bound on the fast lane of plain walks.
  Json many = Json::array();
  for (int i = 0; i < 1000; ++i) many.push_back(i);
  outputs = Evaluate(**engine, ".[]", many);
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().message(), "query results exceed the allowed number 1000");
  many.erase(many.size() - 1);
  EXPECT_EQ(Evaluate(**engine, ".[]", many)->size(), 999u);
}

// Output bytes are bounded on the fast lane as on the interpreter's.
TEST(NativeEngineTest, WalkedOutputsAreBoundedInBytes) {
  NativeEngineOptions options;
  options.limits.max_output_bytes = 1000;
  auto engine = NewNativeEngine(options);
  ASSERT_TRUE(engine.ok());
  Json input = {{"a", std::string(600, 'x')}, {"b", std::string(600, 'y')}};
  EXPECT_TRUE(Evaluate(**engine, ".a", input).ok());
  auto outputs = Evaluate(**engine, ".[]", input);
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().message(), "query results exceed the allowed size of 1000 bytes");
}

// One engine, one program and one input shared by threads evaluating at
// once (run under TSan in scripts/test): evaluation shares nothing mutable.
TEST(NativeEngineTest, ConcurrentEvaluationsAgree) {
  auto engine = NewNativeEngine();
  ASSERT_TRUE(engine.ok());
  std::vector<std::string> sources = {
      ".spec.replicatedJobs[] | .name",
      "[.status.conditions[]? | select(.status == \"True\") | .type] | sort",
      "reduce .spec.replicatedJobs[] as $j (0; . + ($j.replicas // 1))",
      "path(.spec.replicatedJobs[0].template)",
      "[.metadata.labels | to_entries[] | \"\\(.key)=\\(.value)\"] | join(\",\")",
      ".spec.replicatedJobs[0].template |= (.x = 1) | .spec.replicatedJobs[0].template.x",
      "try error(\"boom\") catch ."};
  auto program = (*engine)->Compile(sources);
  ASSERT_TRUE(program.ok()) << program.status();
  Json input = Json::parse(R"({
    "metadata": {"labels": {"a": "1", "b": "2"}},
    "spec": {"replicatedJobs": [{"name": "leader", "replicas": 1, "template": {}},
                                {"name": "worker", "replicas": 3, "template": {}}]},
    "status": {"conditions": [{"type": "Ready", "status": "True"},
                              {"type": "Failed", "status": "False"}]}})");
  auto evaluate_all = [&](std::vector<std::vector<Json>>& out) {
    return (*engine)->Run([&](Session& session) {
      Session::InputId id = session.Load(input);
      for (size_t i = 0; i < sources.size(); ++i) {
        auto outputs = session.Evaluate(**program, i, id);
        if (!outputs.ok()) return outputs.status();
        out.push_back(*std::move(outputs));
      }
      return absl::OkStatus();
    });
  };
  std::vector<std::vector<Json>> expected;
  ASSERT_TRUE(evaluate_all(expected).ok());
  constexpr int kThreads = 4;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 300; ++round) {
        std::vector<std::vector<Json>> got;
        if (!evaluate_all(got).ok() || got != expected) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  EXPECT_EQ(expected[2], std::vector<Json>{Json(4)});
}

// `source` as the native compiler leaves it (the operations the engine
// runs); a source that does not parse or compile fails the test and gives
// null.
std::unique_ptr<const native::Op> CompileNative(const char* source) {
  static const native::Prelude* const kPrelude = native::Prelude::Build().value().release();
  auto tree = native::Parse(source);
  if (!tree.ok()) {
    ADD_FAILURE() << source << ": " << tree.status();
    return nullptr;
  }
  auto op = native::Compile(**tree, *kPrelude);
  if (!op.ok()) {
    ADD_FAILURE() << source << ": " << op.status();
    return nullptr;
  }
  return *std::move(op);
}

// `[q] | length` compiles to a count, at the head of a longer pipe too,
// and only when `length` is the builtin.
TEST(CompilerTest, CollectThenLengthIsACount) {
  auto count = CompileNative("[.[]] | length");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->kind, native::OpKind::kFold);
  auto longer = CompileNative("[.[]] | length | . + 1");
  ASSERT_NE(longer, nullptr);
  ASSERT_EQ(longer->kind, native::OpKind::kPipe);
  EXPECT_EQ(longer->child(0)->kind, native::OpKind::kFold);
  auto redefined = CompileNative("def length: 7; [.[]] | length");
  ASSERT_NE(redefined, nullptr);
  EXPECT_NE(redefined->child(0)->kind, native::OpKind::kFold);
}

// The other folds: the builtins any, all, min, max and add, and `.[0]` and
// `.[-1]` written so or through first and last, but no other index and no
// redefined builtin.
TEST(CompilerTest, CollectThenFoldIsAFold) {
  const std::pair<const char*, native::Fold> folds[] = {
      {"[.[]] | first", native::Fold::kFirst}, {"[.[]] | .[0]", native::Fold::kFirst},
      {"[.[]] | last", native::Fold::kLast},   {"[.[]] | .[-1]", native::Fold::kLast},
      {"[.[]] | any", native::Fold::kAny},     {"[.[]] | all", native::Fold::kAll},
      {"[.[]] | min", native::Fold::kMin},     {"[.[]] | max", native::Fold::kMax},
      {"[.[]] | add", native::Fold::kAdd},
  };
  // `[q] | f // c`, c a literal: the fold, then the alternative.
  for (const char* source : {"[.[]] | first // {}", "[.[]] | max // 0", "[.[]] | last // []"}) {
    auto op = CompileNative(source);
    ASSERT_NE(op, nullptr) << source;
    ASSERT_EQ(op->kind, native::OpKind::kAlternative) << source;
    EXPECT_EQ(op->child(0)->kind, native::OpKind::kFold) << source;
  }
  auto input_dependent = CompileNative("[.[]] | first // .");
  ASSERT_NE(input_dependent, nullptr);
  EXPECT_NE(input_dependent->kind, native::OpKind::kAlternative);
  for (const auto& [source, fold] : folds) {
    auto op = CompileNative(source);
    ASSERT_NE(op, nullptr) << source;
    EXPECT_EQ(op->kind, native::OpKind::kFold) << source;
    EXPECT_EQ(op->fold, fold) << source;
  }
  for (const char* other : {"[.[]] | .[1]", "[.[]] | .[0]?", "[.[]] | any(. > 1)",
                            "def first: .[1]; [.[]] | first", "def max: 7; [.[]] | max"}) {
    auto op = CompileNative(other);
    ASSERT_NE(op, nullptr) << other;
    const native::Op* head = op->kind == native::OpKind::kDefine ? op->child(0) : op.get();
    EXPECT_NE(head->kind, native::OpKind::kFold) << other;
  }
}

// A chain of constant names from `.` counts its steps (Op::name_steps), up
// to kMaxNameSteps; an optional step, another key or another start ends it.
TEST(CompilerTest, NameChainsCountTheirSteps) {
  const std::pair<const char*, int> chains[] = {
      {".a", 1},
      {".a.b.c", 3},
      {".a?.b", 0},
      {".a.b?", 0},
      {".[0].a", 0},
      {".a[\"b\"]", 2},
      {".a.b.c.d.e.f.g.h", 8},
      {".a.b.c.d.e.f.g.h.i", 0},
  };
  for (const auto& [source, steps] : chains) {
    auto op = CompileNative(source);
    ASSERT_NE(op, nullptr) << source;
    ASSERT_EQ(op->kind, native::OpKind::kIndex) << source;
    EXPECT_EQ(op->name_steps, steps) << source;
  }
}

// A fold whose query ends in the builtin select of a single-valued
// condition tests the condition itself; not a redefined select, nor a
// condition with several outputs.
TEST(CompilerTest, FoldOfSelectFiltersInPlace) {
  for (const char* filtered :
       {"[.[] | select(. > 1)] | length", "[.a[]? | select(.type == \"Ready\")] | first // {}"}) {
    auto op = CompileNative(filtered);
    ASSERT_NE(op, nullptr) << filtered;
    const native::Op* fold = op->kind == native::OpKind::kAlternative ? op->child(0) : op.get();
    ASSERT_EQ(fold->kind, native::OpKind::kFold) << filtered;
    EXPECT_TRUE(fold->select_filter) << filtered;
  }
  for (const char* other :
       {"[.[] | select(.[] > 1)] | length", "[.[] | .a] | length", "[select(. > 1)] | length"}) {
    auto op = CompileNative(other);
    ASSERT_NE(op, nullptr) << other;
    ASSERT_EQ(op->kind, native::OpKind::kFold) << other;
    EXPECT_FALSE(op->select_filter) << other;
  }
  auto redefined = CompileNative("def select(f): .; [.[] | select(. > 1)] | length");
  ASSERT_NE(redefined, nullptr);
  ASSERT_EQ(redefined->child(0)->kind, native::OpKind::kFold);
  EXPECT_FALSE(redefined->child(0)->select_filter);
}

// Which operations the compiler marks single-valued (the interpreter's
// direct lane): those with exactly one output for any input, through
// definitions without parameters that are, but not through recursion.
TEST(CompilerTest, SingleValuedOperationsAreMarked) {
  for (const char* single :
       {".", ".a.b // 0", "(.a // 1) * 2 >= .b", "[.[]] | length", "[.[]? | .a]",
        ".a as $x | $x + 1", "if .a then 1 end", "if .a then 1 elif .b then 2 else 3 end",
        "reduce .[] as $x (0; . + $x)", "length", "has(\"a\")", "first", "-(.a)", "not",
        "{a: .b, c: 1}", "\"x\\(.a)\"", "def f: .a; f", "map(.a)", "any(.[]; . > 1)"}) {
    auto op = CompileNative(single);
    ASSERT_NE(op, nullptr) << single;
    EXPECT_TRUE(op->single) << single;
  }
  for (const char* other :
       {".[]", ".a?", ".a[]?", "select(.a)", "if .a then .[] end", "has(.[])", "range(3)",
        ".a as [$x, $y] | $x", ".[] as $x | $x", "empty", "first(.[])", "def f: f; f",
        "def f(g): g; f(.a)", "1, 2", "try .a", ".a as $x ?// [$x] | $x", "path(.a)"}) {
    auto op = CompileNative(other);
    ASSERT_NE(op, nullptr) << other;
    EXPECT_FALSE(op->single) << other;
  }
}

// Which expressions take the fast lane: plain walks only.
TEST(PathPlanTest, OnlyPlainWalksArePlanned) {
  auto planned = [](const char* source) {
    auto op = CompileNative(source);
    return op != nullptr && native::PathPlan::Of(*op).has_value();
  };
  for (const char* walk : {".", ".a", ".a.b", R"(.metadata.labels["x/y"])", ".a[].b", ".[][]"}) {
    EXPECT_TRUE(planned(walk)) << walk;
  }
  for (const char* other :
       {".a?", ".a[]?", ".[0]", ".a[1:]", ".a | .b", ".[.k]", ".a // 1", "..", R"x(."\(1)")x"}) {
    EXPECT_FALSE(planned(other)) << other;
  }
}

}  // namespace
}  // namespace wm::expressions
