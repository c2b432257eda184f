#include "server/expressions/jq_engine.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/file.h"
#include "server/common/process_memory.h"
#include "server/common/testing/process_memory.h"

namespace wm::expressions {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Sanitizer builds run workers without an address-space limit.
constexpr bool kWorkersAreMemoryLimited = !wm::testing::kSanitizedBuild;

// Compiles `source` alone and evaluates it on `input`.
absl::StatusOr<std::vector<Json>> EvalWith(Engine& engine, const std::string& source,
                                           const Json& input) {
  auto program = engine.Compile({source});
  if (!program.ok()) return program.status();
  absl::StatusOr<std::vector<Json>> result;
  absl::Status status = engine.Run([&](Session& session) {
    result = session.Evaluate(**program, 0, session.Load(input));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return result;
}

class JqEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    JqEngineOptions options;
    options.workers = 2;
    options.limits.budget = absl::Milliseconds(1500);
    options.memory_limit_bytes = int64_t{1} << 30;
    auto engine = NewJqEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  absl::StatusOr<std::vector<Json>> Eval(const std::string& source, const Json& input) {
    return EvalWith(*engine_, source, input);
  }

  std::unique_ptr<Engine> engine_;
};

TEST_F(JqEngineTest, EvaluatesAllOutputs) {
  auto r = Eval(".a[] | .x", Json::parse(R"({"a":[{"x":1},{"x":"two"},{}]})"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(*r, ElementsAre(Json(1), Json("two"), Json(nullptr)));
}

TEST_F(JqEngineTest, ProgramHoldsManyExpressions) {
  std::vector<std::string> sources;
  for (int i = 0; i < 37; ++i) sources.push_back(". + " + std::to_string(i));
  auto program = engine_->Compile(sources);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_TRUE(engine_
                  ->Run([&](Session& s) {
                    auto in = s.Load(100);
                    for (int i = 0; i < 37; ++i) {
                      auto r = s.Evaluate(**program, i, in);
                      EXPECT_TRUE(r.ok());
                      EXPECT_THAT(*r, ElementsAre(Json(100 + i)));
                    }
                    return absl::OkStatus();
                  })
                  .ok());
}

TEST_F(JqEngineTest, ObjectIterationIsSortedLikeGojq) {
  auto r = Eval("keys_unsorted", Json::parse(R"({"b":1,"a":2,"c":3})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0], Json::parse(R"(["a","b","c"])"));
}

TEST_F(JqEngineTest, ReportsPerSourceCompileErrors) {
  std::vector<Engine::CompileError> errors;
  auto program = engine_->Compile({".a", ".b |", "if then"}, &errors);
  EXPECT_FALSE(program.ok());
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].index, 1u);
  EXPECT_EQ(errors[1].index, 2u);
  EXPECT_THAT(errors[0].message, HasSubstr("syntax error"));
}

TEST_F(JqEngineTest, GojqPolyfills) {
  EXPECT_THAT(*Eval("abs", -3), ElementsAre(Json(3)));
  EXPECT_THAT(*Eval("toarray", 1), ElementsAre(Json::parse("[1]")));
  EXPECT_THAT(*Eval("toarray", Json::parse("[1]")), ElementsAre(Json::parse("[1]")));
  EXPECT_THAT(*Eval("pick(.a.b)", Json::parse(R"({"a":{"b":1,"c":2},"d":3})")),
              ElementsAre(Json::parse(R"({"a":{"b":1}})")));
  EXPECT_THAT(*Eval("trim, ltrim, rtrim", "  x  "), ElementsAre("x", "x  ", "  x"));
  EXPECT_THAT(*Eval("trimstr(\"a\")", "abca"), ElementsAre("bc"));
  EXPECT_THAT(*Eval("[limit(0; 1, 2)]", nullptr), ElementsAre(Json::array()));
  EXPECT_THAT(*Eval("[limit(1; 1, 2)]", nullptr), ElementsAre(Json::parse("[1]")));
  EXPECT_THAT(*Eval("if . > 1 then \"big\" end", 5), ElementsAre("big"));
  EXPECT_THAT(*Eval("if . > 1 then \"big\" end", 0), ElementsAre(0));
  EXPECT_THAT(*Eval("add(.[] | .x)", Json::parse(R"([{"x":1},{"x":2}])")), ElementsAre(3));
  // jq 1.6 lets `?` swallow the break these use; ours must not.
  EXPECT_THAT(*Eval("[first((\"1\", \"2\") | tonumber?)]", nullptr),
              ElementsAre(Json::parse("[1]")));
  EXPECT_THAT(*Eval("[limit(2; (\"1\", \"x\", \"2\", \"3\") | tonumber?)]", nullptr),
              ElementsAre(Json::parse("[1,2]")));
  EXPECT_THAT(*Eval("[first(empty)], isempty(empty), isempty(1, error(\"x\"))", nullptr),
              ElementsAre(Json::array(), true, false));
  EXPECT_THAT(*Eval("any(.[]; . > 2), all(.[]; . > 0), any, all, any(1, error(\"e\"); . == 1)",
                    Json::parse("[1, 3]")),
              ElementsAre(true, true, true, true, true));
  auto early = Eval("[limit(2; 1, error(\"early\"), 3)]", nullptr);
  ASSERT_FALSE(early.ok());
  EXPECT_THAT(early.status().message(), HasSubstr("early"));
}

TEST_F(JqEngineTest, FirstErrorEndsEvaluation) {
  auto r = Eval(".[] | if . == 2 then error(\"boom\") else . end", Json::parse("[1,2,3]"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("boom"));
  r = Eval(".a[]", Json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("Cannot iterate over null"));
}

TEST_F(JqEngineTest, OutputCap) {
  auto r = Eval("[.[]] | .[]", Json(std::vector<int>(999, 1)));
  EXPECT_TRUE(r.ok());
  r = Eval(".[]", Json(std::vector<int>(1000, 1)));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("exceed the allowed number 1000"));
}

// Hostile expressions end with a clear error within the budget, and the
// engine keeps working afterwards.
TEST_F(JqEngineTest, HostileExpressionsAreBounded) {
  for (const char* hostile :
       {"[range(1e9)] | length", "def f: f; f", "def f: 1 + f; f", "last(range(1e12))",
        "def r: ., r; r", "[limit(1e9; def r: ., r; r)] | length", "\"x\" * 1e9"}) {
    absl::Time start = absl::Now();
    auto r = Eval(hostile, nullptr);
    absl::Duration took = absl::Now() - start;
    ASSERT_FALSE(r.ok()) << hostile;
    EXPECT_TRUE(r.status().code() == absl::StatusCode::kDeadlineExceeded ||
                r.status().code() == absl::StatusCode::kResourceExhausted ||
                r.status().code() == absl::StatusCode::kInvalidArgument)
        << hostile << ": " << r.status();
    EXPECT_LT(took, absl::Seconds(10)) << hostile;
    EXPECT_THAT(*Eval(".x", Json::parse(R"({"x":7})")), ElementsAre(7)) << "after " << hostile;
  }
}

// Error messages end up in gRPC statuses (trailers, 8 KiB by default).
TEST_F(JqEngineTest, LongErrorMessagesAreCut) {
  auto r = Eval("error(\"x\" * 100000)", nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LE(r.status().message().size(), 4096u);
  EXPECT_TRUE(absl::EndsWith(r.status().message(), "..."))
      << r.status().message().substr(r.status().message().size() - 20);
}

TEST_F(JqEngineTest, WorkersSeeNoEnvironment) {
  EXPECT_THAT(*Eval("env | length", nullptr), ElementsAre(0));
}

// The nice value of each child process of this one (the workers).
std::vector<int> ChildNiceValues() {
  std::vector<int> nice;
  std::ifstream children("/proc/self/task/" + std::to_string(getpid()) + "/children");
  for (int pid; children >> pid;) {
    std::string text = ReadFileToString("/proc/" + std::to_string(pid) + "/stat").value_or("");
    // Fields after "(comm) ": state is field 3, nice is field 19.
    std::istringstream rest(text.substr(text.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19 && rest >> field; ++i) {
      if (i == 19) nice.push_back(std::stoi(field));
    }
  }
  return nice;
}

TEST_F(JqEngineTest, WorkersRunBelowTheDaemonsPriority) {
  // A session makes sure a worker has started.
  EXPECT_THAT(*Eval(".x", Json::parse(R"({"x": 1})")), ElementsAre(1));
  std::vector<int> nice = ChildNiceValues();
  ASSERT_FALSE(nice.empty());
  for (int n : nice) EXPECT_GE(n, getpriority(PRIO_PROCESS, 0) + 10);
}

// Many threads share one engine; every answer must be the right one.
TEST_F(JqEngineTest, ConcurrentStress) {
  auto program = engine_->Compile({".n * 2", "[.items[] | select(. % 2 == 0)] | length"});
  ASSERT_TRUE(program.ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        int n = t * 1000 + i;
        Json doc = {{"n", n}, {"items", std::vector<int>(static_cast<size_t>(i % 10), 2)}};
        absl::Status s = engine_->Run([&](Session& session) {
          auto in = session.Load(doc);
          auto a = session.Evaluate(**program, 0, in);
          auto b = session.Evaluate(**program, 1, in);
          if (!a.ok() || !b.ok() || (*a)[0] != 2 * n || (*b)[0] != i % 10) ++failures;
          return absl::OkStatus();
        });
        if (!s.ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(PlanJqPoolTest, DividesTheLimitAmongTheWorkers) {
  JqEngineOptions options;  // 512 MiB
  // One per CPU, at least 2...
  auto plan = PlanJqPool(options, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->workers, 2);
  EXPECT_EQ(plan->worker_memory_limit_bytes, int64_t{256} << 20);
  // ...but no more than leave each 256 MiB: a 64-CPU node gets 2 of 512 MiB,
  // 4 of 1 GiB.
  plan = PlanJqPool(options, 64);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->workers, 2);
  EXPECT_EQ(plan->worker_memory_limit_bytes, int64_t{256} << 20);
  options.memory_limit_bytes = int64_t{1} << 30;
  plan = PlanJqPool(options, 64);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->workers, 4);
  EXPECT_EQ(plan->worker_memory_limit_bytes, int64_t{256} << 20);
  plan = PlanJqPool(options, 3);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->workers, 3);
  options.memory_limit_bytes = kDefaultJqMemoryLimitBytes;
  // A count given explicitly is kept while each share is at least 64 MiB.
  options.workers = 8;
  plan = PlanJqPool(options, 2);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->workers, 8);
  EXPECT_EQ(plan->worker_memory_limit_bytes, int64_t{64} << 20);
  options.workers = 9;
  plan = PlanJqPool(options, 2);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(),
            "a jq memory limit of 512 MiB gives each of 9 jq workers 56 MiB, less than the 64 "
            "MiB a worker needs: raise the limit or use fewer workers");
  // A small limit gets two workers of at least 64 MiB, whatever the CPUs.
  options.workers = 0;
  options.memory_limit_bytes = int64_t{128} << 20;
  plan = PlanJqPool(options, 16);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->workers, 2);
  options.memory_limit_bytes = int64_t{100} << 20;
  EXPECT_FALSE(PlanJqPool(options, 16).ok());
}

// The engine's memory limit holds for all its workers together: runaway
// growth in every worker at once ends each at its share, with a clear
// error, and the engine goes on serving with fresh workers.
TEST(JqMemoryLimitTest, RunawayGrowthEndsAtEachWorkersShare) {
  if (!kWorkersAreMemoryLimited) GTEST_SKIP() << "sanitizer builds run workers unlimited";
  JqEngineOptions options;
  options.workers = 2;
  options.memory_limit_bytes = int64_t{256} << 20;
  // Memory, not time, must end these: 128 MiB fill in well under a second.
  options.limits.budget = absl::Seconds(20);
  auto engine = NewJqEngine(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto program = (*engine)->Compile({"def f: 1 + f; f", ".x"});
  ASSERT_TRUE(program.ok()) << program.status();
  // Both workers busy at once, each with its own runaway evaluation.
  std::vector<absl::Status> results(2);
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      absl::Status run = (*engine)->Run([&](Session& session) {
        ++started;
        while (started.load() < 2) std::this_thread::yield();
        results[t] = session.Evaluate(**program, 0, session.Load(nullptr)).status();
        return absl::OkStatus();
      });
      if (!run.ok()) results[t] = run;
    });
  }
  for (auto& th : threads) th.join();
  for (const absl::Status& s : results) {
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("expression exceeded its memory limit of 128 MiB"));
  }
  for (int i = 0; i < 2; ++i) {
    absl::Status after = (*engine)->Run([&](Session& session) {
      auto r = session.Evaluate(**program, 1, session.Load(Json::parse(R"({"x":7})")));
      if (!r.ok()) return r.status();
      EXPECT_THAT(*r, ElementsAre(7));
      return absl::OkStatus();
    });
    EXPECT_TRUE(after.ok()) << after;
  }
}

// An output past max_output_bytes is refused in the worker: the daemon side
// never receives (nor holds) it.
TEST(JqMemoryLimitTest, LargeOutputNeverReachesTheDaemon) {
  JqEngineOptions options;
  options.workers = 1;
  options.limits.budget = absl::Seconds(60);  // building 50 MB in jq is slow
  auto engine = NewJqEngine(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_TRUE(EvalWith(**engine, ".", nullptr).ok());  // worker started
  const int64_t before = static_cast<int64_t>(ResidentBytes());
  auto r = EvalWith(**engine, "\"x\" * 50000000", nullptr);
  int64_t growth = static_cast<int64_t>(ResidentBytes()) - before;
  ASSERT_FALSE(r.ok()) << "an output of " << (*r)[0].get_ref<const std::string&>().size()
                       << " bytes came back";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("exceed the allowed size of 4194304 bytes"));
  EXPECT_LT(growth, int64_t{16} << 20);
  EXPECT_THAT(*EvalWith(**engine, ".x", Json::parse(R"({"x":7})")), ElementsAre(7));
}

}  // namespace
}  // namespace wm::expressions
