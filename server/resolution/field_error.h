#ifndef WM_SERVER_RESOLUTION_FIELD_ERROR_H_
#define WM_SERVER_RESOLUTION_FIELD_ERROR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace wm::resolution {

// An error of one definition field. Its message reads "<field>: <detail>"
// (logs and RPC errors keep that one line), and it carries the field path
// beside it, so that a partial answer can report the field and the detail
// apart (workloadmap.v1.ComponentError).
absl::Status FieldError(absl::StatusCode code, absl::string_view field, absl::string_view detail);

// Attaches `field` to an error whose message already names it in its own
// words ("component worker spec: instance ids count (2) ...").
absl::Status WithFieldPath(absl::Status status, absl::string_view field);

// The field path a FieldError or WithFieldPath attached; "" for any other
// error.
std::string FieldPathOf(const absl::Status& status);

// The message without its "<field>: " prefix (the whole message when it has
// none).
std::string DetailOf(const absl::Status& status);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_FIELD_ERROR_H_
