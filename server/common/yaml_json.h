#ifndef WM_SERVER_COMMON_YAML_JSON_H_
#define WM_SERVER_COMMON_YAML_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"

namespace wm {

// Parses every document of a YAML stream (JSON is YAML) into Json. Plain
// scalars are typed by the YAML 1.2 core schema (null, booleans, integers,
// floats); quoted scalars stay strings. Empty documents are skipped.
// Errors carry the line and column.
absl::StatusOr<std::vector<Json>> ParseYamlDocuments(absl::string_view text);

// Reads a file (ReadFileToString: at most 16 MiB; "cannot read PATH:
// <reason>" otherwise) and parses it as above.
absl::StatusOr<std::vector<Json>> ReadYamlFile(const std::string& path);

// Renders Json as block-style YAML (for -o yaml).
std::string ToYaml(const Json& value);

}  // namespace wm

#endif  // WM_SERVER_COMMON_YAML_JSON_H_
