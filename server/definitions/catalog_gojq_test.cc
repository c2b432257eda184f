// Holds our catalog to gojq, the engine of upstream Workload Map (and so of
// KAI Scheduler and upstream's CLI): every expression of every definition,
// as CompileDefinition hands it to an engine, evaluated on the documents of
// that definition's cases (catalog/cases/<name>/: the object, its children
// and pods) with our libjq engine and with gojq (tools/gojq-oracle), must
// give the same outputs (compared as JSON values, numbers numerically) or
// fail in both. With $WM_CONFORMANCE_DIR, the same runs over the recorded
// frames, and over upstream's two catalogs, where a difference is not ours
// to fix: those are counted, printed and recorded in docs/divergences.md.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/testing/optional_input.h"
#include "server/common/yaml_json.h"
#include "server/definitions/testing/definition_expressions.h"
#include "server/expressions/engine.h"
#include "server/expressions/jq_engine.h"
#include "server/expressions/native_engine.h"
#include "server/expressions/testing/gojq_oracle.h"

namespace wm::definitions {
namespace {

namespace fs = std::filesystem;
using expressions::testing::GojqOracle;
using expressions::testing::GojqResult;
using testing::DefinitionExpressions;

// One document an expression is evaluated on, and where it came from.
struct Input {
  std::string label;
  Json document;
};

struct Difference {
  std::string definition;
  std::string field;
  std::string expression;
  std::string input;
  std::string jq;
  std::string gojq;
};

struct Comparison {
  size_t evaluations = 0;
  std::vector<Difference> differences;  // jq 1.6 vs gojq
  // The native engine vs gojq: outcomes (outputs, or failing at all), and
  // error texts when both fail.
  std::vector<Difference> native_differences;
  std::vector<Difference> native_message_differences;
};

// The documents of the cases of definition `name` (none when it has none).
std::vector<Input> CaseInputs(const std::string& name) {
  fs::path dir = fs::path(WM_SOURCE_DIR) / "catalog" / "cases" / name;
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Input> inputs;
  for (const fs::path& file : files) {
    auto docs = ReadYamlFile(file.string());
    EXPECT_TRUE(docs.ok() && !docs->empty()) << file << ": " << docs.status();
    if (!docs.ok() || docs->empty()) continue;
    const Json& c = docs->front();
    std::string label = fs::relative(file, WM_SOURCE_DIR).string();
    if (c.contains("object")) inputs.push_back({label + " object", c["object"]});
    for (const char* list : {"children", "pods"}) {
      const Json& documents = c.value(list, Json::array());
      for (size_t i = 0; i < documents.size(); ++i) {
        inputs.push_back({absl::StrCat(label, " ", list, "[", i, "]"), documents[i]});
      }
    }
  }
  return inputs;
}

// The objects of every STATE frame upstream recorded, by the name of the
// definition the recording was made with.
// REQUIRES: `recorded_dir` is a directory.
std::map<std::string, std::vector<Input>> RecordedInputs(const std::string& recorded_dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(recorded_dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, std::vector<Input>> by_definition;
  for (const fs::path& file : files) {
    auto docs = ReadYamlFile(file.string());
    EXPECT_TRUE(docs.ok() && !docs->empty()) << file << ": " << docs.status();
    if (!docs.ok() || docs->empty()) continue;
    const Json& recording = docs->front();
    std::string label = fs::relative(file, recorded_dir).string();
    int index = 0;
    for (const Json& event : recording.value("events", Json::array())) {
      ++index;
      if (event.value("kind", "") != "STATE") continue;
      by_definition[recording.value("kartaName", "")].push_back(
          {absl::StrCat("recorded/", label, " event ", index), event["object"]});
    }
  }
  return by_definition;
}

std::string Summary(const std::vector<Json>& outputs) {
  std::vector<std::string> texts;
  for (const Json& output : outputs) texts.push_back(output.dump());
  std::string summary = absl::StrCat("[", absl::StrJoin(texts, ", "), "]");
  constexpr size_t kMaxSummary = 300;
  if (summary.size() > kMaxSummary) summary = absl::StrCat(summary.substr(0, kMaxSummary), "...");
  return summary;
}

std::string Summary(const absl::StatusOr<std::vector<Json>>& jq) {
  return jq.ok() ? Summary(*jq) : absl::StrCat("error: ", jq.status().message());
}

std::string Summary(const GojqResult& gojq) {
  return gojq.ok() ? Summary(gojq.outputs) : absl::StrCat(gojq.error_stage, " error: ", gojq.error);
}

// Equal outputs (nlohmann compares numbers by value across integer and
// floating types), or an error from both whatever its text.
bool SameResult(const absl::StatusOr<std::vector<Json>>& jq, const GojqResult& gojq) {
  if (!jq.ok() || !gojq.ok()) return !jq.ok() && !gojq.ok();
  return *jq == gojq.outputs;
}

// A definition's sources compiled by libjq; a source that does not compile
// is left out and answers its compile error.
struct JqProgram {
  std::shared_ptr<const expressions::Program> program;
  std::vector<int> index;  // per source: its index in `program`, or -1
  std::map<size_t, std::string> compile_errors;
};

absl::StatusOr<JqProgram> CompileWithJq(const std::vector<std::string>& sources,
                                        expressions::Engine& jq) {
  JqProgram compiled;
  std::vector<expressions::Engine::CompileError> errors;
  auto program = jq.Compile(sources, &errors);
  if (!program.ok() && errors.empty()) return program.status();
  for (const auto& e : errors) compiled.compile_errors[e.index] = e.message;
  std::vector<std::string> compilable;
  for (size_t i = 0; i < sources.size(); ++i) {
    bool failed = compiled.compile_errors.contains(i);
    compiled.index.push_back(failed ? -1 : static_cast<int>(compilable.size()));
    if (!failed) compilable.push_back(sources[i]);
  }
  if (!program.ok()) program = jq.Compile(compilable);
  if (!program.ok()) return program.status();
  compiled.program = *std::move(program);
  return compiled;
}

// Evaluates every source of `definition` on every input with the three
// engines: libjq, the native one and gojq.
absl::Status Compare(const DefinitionExpressions& definition, const std::vector<Input>& inputs,
                     expressions::Engine& jq, expressions::Engine& native, GojqOracle& gojq,
                     Comparison& comparison) {
  if (inputs.empty()) return absl::OkStatus();
  absl::StatusOr<JqProgram> compiled = CompileWithJq(definition.sources, jq);
  if (!compiled.ok()) return compiled.status();
  absl::StatusOr<JqProgram> native_compiled = CompileWithJq(definition.sources, native);
  if (!native_compiled.ok()) return native_compiled.status();
  return jq.Run([&](expressions::Session& session) -> absl::Status {
    return native.Run([&](expressions::Session& native_session) -> absl::Status {
      for (const Input& input : inputs) {
        expressions::Session::InputId id = session.Load(input.document);
        expressions::Session::InputId native_id = native_session.Load(input.document);
        for (size_t i = 0; i < definition.sources.size(); ++i) {
          absl::StatusOr<std::vector<Json>> jq_result =
              compiled->index[i] < 0 ? absl::InvalidArgumentError(compiled->compile_errors[i])
                                     : session.Evaluate(*compiled->program, compiled->index[i], id);
          absl::StatusOr<std::vector<Json>> native_result =
              native_compiled->index[i] < 0
                  ? absl::InvalidArgumentError(native_compiled->compile_errors[i])
                  : native_session.Evaluate(*native_compiled->program, native_compiled->index[i],
                                            native_id);
          absl::StatusOr<GojqResult> gojq_result =
              gojq.Evaluate(definition.sources[i], input.document);
          if (!gojq_result.ok()) return gojq_result.status();
          ++comparison.evaluations;
          Difference difference{definition.name, definition.field_paths[i], definition.sources[i],
                                input.label,     Summary(jq_result),        Summary(*gojq_result)};
          if (!SameResult(native_result, *gojq_result)) {
            Difference d = difference;
            d.jq = Summary(native_result);
            comparison.native_differences.push_back(std::move(d));
          } else if (!native_result.ok() &&
                     native_result.status().message() != gojq_result->error) {
            Difference d = difference;
            d.jq = Summary(native_result);
            comparison.native_message_differences.push_back(std::move(d));
          }
          if (SameResult(jq_result, *gojq_result)) continue;
          comparison.differences.push_back(std::move(difference));
        }
      }
      return absl::OkStatus();
    });
  });
}

std::string Describe(const Difference& d) {
  return absl::StrCat(d.definition, " ", d.field, " on ", d.input, "\n  expression: ", d.expression,
                      "\n  jq 1.6: ", d.jq, "\n  gojq:   ", d.gojq);
}

void Report(const std::string& what, const Comparison& comparison) {
  std::cout << what << ": " << comparison.evaluations << " evaluations, "
            << comparison.differences.size() << " differences between jq 1.6 and gojq, "
            << comparison.native_differences.size() << " between the native engine and gojq (and "
            << comparison.native_message_differences.size()
            << " where both fail with different texts)\n";
  for (const Difference& d : comparison.native_message_differences) {
    std::cout << "error text differs: " << Describe(d) << "\n";
  }
}

// The native engine must mean exactly what gojq means, on any catalog.
void ExpectNativeMatchesGojq(const Comparison& comparison) {
  for (const Difference& d : comparison.native_differences) {
    ADD_FAILURE() << "native engine vs gojq: " << Describe(d);
  }
}

// Starts both engines, or skips (fails in CI) without the oracle.
class CatalogGojqTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<std::string> path = expressions::testing::GojqOraclePathFromEnv();
    if (!path) {
      WM_SKIP_OR_FAIL_IN_CI(
          ::wm::testing::MissingInput(expressions::testing::kGojqOracleEnv, "",
                                      "the gojq oracle, built by scripts/build-gojq-oracle"));
    }
    auto oracle = GojqOracle::Start(*path);
    ASSERT_TRUE(oracle.ok()) << oracle.status();
    gojq_ = *std::move(oracle);
    // One worker: the comparison is sequential.
    auto jq = expressions::NewJqEngine({.workers = 1});
    ASSERT_TRUE(jq.ok()) << jq.status();
    jq_ = *std::move(jq);
    auto native = expressions::NewNativeEngine();
    ASSERT_TRUE(native.ok()) << native.status();
    native_ = *std::move(native);
  }

