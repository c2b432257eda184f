#include "client/wmctl/validate_command.h"

#include "absl/strings/str_cat.h"
#include "client/wmctl/errors.h"
#include "client/wmctl/input.h"
#include "client/wmctl/invocation.h"
#include "server/common/yaml_json.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"

namespace wm::wmctl {
namespace {

namespace v1 = ::workloadmap::v1;

// spec.structureDefinition.rootComponent.kind as written, or null.
const Json* RootKind(const Json& doc) {
  const Json* node = &doc;
  for (const char* key : {"spec", "structureDefinition", "rootComponent", "kind"}) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &node->at(key);
  }
  return node->is_object() ? node : nullptr;
}

}  // namespace

absl::StatusOr<std::vector<DefinitionDocument>> ReadDefinitionDocuments(const std::string& path,
                                                                        std::istream& in) {
  auto text = ReadInput(path, in);
  if (!text.ok()) return text.status();
  auto docs = ParseYamlDocuments(*text);
  std::string name = path == "-" ? "stdin" : path;
  if (!docs.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", docs.status().message()));
  }
  if (docs->empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": no document"));
  std::vector<DefinitionDocument> documents;
  for (size_t i = 0; i < docs->size(); ++i) {
    std::string source = docs->size() > 1 ? absl::StrCat(name, "#", i + 1) : name;
    documents.push_back({std::move(source), std::move((*docs)[i])});
  }
  return documents;
}

std::string FindingText(const v1::Finding& f) {
  return f.path().empty() ? f.message() : absl::StrCat(f.path(), ": ", f.message());
}

std::vector<v1::Finding> OfflineFindings(const DefinitionDocument& document,
                                         expressions::Engine& engine) {
  auto parsed =
      definitions::ParseDefinition(document.object, definitions::Origin::kFile, document.source);
  std::vector<Finding> findings = parsed.findings;
  if (parsed.definition) {
    std::vector<Finding> compile_findings;
    (void)definitions::CompileDefinition(*parsed.definition, engine, &compile_findings);
    findings.insert(findings.end(), compile_findings.begin(), compile_findings.end());
  }
  std::vector<v1::Finding> out;
  for (const Finding& f : findings) {
    v1::Finding& finding = out.emplace_back();
    finding.set_severity(f.is_error() ? "error" : "warning");
    finding.set_path(f.path);
    finding.set_message(f.message);
  }
  return out;
}

int PrintVerdicts(const std::vector<DefinitionDocument>& documents, FindFindings find,
                  std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  for (const DefinitionDocument& document : documents) {
    const std::string& source = document.source;
    int call_code = 0;
    auto findings = find(document, call_code);
    if (!findings.ok()) return Fail(err, call_code, findings.status().message());
    int errors = 0;
    for (const auto& f : *findings) errors += f.severity() == "error";
    if (errors == 0) {
      std::string gvk;
      if (const Json* kind = RootKind(document.object)) {
        std::string group = kind->value("group", "");
        gvk = absl::StrCat(group.empty() ? "" : group + "/", kind->value("version", ""),
                           ", Kind=", kind->value("kind", ""));
      }
      out << "OK: " << source << " is a valid Karta definition (GVK: " << gvk << ")\n";
    } else {
      out << "INVALID: " << source << "\n";
      for (const auto& f : *findings) {
        if (f.severity() == "error") out << "  " << FindingText(f) << "\n";
      }
      err << "error: " << errors << " finding(s) in " << source << "\n";
      exit_code = 1;
    }
    for (const auto& f : *findings) {
      if (f.severity() != "error") err << "warning: " << FindingText(f) << "\n";
    }
  }
  return exit_code;
}

absl::StatusOr<std::vector<v1::Finding>> Invocation::Findings(const DefinitionDocument& document,
                                                              int& exit_code) {
  if (!Offline()) {
    v1::ValidateDefinitionRequest request;
    request.set_definition_yaml(document.object.dump());
    v1::ValidateDefinitionResponse response;
    grpc::Status status = client_->ValidateDefinition(request, &response);
    if (!status.ok()) {
      exit_code = ExitCodeFor(status);
      return absl::UnavailableError(ErrorMessageFor(status, client_->connection()));
    }
    return std::vector<v1::Finding>(response.findings().begin(), response.findings().end());
  }
  auto engine = Engine();
  if (!engine.ok()) {
    exit_code = 1;
    return engine.status();
  }
  return OfflineFindings(document, **engine);
}

int Invocation::Validate() {
  if (args_.positional.size() != 1) return Usage("validate takes one FILE or -");
  auto documents = ReadDefinitionDocuments(args_.positional[0], in_);
  if (!documents.ok()) return Fail(2, std::string(documents.status().message()));
  if (!Offline()) {
    if (int code = Connect()) return code;
  }
  return PrintVerdicts(
      *documents,
      [&](const DefinitionDocument& document, int& exit_code) {
        return Findings(document, exit_code);
      },
      out_, err_);
}

}  // namespace wm::wmctl
