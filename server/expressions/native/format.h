#ifndef WM_SERVER_EXPRESSIONS_NATIVE_FORMAT_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_FORMAT_H_

// jq's string formats (`@base64`, `@json "x\(.)"`), as gojq writes them.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"

namespace wm::expressions::native {

// Whether `name` ("@base64") is a format this engine has.
bool IsKnownFormat(absl::string_view name);

// `value` in format `name`. REQUIRES: IsKnownFormat(name).
absl::StatusOr<std::string> ApplyFormat(absl::string_view name, const Json& value);

// gojq's tostring: a string as itself, anything else as its JSON text.
std::string ToText(const Json& value);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_FORMAT_H_
