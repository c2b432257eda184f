#include "client/wmctl/flags.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wm::wmctl {
namespace {

constexpr absl::string_view kDaemon[] = {"--address",   "--tls",     "--tls-ca",
                                         "--tls-cert",  "--tls-key", "--tls-server-name",
                                         "--token-file"};
constexpr absl::string_view kKubeconfig[] = {"--kubeconfig", "--context", "--as", "--as-group"};

template <size_t N>
bool In(absl::string_view name, const absl::string_view (&flags)[N]) {
  return std::find(std::begin(flags), std::end(flags), name) != std::end(flags);
}

std::vector<absl::string_view> With(std::initializer_list<absl::string_view> flags,
                                    bool connection) {
  std::vector<absl::string_view> out = {"--config"};
  if (connection) {
    out.insert(out.end(), std::begin(kDaemon), std::end(kDaemon));
    out.insert(out.end(), std::begin(kKubeconfig), std::end(kKubeconfig));
    out.push_back("--request-timeout");
  }
  out.insert(out.end(), flags.begin(), flags.end());
  return out;
}

}  // namespace

const std::vector<FlagSpec>& AllFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {"--config", "", FlagValue::kPath},
      {"--address", "", FlagValue::kText},
      {"--tls", "", FlagValue::kNone},
      {"--tls-ca", "", FlagValue::kPath},
      {"--tls-cert", "", FlagValue::kPath},
      {"--tls-key", "", FlagValue::kPath},
      {"--tls-server-name", "", FlagValue::kText},
      {"--token-file", "", FlagValue::kPath},
      {"--kubeconfig", "", FlagValue::kPath},
      {"--context", "", FlagValue::kContext},
      {"--as", "", FlagValue::kText},
      {"--as-group", "", FlagValue::kText},
      {"--request-timeout", "", FlagValue::kText},
      {"--cluster", "", FlagValue::kCluster},
      {"--namespace", "-n", FlagValue::kNamespace},
      {"--all-namespaces", "-A", FlagValue::kNone},
      {"--selector", "-l", FlagValue::kText},
      {"--phase", "", FlagValue::kPhase},
      {"--all-types", "", FlagValue::kNone},
      {"--output", "-o", FlagValue::kFormat},
      {"--filename", "-f", FlagValue::kPath},
      {"--pod-limit", "", FlagValue::kNumber},
      {"--component-limit", "", FlagValue::kNumber},
      {"--offline", "", FlagValue::kNone},
      {"--definitions", "", FlagValue::kPath},
      {"--no-catalog", "", FlagValue::kNone},
      {"--group", "", FlagValue::kText},
      {"--kind", "", FlagValue::kText},
      {"--version", "", FlagValue::kText},
      {"--raw-output", "-r", FlagValue::kNone},
      {"--engine", "", FlagValue::kEngine},
      {"--prune", "", FlagValue::kNone},
      {"--help", "-h", FlagValue::kNone},
  };
  return *flags;
}

const FlagSpec* FindFlag(absl::string_view arg) {
  for (const FlagSpec& f : AllFlags()) {
    if (f.name == arg || (!f.short_name.empty() && f.short_name == arg)) return &f;
  }
  return nullptr;
}

const std::vector<CommandSpec>& AllCommands() {
  static const auto* commands = new std::vector<CommandSpec>{
      {"get",
       With({"--cluster", "--namespace", "--all-namespaces", "--selector", "--phase", "--all-types",
             "--output", "--definitions", "--no-catalog"},
            true),
       {"table", "wide", "json", "yaml"}},
      // describe TYPE/NAME asks the daemon or the cluster; describe -f
      // resolves offline.
      {"describe",
       With({"--cluster", "--namespace", "--pod-limit", "--component-limit", "--output",
             "--filename", "--definitions", "--no-catalog"},
            true),
       {"table", "json", "yaml"}},
      {"gang",
       With({"--cluster", "--namespace", "--output", "--definitions", "--no-catalog"}, true),
       {"table", "json", "yaml"}},
      {"definitions",
       // ListDefinitions answers for the daemon's first cluster: no --cluster.
       With({"--offline", "--definitions", "--no-catalog", "--component-limit", "--group", "--kind",
             "--version", "--output"},
            true),
       {"table", "json", "yaml"}},
      {"validate", With({"--offline"}, true), {}},
      // Writes over the kubeconfig's context, as the user: no daemon flags.
      {"definitions apply",
       {"--config", "--kubeconfig", "--context", "--as", "--as-group", "--request-timeout",
        "--prune"},
       {}},
      {"eval", With({"--filename", "--raw-output", "--engine"}, false), {}},
      {"completion", {}, {}},
      {"version", With({"--cluster", "--namespace"}, true), {}},
      {"help", {}, {}},
  };
  return *commands;
}

const CommandSpec* FindCommand(absl::string_view name) {
  for (const CommandSpec& c : AllCommands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool IsDaemonFlag(absl::string_view name) { return name == "--cluster" || In(name, kDaemon); }

bool IsKubeconfigFlag(absl::string_view name) { return In(name, kKubeconfig); }

bool IsConnectionFlag(absl::string_view name) {
  return IsDaemonFlag(name) || IsKubeconfigFlag(name) || name == "--request-timeout";
}

std::string ParsedArgs::Last(absl::string_view name, const std::string& fallback) const {
  auto it = flags.find(name);
  return it == flags.end() || it->second.empty() ? fallback : it->second.back();
}

std::string ParseArgs(const std::vector<std::string>& argv, ParsedArgs& args) {
  bool flags_ended = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (flags_ended || arg == "-" || !absl::StartsWith(arg, "-")) {
      args.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    std::string name = arg;
    std::string value;
    bool has_value = false;
    if (absl::StartsWith(arg, "--") && arg.find('=') != std::string::npos) {
      name = arg.substr(0, arg.find('='));
      value = arg.substr(arg.find('=') + 1);
      has_value = true;
    }
    const FlagSpec* flag = FindFlag(name);
    if (flag == nullptr) return absl::StrCat("unknown flag ", name);
    std::string long_name(flag->name);
    if (flag->value == FlagValue::kNone) {
      if (has_value) return absl::StrCat(long_name, " takes no value");
    } else if (!has_value) {
      if (i + 1 >= argv.size()) return absl::StrCat(long_name, " needs a value");
      value = argv[++i];
    }
    args.flags[long_name].push_back(value);
    args.order.push_back(long_name);
  }
  return "";
}

}  // namespace wm::wmctl
