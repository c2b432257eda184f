#ifndef WM_CLIENT_WMCTL_COMMANDS_H_
#define WM_CLIENT_WMCTL_COMMANDS_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace wm::wmctl {

// Runs wmctl with `argv` (without the program name) and returns its exit
// code: 0 ok, 1 error, invalid or daemon unreachable, 2 usage, unreadable
// input or a request the daemon rejects, 3 not found, 4 no definition covers
// the type (kli's codes). The daemon commands (get, describe TYPE/NAME,
// gang) read $WM_ADDRESS when --address is not given.
int RunWmctl(const std::vector<std::string>& argv, std::istream& in, std::ostream& out,
             std::ostream& err);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_COMMANDS_H_
