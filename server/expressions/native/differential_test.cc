// The native engine against gojq itself on a generated corpus: random
// expressions from a grammar over the supported subset, each on random
// documents (nulls, missing keys, numbers at the edges of what both read
// alike, unicode). Outputs must be equal and both engines must fail on the
// same inputs; error texts that differ are counted and shown, not failed
// (docs/divergences.md says where gojq's texts cannot be reproduced).
//
// The corpus is fixed by a seed so that a CI run is reproducible; set
// WM_DIFFERENTIAL_SEED (and WM_DIFFERENTIAL_CASES) to explore others.
// Needs the oracle: WM_GOJQ_ORACLE=$(scripts/build-gojq-oracle).

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/testing/optional_input.h"
#include "server/expressions/native_engine.h"
#include "server/expressions/testing/gojq_oracle.h"

namespace wm::expressions {
namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : random_(seed) {}

  std::string Expression(int depth) {
    if (depth <= 0 || Chance(0.25)) return Pick(kTerminals);
    std::string a = Expression(depth - 1);
    switch (Below(24)) {
      case 0:
        return absl::StrCat(a, " | ", Expression(depth - 1));
      case 1:
        return absl::StrCat(a, ", ", Expression(depth - 1));
      case 2:
        return absl::StrCat("(", a, ") // ", Expression(depth - 1));
      case 3:
        return absl::StrCat("(", a, ") ", Pick(kBinary), " (", Expression(depth - 1), ")");
      case 4:
        return absl::StrCat("(", a, ") ", Pick(kComparisons), " (", Expression(depth - 1), ")");
      case 5:
        return absl::StrCat("(", a, ") ", Chance(0.5) ? "and" : "or", " (", Expression(depth - 1),
                            ")");
      case 6:
        return absl::StrCat("if ", a, " then ", Expression(depth - 1),
                            Chance(0.5) ? absl::StrCat(" else ", Expression(depth - 1)) : "",
                            " end");
      case 7:
        return absl::StrCat("try (", a, ") catch .");
      case 8:
        return absl::StrCat("(", a, ")?");
      case 9:
        return absl::StrCat("[", a, "]");
      case 10:
        return absl::StrCat("{a: (", a, "), \"b c\": (", Expression(depth - 1), ")}");
      case 11:
        return absl::StrCat("(", a, ") as $x | ", Expression(depth - 1), " | [., $x]");
      case 12:
        return absl::StrCat("reduce (", a, ") as $x (0; . + 1)");
      case 13:
        return absl::StrCat("[foreach (", a, ") as $x (null; [$x, .]; length)]");
      case 14:
        return absl::StrCat("[limit(", Below(3), "; ", a, ")]");
      case 15:
        return absl::StrCat(Chance(0.5) ? "first" : "last", "(", a, ")");
      case 16:
        return absl::StrCat("select(", a, ")");
      case 17:
        return absl::StrCat("\"<\\(", a, ")>\"");
      case 18:
        return absl::StrCat("(", a, ") | ", Pick(kFilters));
      case 19:
        return absl::StrCat("[(", a, ") | ", Pick(kFilters), "]");
      case 20:
        return absl::StrCat("any(", a, "; .)");
      case 21:
        return absl::StrCat("[path(", Pick(kPaths), ")]");
      case 22:
        return absl::StrCat("(", a, ") | tostring");
      default:
        return absl::StrCat("-(", a, ")");
    }
  }

  Json Document(int depth) {
    if (depth <= 0 || Chance(0.3)) return Scalar();
    if (Chance(0.5)) {
      Json array = Json::array();
      for (int i = Below(4); i > 0; --i) array.push_back(Document(depth - 1));
      return array;
    }
    Json object = Json::object();
    for (const char* key : {"a", "b", "c d", "é"}) {
      if (Chance(0.6)) object[key] = Document(depth - 1);
    }
    return object;
  }

 private:
  static constexpr const char* kTerminals[] = {
      ".",     ".a",   ".b",     ".[0]",  ".[-1]",      ".[]?", "..",   ".a.b", ".[\"c d\"]",
      ".[1:]", "null", "true",   "false", "0",          "1",    "-1",   "2.5",  "1e3",
      "\"a\"", "\"\"", "\"é☃\"", "\"1\"", "[1, \"a\"]", "{}",   "empty"};
  static constexpr const char* kBinary[] = {"+", "-", "*", "/", "%"};
  static constexpr const char* kComparisons[] = {"==", "!=", "<", "<=", ">", ">="};
  static constexpr const char* kFilters[] = {"length",
                                             "type",
                                             "keys",
                                             "not",
                                             "tostring",
                                             "tojson",
                                             "tonumber",
                                             "ascii_downcase",
                                             "has(\"a\")",
                                             "to_entries",
                                             "from_entries",
                                             "add",
                                             "sort",
                                             "unique",
                                             "min",
                                             "max",
                                             "flatten",
                                             "reverse",
                                             "map(. + 1)",
                                             "map_values(.)",
                                             "split(\",\")",
                                             "join(\",\")",
                                             "ltrimstr(\"a\")",
                                             "startswith(\"a\")",
                                             "test(\"a\")",
                                             "[paths]",
                                             "getpath([\"a\"])",
                                             "del(.a)",
                                             "with_entries(.)",
                                             "contains(\"a\")",
                                             "inside([1])",
                                             "tojson | fromjson",
                                             "splits(\",\")",
                                             "group_by(.)",
                                             "sort_by(type)",
                                             "any",
                                             "all",
                                             "isempty(.[]?)",
                                             "values",
                                             "strings",
                                             "numbers",
                                             "[.[]?] | length",
                                             "indices(1)",
                                             "abs",
                                             "toarray",
                                             "trim",
                                             "@base64",
                                             "@json",
                                             "@text",
                                             "floor",
                                             "sqrt",
                                             "ascii",
                                             "implode",
                                             "explode",
                                             "utf8bytelength",
                                             "to_entries | map(.key)",
                                             "[..] | length",
                                             "[.[]?] | first",
                                             "[..] | last",
                                             "[.[]? | .a] | any",
                                             "[.[]?] | all",
                                             "[..] | min",
                                             "[.[]? | .[0]?] | max",
                                             "[..] | add",
                                             "[.[]? | .a?] | add // 0",
                                             ".a = 1",
                                             ".a |= . + 1",
                                             ".[]? += 1",
                                             ".b //= 2"};
  static constexpr const char* kPaths[] = {".a",
                                           ".a.b",
                                           ".[0]",
                                           ".[]?",
                                           "..",
                                           ".a // .b",
                                           "if .a then .a else .b end",
                                           "select(.a)",
                                           "first(.a, .b)",
                                           "getpath([\"a\", 0])"};

