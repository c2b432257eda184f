#ifndef WM_CLIENT_WMCTL_FLAGS_H_
#define WM_CLIENT_WMCTL_FLAGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace wm::wmctl {

// What a flag's value is, for parsing and for shell completion.
enum class FlagValue {
  kNone,       // a switch
  kText,       // free text (an address, a selector, a group)
  kNumber,     // an integer >= 0
  kPath,       // a file or directory: the shells complete file names
  kFormat,     // an output format of the command
  kNamespace,  // completed from the daemon's workloads
  kCluster,    // likewise
  kContext,    // completed from the kubeconfig's contexts
  kPhase,      // status names, comma-separated
  kEngine,     // a jq engine name (EngineNames)
};

struct FlagSpec {
  absl::string_view name;        // "--namespace"
  absl::string_view short_name;  // "-n", or empty
  FlagValue value;
};

// Every flag of every command: one table for the parser, the per-command
// checks and completion.
const std::vector<FlagSpec>& AllFlags();
// The flag named `arg` (long or short form), or null.
const FlagSpec* FindFlag(absl::string_view arg);

// The commands and the flags each takes (long names). The connection flags
// (of both modes) and --config are included where they apply.
struct CommandSpec {
  absl::string_view name;
  std::vector<absl::string_view> flags;
  std::vector<absl::string_view> formats;  // -o values; empty: no -o
};
const std::vector<CommandSpec>& AllCommands();
const CommandSpec* FindCommand(absl::string_view name);

// The flags of daemon mode: --address, --tls*, --cluster.
bool IsDaemonFlag(absl::string_view name);
// The flags of kubeconfig mode: --kubeconfig, --context, --as, --as-group.
bool IsKubeconfigFlag(absl::string_view name);
// The flags of either mode and --request-timeout: rejected by offline
// invocations.
bool IsConnectionFlag(absl::string_view name);

// Flags and positionals as given. Flags go by their long name; a flag given
// twice keeps every value in order (the last one counts, except --phase,
// --definitions and --as-group, which accumulate).
struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>, std::less<>> flags;
  // The flags in the order given (long names), for messages.
  std::vector<std::string> order;

  bool Has(absl::string_view name) const { return flags.find(name) != flags.end(); }
  // The last value of a flag, or `fallback` when it is not given.
  std::string Last(absl::string_view name, const std::string& fallback = "") const;
};

// Parses flags anywhere among the arguments ("--flag value", "--flag=value",
// "-n value"); "--" ends the flags. Returns an error message for an unknown
// flag or a missing value, else "".
std::string ParseArgs(const std::vector<std::string>& argv, ParsedArgs& args);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_FLAGS_H_
