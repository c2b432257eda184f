#ifndef WM_SERVER_EXPRESSIONS_NATIVE_PATHS_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_PATHS_H_

// getpath, setpath and delpaths over Json, with gojq's rules: a path is an
// array of keys (strings index objects, numbers index arrays, objects
// {"start", "end"} are slices); null stands for an empty container of the
// kind the key needs; errors are gojq's texts.

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/common/json.h"

namespace wm::expressions::native {

// The value at `path` (null past a missing key). REQUIRES: path.is_array().
// FailedPrecondition when the path steps into a scalar (gojq reports that
// against the whole input), InvalidArgument for a key of the wrong type.
absl::StatusOr<Json> GetPath(const Json& root, const Json& path);

// Sets the value at `path` in `root`, creating containers along the way.
// `max_array_index` bounds how far an index may pad an array with nulls.
absl::Status SetPath(Json& root, const Json& path, Json value, int64_t max_array_index);

// Deletes every path of `paths` (an array of paths), longest first, so
// earlier deletions do not shift later ones.
absl::Status DeletePaths(Json& root, const Json& paths);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_PATHS_H_
