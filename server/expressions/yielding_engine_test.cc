// RunOptions' yield points on the native engine, and YieldingEngine.

#include "server/expressions/yielding_engine.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/expressions/native_engine.h"

namespace wm::expressions {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Engine> Native() {
  return NewNativeEngine({.limits = {.budget = absl::Seconds(30)}}).value();
}

// Counts to 10^12, one step at a time: ends only at a time bound (a
// recursion would end sooner, at the tail-call bound).
constexpr char kSpin[] = "reduce range(1e12) as $i (0; . + 1)";

// Evaluates `source` on null in one session of `engine`; the evaluation's
// own status in `evaluated`, Run's as the result.
absl::Status RunOne(Engine& engine, const std::string& source, const RunOptions& options,
                    absl::Status* evaluated) {
  auto program = engine.Compile({source});
  if (!program.ok()) return program.status();
  static const Json kNull;
  return engine.Run(
      [&](Session& session) {
        *evaluated = session.EvaluateViews(**program, 0, session.Load(kNull)).status();
        return absl::OkStatus();  // as code that keeps going past a failed field would
      },
      options);
}

TEST(RunOptionsTest, ASpinningEvaluationYieldsAtTheYieldTime) {
  auto engine = Native();
  absl::Status evaluated;
  absl::Status run =
      RunOne(*engine, kSpin, {.yield_at = absl::Now() + absl::Milliseconds(5)}, &evaluated);
  EXPECT_TRUE(IsYielded(run)) << run;
  EXPECT_TRUE(IsYielded(evaluated)) << evaluated;
}

TEST(RunOptionsTest, AHugeValueYieldsBeforeItIsBuilt) {
  auto engine = Native();
  absl::Status evaluated;
  absl::Status run = RunOne(*engine, R"("x" * 50000000 | length)",
                            {.yield_above_built_bytes = 1 << 20}, &evaluated);
  EXPECT_TRUE(IsYielded(run)) << run;
  // Without the yield point it is built (under the 64 MiB bound).
  run = RunOne(*engine, R"("x" * 50000000 | length)", {}, &evaluated);
  EXPECT_TRUE(run.ok()) << run;
  EXPECT_TRUE(evaluated.ok()) << evaluated;
}

// Errors that are not the yield point's stay the evaluation's own.
TEST(RunOptionsTest, OtherErrorsAndCheapEvaluationsDoNotYield) {
  auto engine = Native();
  RunOptions slice{.yield_at = absl::Now() + absl::Seconds(10), .yield_above_built_bytes = 1 << 20};
  absl::Status evaluated;
  EXPECT_TRUE(RunOne(*engine, "[range(10)] | add", slice, &evaluated).ok());
  EXPECT_TRUE(evaluated.ok()) << evaluated;
  EXPECT_TRUE(RunOne(*engine, "def f: 1 + f; f", slice, &evaluated).ok());
  EXPECT_THAT(evaluated.message(), HasSubstr("recursed too deeply"));
  EXPECT_FALSE(IsYielded(evaluated));
  EXPECT_TRUE(RunOne(*engine, R"(error("no"))", slice, &evaluated).ok());
  EXPECT_FALSE(IsYielded(evaluated));
}

// A yield point past the budget leaves the budget's own error.
TEST(RunOptionsTest, TheBudgetStillEndsWhatTheYieldTimeDoesNot) {
  auto engine = NewNativeEngine({.limits = {.budget = absl::Milliseconds(20)}}).value();
  absl::Status evaluated;
  absl::Status run =
      RunOne(*engine, kSpin, {.yield_at = absl::Now() + absl::Seconds(30)}, &evaluated);
  EXPECT_TRUE(run.ok()) << run;
  EXPECT_EQ(evaluated.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(evaluated.message(), HasSubstr("evaluation budget of 20ms"));
  EXPECT_FALSE(IsYielded(evaluated));
}

TEST(YieldingEngineTest, RemembersAYieldWhateverTheWorkMadeOfIt) {
  auto base = Native();
  YieldingEngine slice(*base, {.yield_at = absl::Now() + absl::Milliseconds(5)});
  absl::Status evaluated;
  EXPECT_TRUE(RunOne(slice, "1 + 1", {}, &evaluated).ok());
  EXPECT_FALSE(slice.yielded());
  EXPECT_TRUE(IsYielded(RunOne(slice, kSpin, {}, &evaluated)));
  EXPECT_TRUE(slice.yielded());
  // The base engine itself has no yield point.
  absl::Status run = RunOne(*base, "[limit(1000; repeat(1))] | length", {}, &evaluated);
  EXPECT_TRUE(run.ok()) << run;
}

}  // namespace
}  // namespace wm::expressions
