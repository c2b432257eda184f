#include "server/common/gvk.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace wm {

std::string Gvk::ToString() const {
  return group.empty() ? absl::StrCat(version, "/", kind)
                       : absl::StrCat(group, "/", version, "/", kind);
}

Gvk GvkFromApiVersion(absl::string_view api_version, absl::string_view kind) {
  std::pair<absl::string_view, absl::string_view> gv =
      absl::StrSplit(api_version, absl::MaxSplits('/', 1));
  if (gv.second.empty()) return Gvk{"", std::string(gv.first), std::string(kind)};
  return Gvk{std::string(gv.first), std::string(gv.second), std::string(kind)};
}

Gvk PodGvk() { return Gvk{"", "v1", "Pod"}; }

}  // namespace wm
