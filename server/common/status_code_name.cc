#include "server/common/status_code_name.h"

namespace wm {

std::string StatusCodeName(absl::StatusCode code) {
  std::string name = absl::StatusCodeToString(code);
  return name.empty() ? std::to_string(static_cast<int>(code)) : name;
}

}  // namespace wm
