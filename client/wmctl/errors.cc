#include "client/wmctl/errors.h"

namespace wm::wmctl {

int Fail(std::ostream& err, int code, absl::string_view message) {
  err << "error: " << message << "\n";
  return code;
}

int UsageError(std::ostream& err, absl::string_view message) {
  err << "error: " << message << "\nRun 'wmctl help' for usage.\n";
  return 2;
}

}  // namespace wm::wmctl
