// The gojq oracle client against the real oracle (tools/gojq-oracle): the
// protocol, gojq's number semantics and upstream's bounds.

#include "server/expressions/testing/gojq_oracle.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/testing/optional_input.h"

namespace wm::expressions::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class GojqOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<std::string> path = GojqOraclePathFromEnv();
    if (!path) {
      WM_SKIP_OR_FAIL_IN_CI(::wm::testing::MissingInput(
          kGojqOracleEnv, "", "the gojq oracle, built by scripts/build-gojq-oracle"));
    }
    auto oracle = GojqOracle::Start(*path);
    ASSERT_TRUE(oracle.ok()) << oracle.status();
    oracle_ = *std::move(oracle);
  }

  GojqResult Eval(const std::string& expression, const Json& input) {
    absl::StatusOr<GojqResult> result = oracle_->Evaluate(expression, input);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : GojqResult{};
  }

  std::unique_ptr<GojqOracle> oracle_;
};

TEST_F(GojqOracleTest, ReturnsEveryOutputInOrder) {
  GojqResult result = Eval(".a[], .b", Json::parse(R"({"a": [1, "x", null], "b": {"c": true}})"));
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_THAT(result.outputs,
              ElementsAre(Json(1), Json("x"), Json(nullptr), Json::parse(R"({"c": true})")));
}

TEST_F(GojqOracleTest, EmptyIsNoOutputs) {
  GojqResult result = Eval("empty", Json(nullptr));
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_TRUE(result.outputs.empty());
}

TEST_F(GojqOracleTest, KeepsGojqsNumbers) {
  // Integer literals beyond a double's exact range stay exact in gojq
  // (jq 1.6 prints 1e+20); input numbers are float64 as in upstream.
  GojqResult result =
      Eval("(100000000000000000000 | tostring), (.n | tojson)", Json::parse(R"({"n": 1.0})"));
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_THAT(result.outputs, ElementsAre(Json("100000000000000000000"), Json("1")));
}

TEST_F(GojqOracleTest, SaysWhichStageFailed) {
  GojqResult parse = Eval(".a |", Json(nullptr));
  EXPECT_EQ(parse.error_stage, "parse");
  GojqResult compile = Eval("$undefined", Json(nullptr));
  EXPECT_EQ(compile.error_stage, "compile");
  EXPECT_THAT(compile.error, HasSubstr("$undefined"));
  GojqResult run = Eval(".[]", Json(true));
  EXPECT_EQ(run.error_stage, "run");
  EXPECT_EQ(run.error, "cannot iterate over: boolean (true)");
}

TEST_F(GojqOracleTest, BindsAsOverTheWholeAndChain) {
  // gojq reads `A and (B) as $x | body` as `(A and (B)) as $x | body`.
  GojqResult result = Eval("true and (.s) as $x | $x[]", Json::parse(R"({"s": [1]})"));
  EXPECT_EQ(result.error, "cannot iterate over: boolean (true)");
}

TEST_F(GojqOracleTest, FailsAtTheThousandthOutputAsUpstream) {
  GojqResult at_limit = Eval("range(999)", Json(nullptr));
  ASSERT_TRUE(at_limit.ok()) << at_limit.error;
  EXPECT_EQ(at_limit.outputs.size(), 999u);
  GojqResult past = Eval("range(1000)", Json(nullptr));
  EXPECT_EQ(past.error, "query results exceed the allowed number 1000");
}

TEST_F(GojqOracleTest, ServesRequestsAfterAnError) {
  EXPECT_FALSE(Eval("error(\"x\")", Json(nullptr)).ok());
  GojqResult result = Eval(". + 1", Json(41));
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_THAT(result.outputs, ElementsAre(Json(42)));
}

TEST(GojqOracleStartTest, NamesTheVariableWhenTheBinaryIsMissing) {
  auto oracle = GojqOracle::Start("/nonexistent/gojq-oracle");
  ASSERT_FALSE(oracle.ok());
  EXPECT_THAT(oracle.status().message(), HasSubstr(kGojqOracleEnv));
}

// A builtin slow inside one step outlasts gojq's own -timeout; the
// client's timeout cuts it, and the oracle is gone afterwards.
TEST_F(GojqOracleTest, ASlowAnswerIsCutAtTheClientsTimeout) {
  const absl::Time start = absl::Now();
  auto slow = oracle_->Evaluate(R"(("a" * 400000) | indices("a" * 200000) | length)", Json(nullptr),
                                absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsDeadlineExceeded(slow.status())) << slow.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_FALSE(oracle_->Evaluate("1", Json(nullptr)).ok());
}

// Flags reach the oracle: -max-results.
TEST(GojqOracleFlagsTest, FlagsReachTheOracle) {
  std::optional<std::string> path = GojqOraclePathFromEnv();
  if (!path) {
    WM_SKIP_OR_FAIL_IN_CI(::wm::testing::MissingInput(
        kGojqOracleEnv, "", "the gojq oracle, built by scripts/build-gojq-oracle"));
  }
  auto oracle = GojqOracle::Start(*path, {"-max-results=3"});
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  auto result = (*oracle)->Evaluate("range(5)", Json(nullptr));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->error, "query results exceed the allowed number 3");
}

}  // namespace
}  // namespace wm::expressions::testing
