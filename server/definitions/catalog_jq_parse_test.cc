// Every jq expression of our catalog, and of upstream's catalogs when
// ../shared/conformance is present, parses with the native parser
// (server/expressions/native) and survives a print/parse round trip. The
// expressions are taken exactly as CompileDefinition hands them to an
// engine (with its `path(...)` and `== value` wrappings), through an engine
// that only records them.

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/expressions/engine.h"
#include "server/expressions/native/parser.h"
#include "server/expressions/native/test_support.h"

namespace wm::definitions {
namespace {

class RecordedProgram : public expressions::Program {
 public:
  explicit RecordedProgram(std::vector<std::string> sources) : sources_(std::move(sources)) {}
  size_t size() const override { return sources_.size(); }
  const std::string& source(size_t index) const override { return sources_[index]; }

 private:
  std::vector<std::string> sources_;
};

// Compiles by remembering the sources; evaluates nothing.
class RecordingEngine : public expressions::Engine {
 public:
  absl::StatusOr<std::shared_ptr<const expressions::Program>> Compile(
      const std::vector<std::string>& sources, std::vector<CompileError>*) override {
    return std::make_shared<const RecordedProgram>(sources);
  }
  absl::Status Run(absl::FunctionRef<absl::Status(expressions::Session&)>) override {
    return absl::UnimplementedError("the recording engine evaluates nothing");
  }
  const expressions::EvalLimits& limits() const override { return limits_; }

 private:
  expressions::EvalLimits limits_;
};

// Parses every expression of every definition in the *.yaml files of
// `dir` (not below it: catalog/ keeps test cases and schemas in
// subdirectories); returns how many there were.
size_t ExpectEveryExpressionParses(const std::string& dir) {
  std::vector<ParsedDefinition> definitions;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    auto parsed = LoadDefinitionFiles(entry.path().string(), Origin::kCatalog);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) continue;
    for (ParsedDefinition& p : *parsed) definitions.push_back(std::move(p));
  }
  EXPECT_FALSE(definitions.empty()) << dir;
  RecordingEngine engine;
  size_t count = 0;
  for (const ParsedDefinition& p : definitions) {
    if (!p.definition) {
      ADD_FAILURE() << p.source << " does not parse as a definition";
      continue;
    }
    auto compiled = CompileDefinition(*p.definition, engine);
    if (!compiled.ok()) {
      ADD_FAILURE() << p.source << ": " << compiled.status();
      continue;
    }
    const expressions::Program& program = *(*compiled)->program;
    for (size_t i = 0; i < program.size(); ++i) {
      absl::StatusOr<expressions::native::NodePtr> tree =
          expressions::native::Parse(program.source(i));
      EXPECT_TRUE(tree.ok()) << p.source << " " << (*compiled)->field_paths[i] << ": "
                             << tree.status() << "\n"
                             << program.source(i);
      if (tree.ok()) expressions::native::testing::ExpectRoundTrip(program.source(i));
      ++count;
    }
  }
  return count;
}

TEST(CatalogJqParseTest, EveryExpressionOfOurCatalogParses) {
  size_t count = ExpectEveryExpressionParses(std::string(WM_SOURCE_DIR) + "/catalog");
  EXPECT_GT(count, 900u);  // 1002 when written
}

// The shared directory is the worktree's sibling ../shared unless
// WM_SHARED_DIR names another.
std::string SharedDir() {
  const char* override_dir = std::getenv("WM_SHARED_DIR");
  return override_dir != nullptr ? override_dir : WM_SHARED_DIR;
}

class UpstreamCatalogJqParseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(UpstreamCatalogJqParseTest, EveryExpressionParses) {
  std::string dir = SharedDir() + "/conformance/" + GetParam();
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << "needs ../shared/conformance (the upstream catalogs; " << dir
                 << " is missing; set WM_SHARED_DIR to the directory holding conformance/)";
  }
  EXPECT_GT(ExpectEveryExpressionParses(dir), 500u);  // 593 and 591 when written
}

INSTANTIATE_TEST_SUITE_P(Conformance, UpstreamCatalogJqParseTest,
                         ::testing::Values("upstream-catalog", "upstream-catalog-older"));

}  // namespace
}  // namespace wm::definitions
