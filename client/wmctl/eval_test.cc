// wmctl eval: one jq expression as the daemon evaluates a definition's.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "client/wmctl/snapshot_daemon.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::wmctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Result Eval(std::vector<std::string> argv, const std::string& stdin_text = "") {
  argv.insert(argv.begin(), "eval");
  return RunCli(argv, {}, stdin_text);
}

TEST(EvalTest, PrintsEveryOutputAsOneCompactJsonLine) {
  Result r =
      Eval({".items[]", "-f", "-"}, R"({"items": [1, "two", {"z": [1, 2], "a": null}, 1.5]})");
  EXPECT_EQ(r.code, 0) << r.err;
  // Keys sorted, as the daemon holds objects.
  EXPECT_EQ(r.out, "1\n\"two\"\n{\"a\":null,\"z\":[1,2]}\n1.5\n");
  EXPECT_EQ(r.err, "");
}

TEST(EvalTest, WithoutAFileTheInputIsNull) {
  Result r = Eval({"., (. == null), empty"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "null\ntrue\n");
}

TEST(EvalTest, RawOutputPrintsStringsRaw) {
  const std::string input = R"({"name": "demo \"x\"", "n": 3})";
  Result r = Eval({"-r", ".name, .n, [.name]", "-f", "-"}, input);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "demo \"x\"\n3\n[\"demo \\\"x\\\"\"]\n");
  EXPECT_EQ(Eval({"--raw-output", ".name", "-f", "-"}, input).out, "demo \"x\"\n");
  EXPECT_EQ(Eval({".name", "-f", "-"}, input).out, "\"demo \\\"x\\\"\"\n");
}