  template <size_t N>
  std::string Pick(const char* const (&choices)[N]) {
    return choices[Below(N)];
  }
  size_t Below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(random_); }

  Json Scalar() {
    switch (Below(12)) {
      case 0:
        return nullptr;
      case 1:
        return true;
      case 2:
        return false;
      case 3:
        // Not 0: upstream's inputs are float64, so -(.x) of a 0 there is
        // -0 (docs/divergences.md); ours are integers.
        return 7;
      case 4:
        return -3;
      case 5:
        return 2.5;
      case 6:
        // Integers both read alike: upstream's inputs are float64, exact
        // to 2^53.
        return int64_t{9007199254740991};
      case 7:
        return 1e-7;
      case 8:
        return "";
      case 9:
        return "a,b";
      case 10:
        return "é☃ x";
      default:
        return "1";
    }
  }

  std::mt19937_64 random_;
};

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

TEST(DifferentialTest, NativeEngineMeansWhatGojqMeansOnAGeneratedCorpus) {
  std::optional<std::string> oracle_path = testing::GojqOraclePathFromEnv();
  if (!oracle_path) {
    WM_SKIP_OR_FAIL_IN_CI(::wm::testing::MissingInput(
        testing::kGojqOracleEnv, "", "the gojq oracle, built by scripts/build-gojq-oracle"));
  }
  auto oracle = testing::GojqOracle::Start(*oracle_path);
  ASSERT_TRUE(oracle.ok()) << oracle.status();
  auto engine = NewNativeEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();

  uint64_t seed = EnvOr("WM_DIFFERENTIAL_SEED", 20261202);
  size_t cases = EnvOr("WM_DIFFERENTIAL_CASES", 3000);
  Generator generator(seed);
  size_t evaluations = 0, compile_errors = 0, both_failed = 0, text_differences = 0;
  std::vector<std::string> failures;
  for (size_t c = 0; c < cases; ++c) {
    std::string expression = generator.Expression(3);
    std::vector<Engine::CompileError> compile_errors_of_source;
    auto program = (*engine)->Compile({expression}, &compile_errors_of_source);
    std::vector<Json> documents = {generator.Document(3), generator.Document(3)};
    for (const Json& document : documents) {
      auto gojq = (*oracle)->Evaluate(expression, document);
      ASSERT_TRUE(gojq.ok()) << gojq.status();
      ++evaluations;
      // A compile error as gojq words it: the source's own message.
      absl::StatusOr<std::vector<Json>> native = std::vector<Json>();
      if (!program.ok()) {
        native = compile_errors_of_source.empty()
                     ? program.status()
                     : absl::InvalidArgumentError(compile_errors_of_source[0].message);
      }
      if (program.ok()) {
        ASSERT_TRUE((*engine)
                        ->Run([&](Session& session) {
                          native = session.Evaluate(**program, 0, session.Load(document));
                          return absl::OkStatus();
                        })
                        .ok());
      } else {
        ++compile_errors;
      }
      bool same =
          native.ok() && gojq->ok() ? *native == gojq->outputs : !native.ok() && !gojq->ok();
      if (!same) {
        failures.push_back(absl::StrCat(
            expression, "\n  on ", document.dump(), "\n  native: ",
            native.ok() ? Json(*native).dump() : absl::StrCat("error: ", native.status().message()),
            "\n  gojq:   ",
            gojq->ok() ? Json(gojq->outputs).dump()
                       : absl::StrCat(gojq->error_stage, " error: ", gojq->error)));
        continue;
      }
      if (!native.ok()) {
        ++both_failed;
        if (native.status().message() != gojq->error) {
          if (++text_differences <= 10) {
            std::cout << "error text differs: " << expression << "\n  on " << document.dump()
                      << "\n  native: " << native.status().message()
                      << "\n  gojq:   " << gojq->error << "\n";
          }
        }
      }
    }
  }
  std::cout << "generated corpus (seed " << seed << "): " << cases << " expressions, "
            << evaluations << " evaluations, " << failures.size()
            << " differences from gojq; both failed on " << both_failed << " (" << text_differences
            << " with different texts); " << compile_errors << " did not compile natively\n";
  for (size_t i = 0; i < failures.size() && i < 30; ++i) ADD_FAILURE() << failures[i];
}

}  // namespace
}  // namespace wm::expressions
