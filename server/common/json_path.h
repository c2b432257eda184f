#ifndef WM_SERVER_COMMON_JSON_PATH_H_
#define WM_SERVER_COMMON_JSON_PATH_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"

namespace wm {

// Sets `value` at `path` (a jq path: an array of object keys and array
// indices, as `path(...)` yields) inside `document`, as jq's setpath does:
// missing intermediate objects and arrays are created, arrays are extended
// with nulls, negative indices count from the end. Fails where the document
// has a value of the wrong type on the way (e.g. a key into an array).
absl::Status SetPath(Json& document, const Json& path, Json value);

// The value under nested object keys, or nullptr when any step is missing or
// not an object: Find(pod, {"metadata", "labels"}).
const Json* Find(const Json& document, std::initializer_list<absl::string_view> keys);

// The string under nested object keys, or "" when absent or not a string.
std::string FindString(const Json& document, std::initializer_list<absl::string_view> keys);

// A view of the string under nested object keys, or "" when absent or not
// a string. REQUIRES: `document` outlives the view. For hot paths that
// only compare or copy once (a pod's uid, its owner's).
absl::string_view FindStringView(const Json& document,
                                 std::initializer_list<absl::string_view> keys);

// The string under nested object keys, or nullopt when absent or not a
// string: for optional fields, where "" is a value that FindString cannot
// tell from an absent one.
std::optional<std::string> FindOptionalString(const Json& document,
                                              std::initializer_list<absl::string_view> keys);

// The string items of a JSON array, in order, others skipped; empty when
// `array` is null or not an array: for lists such as groups or audiences.
std::vector<std::string> StringsOf(const Json* array);

// Renders a jq path for error messages: ["a", 0, "b"] -> .a[0].b
std::string JqPathString(const Json& path);

}  // namespace wm

#endif  // WM_SERVER_COMMON_JSON_PATH_H_
