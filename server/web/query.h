#ifndef WM_SERVER_WEB_QUERY_H_
#define WM_SERVER_WEB_QUERY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm::web {

// A request's query parameters, percent-decoded, in their order; a name may
// come more than once (`kind=A&kind=B`).
class Query {
 public:
  // Parses "a=1&b=x%2Fy&c" ('+' is a space, as forms send it; a name without
  // '=' has the value ""). InvalidArgument for a malformed percent escape,
  // an empty name, a decoded byte that is a control character, or a name not
  // in `allowed` (so a misspelt filter is refused, not ignored), each
  // naming the parameter.
  static absl::StatusOr<Query> Parse(absl::string_view query,
                                     const std::vector<absl::string_view>& allowed);

  // The last value of `name`, or "" when it is absent.
  std::string Get(absl::string_view name) const;
  // Every value of `name`, in order.
  std::vector<std::string> GetAll(absl::string_view name) const;
  // "true"/"1" true, "false"/"0"/absent false; InvalidArgument otherwise.
  absl::StatusOr<bool> GetBool(absl::string_view name) const;
  // A non-negative integer up to `max`, 0 when absent; InvalidArgument
  // otherwise.
  absl::StatusOr<int64_t> GetInt(absl::string_view name, int64_t max) const;

 private:
  std::vector<std::pair<std::string, std::string>> parameters_;
};

// `text` percent-decoded ("%2F" is '/'; '+' stays '+'); InvalidArgument for
// a malformed escape.
absl::StatusOr<std::string> PercentDecode(absl::string_view text);

}  // namespace wm::web

#endif  // WM_SERVER_WEB_QUERY_H_
