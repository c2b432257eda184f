#ifndef WM_CLIENT_WMCTL_COMMANDS_H_
#define WM_CLIENT_WMCTL_COMMANDS_H_

#include <cstdlib>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/wmctl/config.h"

namespace wm::wmctl {

// What wmctl reads from its surroundings besides argv and stdin: the
// environment (WM_ADDRESS, WMCTL_*, XDG_CONFIG_HOME, HOME) and the clock
// (AGE columns). Tests give their own.
struct Environment {
  Getenv getenv = [](const char* name) -> const char* { return std::getenv(name); };
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// Runs wmctl with `argv` (without the program name) and returns its exit
// code (kli's): 0 ok, 1 error, invalid or daemon unreachable, 2 usage,
// unreadable input, bad configuration or a request the daemon rejects, 3
// not found, 4 no definition covers the type.
int RunWmctl(const std::vector<std::string>& argv, std::istream& in, std::ostream& out,
             std::ostream& err, const Environment& environment = Environment());

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_COMMANDS_H_
