#ifndef WM_CLIENT_WMCTL_COMMANDS_H_
#define WM_CLIENT_WMCTL_COMMANDS_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace wm::wmctl {

// Runs wmctl with `argv` (without the program name) and returns its exit
// code: 0 ok, 1 error or invalid, 2 usage or unreadable input, 3 not found,
// 4 no definition covers the type (kli's codes).
int RunWmctl(const std::vector<std::string>& argv, std::istream& in, std::ostream& out,
             std::ostream& err);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_COMMANDS_H_
