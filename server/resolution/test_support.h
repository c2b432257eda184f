#ifndef WM_SERVER_RESOLUTION_TEST_SUPPORT_H_
#define WM_SERVER_RESOLUTION_TEST_SUPPORT_H_

// Helpers shared by the resolution tests: one engine per test binary,
// definitions from the conformance data or inline YAML.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "server/common/yaml_json.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/expressions/jq_engine.h"
#include "server/expressions/native_engine.h"
#include "server/resolution/evaluation.h"

namespace wm::resolution::testing {

inline expressions::Engine& TestEngine() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 2}).value().release();
  return *engine;
}

// The daemon's default engine, for the tests that count upstream's frames
// with both.
inline expressions::Engine& NativeTestEngine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

// A test run once per engine the daemon can run (--jq-engine): native, its
// default, and libjq. Instantiate it with
//   INSTANTIATE_TEST_SUITE_P(Engines, X, testing::EngineNames(), testing::EngineTestName);
class EngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  expressions::Engine& engine() {
    return GetParam() == "native" ? NativeTestEngine() : TestEngine();
  }
};

inline auto EngineNames() { return ::testing::Values("native", "libjq"); }

inline std::string EngineTestName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

inline std::shared_ptr<const definitions::CompiledDefinition> CompileYaml(
    const std::string& text, const std::string& source,
    expressions::Engine& engine = TestEngine()) {
  auto docs = ParseYamlDocuments(text);
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok() || docs->empty()) return nullptr;
  auto parsed = definitions::ParseDefinition((*docs)[0], definitions::Origin::kFile, source);
  std::string findings;
  for (const auto& f : parsed.findings) findings += f.ToString() + "\n";
  EXPECT_TRUE(parsed.definition.has_value()) << findings;
  if (!parsed.definition) return nullptr;
  auto compiled = definitions::CompileDefinition(*parsed.definition, engine);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? *compiled : nullptr;
}

// The definition `name` of upstream's catalog in `catalog_dir` (external
// test data under $WM_CONFORMANCE_DIR, never part of our catalog), or null
// after a failure the test is told of.
inline std::shared_ptr<const definitions::CompiledDefinition> Upstream(
    const std::string& catalog_dir, const std::string& name,
    expressions::Engine& engine = TestEngine()) {
  std::string path = catalog_dir + "/" + name + ".yaml";
  auto docs = ReadYamlFile(path);
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok()) return nullptr;
  return CompileYaml((*docs)[0].dump(), path, engine);
}

inline std::shared_ptr<const definitions::CompiledDefinition> Ours(
    const std::string& name, expressions::Engine& engine = TestEngine()) {
  auto docs = ReadYamlFile(std::string(WM_SOURCE_DIR) + "/catalog/" + name + ".yaml");
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok()) return nullptr;
  return CompileYaml((*docs)[0].dump(), name, engine);
}

inline Json Yaml(const std::string& text) { return ParseYamlDocuments(text).value().at(0); }

// Runs fn(Evaluation&) in an engine session.
template <typename Fn>
void WithEvaluation(const definitions::CompiledDefinition& def, Fn fn,
                    expressions::Engine& engine = TestEngine()) {
  absl::Status s = engine.Run([&](expressions::Session& session) {
    Evaluation eval(def, session);
    fn(eval);
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
}

}  // namespace wm::resolution::testing

#endif  // WM_SERVER_RESOLUTION_TEST_SUPPORT_H_
