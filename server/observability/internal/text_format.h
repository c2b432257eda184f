#ifndef WM_SERVER_OBSERVABILITY_INTERNAL_TEXT_FORMAT_H_
#define WM_SERVER_OBSERVABILITY_INTERNAL_TEXT_FORMAT_H_

#include <string>

#include "absl/strings/string_view.h"

// The escaping of the text exposition format 0.0.4, shared by the registry's
// families and ExpositionWriter. Not for other layers.
namespace wm::observability::internal {

// A label value: backslash, double quote and newline escaped.
void AppendLabelValue(absl::string_view value, std::string* out);

// Help text: backslash and newline escaped.
void AppendHelp(absl::string_view help, std::string* out);

}  // namespace wm::observability::internal

#endif  // WM_SERVER_OBSERVABILITY_INTERNAL_TEXT_FORMAT_H_
