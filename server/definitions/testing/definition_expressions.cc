#include "server/definitions/testing/definition_expressions.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/expressions/engine.h"

namespace wm::definitions::testing {
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
  absl::Status Run(absl::FunctionRef<absl::Status(expressions::Session&)>,
                   const expressions::RunOptions&) override {
    return absl::UnimplementedError("the recording engine evaluates nothing");
  }
  const expressions::EvalLimits& limits() const override { return limits_; }

 private:
  expressions::EvalLimits limits_;
};

}  // namespace

absl::StatusOr<std::vector<DefinitionExpressions>> ExpressionsOfDefinitionsIn(
    const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  if (error) return absl::NotFoundError(absl::StrCat(dir, ": ", error.message()));
  std::sort(files.begin(), files.end());
  RecordingEngine engine;
  std::vector<DefinitionExpressions> all;
  for (const std::filesystem::path& file : files) {
    auto parsed = LoadDefinitionFiles(file.string(), Origin::kCatalog);
    if (!parsed.ok()) return parsed.status();
    for (ParsedDefinition& p : *parsed) {
      if (!p.definition) {
        return absl::InvalidArgumentError(
            absl::StrCat(p.source, " does not parse as a definition"));
      }
      auto compiled = CompileDefinition(*std::move(p.definition), engine);
      if (!compiled.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(p.source, ": ", compiled.status().message()));
      }
      DefinitionExpressions expressions{.file = p.source,
                                        .name = (*compiled)->definition->name,
                                        .field_paths = (*compiled)->field_paths};
      const expressions::Program& program = *(*compiled)->program;
      for (size_t i = 0; i < program.size(); ++i) expressions.sources.push_back(program.source(i));
      all.push_back(std::move(expressions));
    }
  }
  return all;
}

}  // namespace wm::definitions::testing
