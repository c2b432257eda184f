#ifndef WM_SERVER_RPC_LABEL_SELECTOR_H_
#define WM_SERVER_RPC_LABEL_SELECTOR_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm::rpc {

// The longest selector accepted. Kubernetes sets none, but its keys and
// values are bounded (253 + 1 + 63 and 63 characters), so this leaves room
// for a few hundred requirements or values.
inline constexpr size_t kMaxLabelSelectorBytes = 16 << 10;

// A Kubernetes label selector in its string form: requirements separated by
// commas, each `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
// `key notin (a,b)`, `key` (exists) or `!key` (does not exist). Keys and
// values are checked as labels.Parse checks them: keys are qualified names
// (server/common/kube_names.h), values label values. The empty selector
// matches everything.
class LabelSelector {
 public:
  static absl::StatusOr<LabelSelector> Parse(absl::string_view text);

  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool empty() const { return requirements_.empty(); }

 private:
  enum class Op { kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };
  std::vector<Requirement> requirements_;
};

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_LABEL_SELECTOR_H_
