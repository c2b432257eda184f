#ifndef WM_CLIENT_WMCTL_INPUT_H_
#define WM_CLIENT_WMCTL_INPUT_H_

#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"

namespace wm::wmctl {

// The most ReadInput reads of a file: a manifest far larger than any
// request the daemon takes, and not /dev/zero.
inline constexpr size_t kMaxInputBytes = size_t{256} << 20;

// The whole text of the file at `path`, or of `in` when `path` is "-".
// "cannot read PATH: <reason>" when the file cannot be read (NotFound for
// a missing one).
absl::StatusOr<std::string> ReadInput(const std::string& path, std::istream& in);

// The documents of a file given to wmctl. A text that opens with '{' or
// '[' is read as one JSON document by the daemon's reader for inline
// objects (ParseJson), so wmctl and ResolveWorkload agree on every number
// and bound; anything else is YAML, one document per `---` (with the same
// bounds). A text that opens like JSON but is not JSON may be YAML flow
// style; when YAML cannot read it either, the JSON error is the one that
// explains it.
absl::StatusOr<std::vector<Json>> ReadDocuments(absl::string_view text);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_INPUT_H_