TEST(EvalTest, ReadsYamlFiles) {
  Result r = Eval(
      {".spec.replicatedJobs[].name", "-f", SourceDir() + "/integration_tests/seed/jobset.yaml"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "\"leader\"\n\"worker\"\n");
}

// Each document of a multi-document YAML in turn; an error names the
// document and ends the run after what the earlier ones printed.
TEST(EvalTest, EvaluatesEachYamlDocumentInTurn) {
  Result r = Eval({".a + 1", "-f", "-"}, "a: 1\n---\na: 2\n---\na: x\n---\na: 4\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "2\n3\n");
  EXPECT_EQ(r.err, "error: stdin#3: cannot add: string (\"x\") and number (1)\n");
}

// In the daemon's default engine's words (gojq's), or libjq's with
// --engine libjq.
TEST(EvalTest, JqErrorsAsTheDaemonReportsThem) {
  Result r = Eval({".a.b", "-f", "-"}, R"({"a": 1})");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: expected an object but got: number (1)\n");
  r = Eval({"--engine", "libjq", ".a.b", "-f", "-"}, R"({"a": 1})");
  EXPECT_EQ(r.err, "error: Cannot index number with string \"b\"\n");
  // The first error ends the evaluation and hides its outputs, as in the
  // daemon (an expression yields its outputs or an error). gojq words
  // error(v) as "error: v", which the daemon reports after the field.
  r = Eval({"1, error(\"boom\")"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: error: boom\n");
  r = Eval({"--engine", "libjq", "1, error(\"boom\")"});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: boom\n");
}

TEST(EvalTest, CompileErrorsAsValidationReportsThem) {
  Result r = Eval({".a |"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, StartsWith("error: jq does not compile: "));
  EXPECT_EQ(r.out, "");
}

// The text of a finding of `wmctl validate --offline` for a definition
// whose running matcher is `expression` (the line after INVALID).
std::string ValidationFinding(const std::string& expression) {
  std::string definition = R"(apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: eval-test}
spec:
  structureDefinition:
    rootComponent:
      name: trainer
      kind: {group: example.com, version: v1, kind: Trainer}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: 'EXPR', expectedResult: "true"}
)";
  Result r = RunCli({"validate", "--offline", "-"}, {},
                    absl::StrReplaceAll(definition, {{"EXPR", expression}}));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string path =
      "  spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running[0]."
      "byExpression.expression: ";
  size_t at = r.out.find(path);
  if (at == std::string::npos) return "not found in: " + r.out;
  size_t start = at + path.size();
  return r.out.substr(start, r.out.find('\n', start) - start);
}

// Blocked builtins and the read-only blacklist are refused before anything
// runs, with validation's words.
TEST(EvalTest, RefusesWhatValidationRefusesWithTheSameText) {
  for (const std::string expression : {"[range(1e9)]", "env.HOME", ".a = 1", "[..]", "input"}) {
    Result r = Eval({expression});
    EXPECT_EQ(r.code, 1) << expression;
    EXPECT_EQ(r.out, "") << expression;
    EXPECT_EQ(r.err, absl::StrCat("error: ", ValidationFinding(expression), "\n")) << expression;
  }
  EXPECT_EQ(Eval({"[range(1e9)]"}).err, "error: range function is not allowed\n");
  // Every problem, in source order.
  EXPECT_EQ(Eval({"del(.a) | $ENV"}).err,
            "error: del function is not allowed\n"
            "error: $ENV is not allowed (definitions must not read the daemon's environment)\n");
  Result long_expression = Eval({std::string(16 * 1024 + 1, '.')});
  EXPECT_EQ(long_expression.code, 1);
  EXPECT_EQ(long_expression.err, "error: expression is 16385 bytes; at most 16384 are allowed\n");
}

// Hostile expressions end with the daemon's bounded errors, on either
// engine. Natively, recursion is bounded by the stack before it reaches
// 1000 outputs or the 2 s budget.
TEST(EvalTest, HostileExpressionsEndWithTheDaemonsBounds) {
  struct Case {
    const char* engine;
    const char* expression;
    const char* error;
  };
  for (const Case& c : {
           // Tail calls run in constant stack (as gojq's do), up to 100,000
           // deep: an endless one ends at once, not after the time budget.
           Case{"native", "def f: ., f; f",
                "error: query results exceed the allowed number 1000\n"},
           Case{"native", "\"x\" * 5000000",
                "error: query results exceed the allowed size of 4194304 bytes\n"},
           Case{"native", "def f: f; f",
                "error: expression recursed too deeply (more than 100000 tail calls)\n"},
           // A recursion that is not a tail call meets the stack bound. It is
           // larger under sanitizers: its figure is left out.
           Case{"native", "def f: 1 + f; f",
                "error: expression recursed too deeply (stack bound of "},
           Case{"native", "[limit(1e8; repeat(1))] | length",
                "error: repeat function is not allowed\n"},
           Case{"libjq", "def f: ., f; f", "error: query results exceed the allowed number 1000\n"},
           // The same 5 MB in 5,000 steps instead of 5,000,000: libjq 1.6
           // repeats a string by appending it n times, which under ASan on a
           // loaded machine outlasted the 2 s budget (its error came first).
           Case{"libjq", "(\"x\" * 1000) * 5000",
                "error: query results exceed the allowed size of 4194304 bytes\n"},
           Case{"libjq", "def f: f; f", "error: expression exceeded its evaluation budget of 2s\n"},
       }) {
    Result r = Eval({"--engine", c.engine, c.expression});
    EXPECT_EQ(r.code, 1) << c.engine << " " << c.expression;
    EXPECT_EQ(r.out, "") << c.engine << " " << c.expression;
    EXPECT_THAT(r.err, StartsWith(c.error)) << c.engine << " " << c.expression;
  }
}

TEST(EvalTest, EngineChoice) {
  EXPECT_EQ(Eval({"--engine", "libjq", "1 + 1"}).out, "2\n");
  Result native = Eval({"--engine=native", "1 + 1"});
  EXPECT_EQ(native.code, 0) << native.err;
  EXPECT_EQ(native.out, "2\n");
  // Where jq 1.6 and gojq differ, each engine answers as its dialect does.
  EXPECT_EQ(Eval({"--engine=native", "[limit(0; 1, 2)]"}).out, "[]\n");
  Result error = Eval({"--engine=native", ".a", "-f", "-"}, "[1]");
  EXPECT_EQ(error.code, 1);
  EXPECT_EQ(error.err, "error: expected an object but got: array ([1])\n");
  Result unknown = Eval({"--engine", "gojq", "1"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.err, StartsWith("error: unknown engine \"gojq\" (native, libjq)\n"));
}

TEST(EvalTest, UsageAndInputErrors) {
  EXPECT_EQ(Eval({}).code, 2);
  EXPECT_EQ(Eval({".", "."}).code, 2);
  Result daemon_flag = Eval({".", "--address", "127.0.0.1:1"});
  EXPECT_EQ(daemon_flag.code, 2);
  EXPECT_THAT(daemon_flag.err, StartsWith("error: eval does not take --address\n"));
  EXPECT_EQ(Eval({".", "-o", "json"}).code, 2);
  // An EXPR that starts with - comes after --.
  EXPECT_EQ(Eval({"-1"}).code, 2);
  EXPECT_EQ(Eval({"--", "-1"}).out, "-1\n");

  Result missing = Eval({".", "-f", "/nonexistent/input.json"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "error: cannot read /nonexistent/input.json: No such file or directory\n");
  // The daemon's reader: its bounds and messages.
  Result bad = Eval({".", "-f", "-"}, R"({"a": 1e400})");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, StartsWith("error: stdin: number out of range at byte "));
  Result deep = Eval({".", "-f", "-"}, std::string(101, '[') + std::string(101, ']'));
  EXPECT_EQ(deep.code, 2);
  EXPECT_THAT(deep.err, HasSubstr("nesting deeper than 100 levels"));
  Result empty = Eval({".", "-f", "-"}, "");
  EXPECT_EQ(empty.code, 2);
  EXPECT_EQ(empty.err, "error: stdin: no document\n");
}

TEST(EvalTest, HelpListsEval) {
  Result r = RunCli({"help"});
  EXPECT_THAT(r.out, HasSubstr("wmctl eval EXPR [-f FILE|-]"));
  EXPECT_THAT(r.out, HasSubstr("-r, --raw-output"));
}

}  // namespace
}  // namespace wm::wmctl