  // Compares every definition of `dir` on the inputs `inputs_of` gives for
  // its name.
  template <typename InputsOf>
  Comparison CompareCatalog(const std::string& dir, InputsOf inputs_of) {
    Comparison comparison;
    auto definitions = testing::ExpressionsOfDefinitionsIn(dir);
    EXPECT_TRUE(definitions.ok()) << definitions.status();
    if (!definitions.ok()) return comparison;
    for (const DefinitionExpressions& definition : *definitions) {
      absl::Status compared =
          Compare(definition, inputs_of(definition.name), *jq_, *native_, *gojq_, comparison);
      EXPECT_TRUE(compared.ok()) << definition.file << ": " << compared;
    }
    return comparison;
  }

  std::unique_ptr<expressions::Engine> jq_;
  std::unique_ptr<expressions::Engine> native_;
  std::unique_ptr<GojqOracle> gojq_;
};

std::string CatalogDir() { return std::string(WM_SOURCE_DIR) + "/catalog"; }

TEST_F(CatalogGojqTest, OurCatalogMeansTheSameToGojqOnItsCases) {
  Comparison comparison = CompareCatalog(CatalogDir(), CaseInputs);
  Report("our catalog on its cases", comparison);
  EXPECT_GT(comparison.evaluations, 10000u);
  for (const Difference& d : comparison.differences) ADD_FAILURE() << Describe(d);
  ExpectNativeMatchesGojq(comparison);
}

TEST_F(CatalogGojqTest, OurCatalogMeansTheSameToGojqOnRecordedFrames) {
  WM_REQUIRE_CONFORMANCE_DIR(recorded_dir, "recorded", "upstream's recorded operator frames");
  std::map<std::string, std::vector<Input>> recorded = RecordedInputs(recorded_dir);
  Comparison comparison =
      CompareCatalog(CatalogDir(), [&](const std::string& name) { return recorded[name]; });
  Report("our catalog on the recorded frames", comparison);
  EXPECT_GT(comparison.evaluations, 1000u);
  for (const Difference& d : comparison.differences) ADD_FAILURE() << Describe(d);
  ExpectNativeMatchesGojq(comparison);
}

class UpstreamCatalogGojqTest : public CatalogGojqTest,
                                public ::testing::WithParamInterface<std::string> {};

// Upstream's definitions on our cases of the same name and on the recorded
// frames: differences are upstream's, so they are listed, not failed.
TEST_P(UpstreamCatalogGojqTest, DifferencesAreCounted) {
  WM_REQUIRE_CONFORMANCE_DIR(dir, GetParam(), "an upstream catalog");
  WM_REQUIRE_CONFORMANCE_DIR(recorded_dir, "recorded", "upstream's recorded operator frames");
  std::map<std::string, std::vector<Input>> recorded = RecordedInputs(recorded_dir);
  Comparison comparison = CompareCatalog(dir, [&](const std::string& name) {
    std::vector<Input> inputs = CaseInputs(name);
    const std::vector<Input>& frames = recorded[name];
    inputs.insert(inputs.end(), frames.begin(), frames.end());
    return inputs;
  });
  Report(GetParam() + " on our cases and the recorded frames", comparison);
  EXPECT_GT(comparison.evaluations, 1000u);
  for (const Difference& d : comparison.differences)
    std::cout << "differs: " << Describe(d) << "\n";
  ExpectNativeMatchesGojq(comparison);
}

INSTANTIATE_TEST_SUITE_P(Conformance, UpstreamCatalogGojqTest,
                         ::testing::Values("upstream-catalog", "upstream-catalog-older"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace wm::definitions
