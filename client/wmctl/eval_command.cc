#include "client/wmctl/eval_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/wmctl/engine_factory.h"
#include "client/wmctl/errors.h"
#include "client/wmctl/input.h"
#include "server/definitions/validate.h"

namespace wm::wmctl {
namespace {

void PrintOutput(const Json& value, bool raw, std::ostream& out) {
  if (raw && value.is_string()) {
    out << value.get_ref<const std::string&>() << "\n";
  } else {
    // Outputs come from jq text, which is valid UTF-8; replace guards the
    // dump, which would otherwise throw.
    out << value.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  }
}

}  // namespace

int RunEval(const ParsedArgs& args, std::istream& in, std::ostream& out, std::ostream& err) {
  if (args.positional.size() != 1) {
    return UsageError(err, "eval takes one EXPR (put -- before an EXPR that starts with -)");
  }
  const std::string& expression = args.positional[0];
  std::string engine_name = args.Last("--engine", std::string(kDefaultEngine));
  const auto& engines = EngineNames();
  if (std::find(engines.begin(), engines.end(), engine_name) == engines.end()) {
    // MakeEngine's own message names the engines.
    return UsageError(err, MakeEngine(engine_name).status().message());
  }
  // Refused where the daemon's validation would refuse it in a definition.
  std::vector<std::string> problems = definitions::ExpressionProblems(expression);
  if (!problems.empty()) {
    for (const std::string& problem : problems) Fail(err, 1, problem);
    return 1;
  }
  std::vector<Json> inputs = {Json()};
  std::string source;  // the input's name in errors
  if (args.Has("--filename")) {
    std::string path = args.Last("--filename");
    source = path == "-" ? "stdin" : path;
    auto text = ReadInput(path, in);
    if (!text.ok()) return Fail(err, 2, text.status().message());
    auto documents = ReadDocuments(*text);
    if (!documents.ok()) {
      return Fail(err, 2, absl::StrCat(source, ": ", documents.status().message()));
    }
    if (documents->empty()) return Fail(err, 2, absl::StrCat(source, ": no document"));
    inputs = *std::move(documents);
  }
  auto engine = MakeEngine(engine_name);
  if (!engine.ok()) return Fail(err, 1, engine.status().message());
  std::vector<expressions::Engine::CompileError> compile_errors;
  auto program = (*engine)->Compile({expression}, &compile_errors);
  if (!program.ok()) {
    // CompileDefinition's finding, without the field.
    if (compile_errors.empty()) return Fail(err, 1, program.status().message());
    return Fail(err, 1, absl::StrCat("jq does not compile: ", compile_errors[0].message));
  }
  bool raw = args.Has("--raw-output");
  for (size_t i = 0; i < inputs.size(); ++i) {
    // A session per document, as the daemon has one per resolution.
    absl::Status status = (*engine)->Run([&](expressions::Session& session) -> absl::Status {
      auto outputs = session.Evaluate(**program, 0, session.Load(inputs[i]));
      if (!outputs.ok()) return outputs.status();
      for (const Json& output : *outputs) PrintOutput(output, raw, out);
      return absl::OkStatus();
    });
    if (!status.ok()) {
      if (inputs.size() == 1) return Fail(err, 1, status.message());
      return Fail(err, 1, absl::StrCat(source, "#", i + 1, ": ", status.message()));
    }
  }
  return 0;
}

}  // namespace wm::wmctl
