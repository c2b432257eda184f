#ifndef WM_CLIENT_WMCTL_VALIDATE_COMMAND_H_
#define WM_CLIENT_WMCTL_VALIDATE_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/expressions/engine.h"
#include "workloadmap/v1/service.pb.h"

namespace wm::wmctl {

// `wmctl validate FILE|-`: kli's verdict on each definition document of a
// file. Where the findings come from (the daemon's ValidateDefinition, or
// OfflineFindings with --offline) is the caller's.

// One document of the file and its name in messages: the path ("stdin" for
// -), with "#N" after it when the file holds several.
struct DefinitionDocument {
  std::string source;
  Json object;
};

// The YAML documents of `path` ("-" reads `in`). The error, for exit code 2,
// names the input: "cannot read PATH", "PATH: <YAML error>", "PATH: no
// document".
absl::StatusOr<std::vector<DefinitionDocument>> ReadDefinitionDocuments(const std::string& path,
                                                                        std::istream& in);

// A finding as wmctl prints it: "PATH: MESSAGE", or MESSAGE without a path.
std::string FindingText(const workloadmap::v1::Finding& finding);

// In-process findings: the document parsed, validated and compiled with
// `engine`, as the daemon's ValidateDefinition finds them.
std::vector<workloadmap::v1::Finding> OfflineFindings(const DefinitionDocument& document,
                                                      expressions::Engine& engine);

// The findings of one document; when they cannot be had, the error and the
// exit code to end with in `exit_code`.
using FindFindings = absl::FunctionRef<absl::StatusOr<std::vector<workloadmap::v1::Finding>>(
    const DefinitionDocument& document, int& exit_code)>;

// Prints each document's verdict: "OK: SOURCE is a valid Karta definition
// (GVK: ...)", or "INVALID: SOURCE" and its errors indented on `out` with
// "error: N finding(s) in SOURCE" on `err`; warnings on `err` after it.
// Stops with "error: ..." at the first document whose findings cannot be
// had. Returns 0 when every document is valid, 1 when one is not, else the
// exit code `find` gave.
int PrintVerdicts(const std::vector<DefinitionDocument>& documents, FindFindings find,
                  std::ostream& out, std::ostream& err);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_VALIDATE_COMMAND_H_
