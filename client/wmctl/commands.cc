// RunWmctl: the usage text, and which command runs with its flags checked
// (the commands themselves: invocation.h).
#include "client/wmctl/commands.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/wmctl/eval_command.h"
#include "client/wmctl/invocation.h"

namespace wm::wmctl {
namespace {

constexpr char kUsage[] = R"(wmctl - Workload Map resolution client

Usage:
  wmctl get [TYPE[/NAME] | --all-types] [flags]  list workloads
  wmctl describe TYPE/NAME [flags]      show one workload with its pods
  wmctl describe -f FILE|- [flags]      resolve a manifest offline
  wmctl gang POD [flags]                show a pod's pod group
  wmctl definitions [NAME] [flags]      list the definitions in force
  wmctl definitions apply [--prune]     server-side apply the built-in
                                        catalog as Karta objects
  wmctl validate FILE|- [flags]         check a definition file
  wmctl eval EXPR [-f FILE|-] [flags]   evaluate a jq expression as the
                                        daemon does
  wmctl completion bash|zsh|fish        print a shell completion script
  wmctl version                         print the version and which mode
                                        answers

get, describe TYPE/NAME and gang answer in one of two modes; so do
definitions and validate unless --offline (or --definitions, --no-catalog)
is given:
  daemon mode       ask workloadmapd: chosen by --address, $WM_ADDRESS or
                    the config file's address
  kubeconfig mode   the default when no daemon address is configured (or
                    with --kubeconfig, --context, --as, --as-group): list
                    and resolve straight from the API server with the
                    daemon's own libraries, nothing installed in the
                    cluster. Definitions: the catalog, the cluster's Karta
                    objects (when they may be listed) and --definitions.
-o json and yaml of get, describe and gang say which mode answered ("mode").

Kubeconfig-mode flags (kubectl's):
  --kubeconfig FILE       the kubeconfig (default $KUBECONFIG, else
                          ~/.kube/config)
  --context NAME          the kubeconfig context (default: current-context)
  -n, --namespace NS      namespace (default: the context's, else "default")
  --as USER               impersonate USER
  --as-group GROUP        impersonate GROUP (repeatable)
  --request-timeout T     how long the listing may take: 30s, 2m, seconds,
                          0 for no limit (default 60s); progress is printed
                          on stderr after a second
  --definitions PATH      add definitions (get, describe, gang)
  --no-catalog            leave out the built-in catalog (get, describe, gang)

Daemon-mode flags:
  --address ADDR          workloadmapd at HOST:PORT or unix:PATH
  --tls                   connect with TLS (implied by the other --tls-*)
  --tls-ca FILE           PEM CA bundle that verifies the daemon (default:
                          the system's roots)
  --tls-cert FILE         PEM client certificate (mutual TLS); with --tls-key
  --tls-key FILE          its private key
  --tls-server-name NAME  the name to verify in the daemon's certificate
  --token-file FILE       send the bearer token in FILE (a daemon with
                          --authentication=kubernetes; $WM_TOKEN_FILE)
  --cluster NAME          a cluster (kubeconfig context) of the daemon
  -n, --namespace NS      namespace (default "default")
  --request-timeout T     deadline of each call (default 10s; 0 = none)

get flags:
  -A, --all-namespaces    every namespace
  -l, --selector SEL      label selector on the workload object
  --phase STATUS          keep workloads with this matched status (Running,
                          Failed, ...; repeatable or comma-separated)
  --all-types             every workload type (the default without TYPE)

describe flags:
  --pod-limit N           pods shown per component, unhealthy first (0 = all)
  --component-limit N     components shown (0 = all)
  -f, --filename FILE     resolve this manifest offline; the file may hold
                          the workload's pods and Jobs after it

definitions flags:
  --group G, --kind K, --version V
                          only definitions of this root kind (--kind needs
                          --group, --version needs --kind)
  --component-limit N     children listed after the root (default 3, 0 = all)

definitions apply flags (over the kubeconfig's context, as you):
  --prune                 also delete catalog Kartas no longer shipped
                          (not those whose spec someone changed)
  A Karta whose fields someone else changed is kept as it is, and said so.

eval flags:
  -f, --filename FILE     the input: a JSON or YAML document (- reads
                          stdin); each document of a multi-document YAML in
                          turn. Without -f the input is null.
  -r, --raw-output        print string outputs without quotes
  --engine NAME           native (default, as the daemon) or libjq
  eval prints each output as one line of compact JSON. EXPR gets the
  daemon's checks (at most 16 KiB, no assignments, del, range, paths,
  recurse, walk, repeat, .., env, input, debug, ...) and bounds (999
  outputs, 4 MiB of outputs, 2 s, 64 MiB of values built; libjq: 256 MiB
  of memory); an evaluation gives all its outputs or its first error. Put
  -- before an EXPR that starts with -.

Offline flags (definitions, validate, describe -f):
  --offline               use the built-in catalog instead of the daemon
  --definitions PATH      add definitions from a file or directory
                          (repeatable; implies --offline)
  --no-catalog            leave out the built-in catalog (implies --offline)

Output and configuration:
  -o, --output FORMAT     table (default), json or yaml; get also takes wide
                          (adds CLUSTER, DEFINITION and ORIGIN)
  --config FILE           config file (default $WMCTL_CONFIG, else
                          $XDG_CONFIG_HOME/wmctl/config.yaml); --config=
                          reads none

Each setting is taken from its flag, else the environment (WM_ADDRESS,
WMCTL_CLUSTER, WMCTL_NAMESPACE, WMCTL_OUTPUT), else the config file (keys
address, cluster, namespace, output and tls: {enabled, ca, cert, key,
server-name}), else the default. The mode: --address, else a
kubeconfig-mode flag, else $WM_ADDRESS, else the config file's address,
else kubeconfig mode; --address with a kubeconfig-mode flag is a usage
error. In kubeconfig mode the namespace is -n, else $WMCTL_NAMESPACE, else
the context's (the config file's namespace and cluster are daemon-mode
settings).

TYPE is a Kind (JobSet), a plural resource (jobsets), or either followed by
.GROUP (jobsets.jobset.x-k8s.io); "TYPE NAME" works as well as TYPE/NAME.

Exit codes: 0 ok, 1 error, invalid, daemon or API server unreachable, 2
usage or bad configuration (a kubeconfig that cannot be read), 3 not
found, 4 no definition covers the type.
)";

}  // namespace

int Invocation::Run(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    err_ << kUsage;
    return 2;
  }
  std::string command = argv[0];
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (command == "__complete") return Complete(rest);
  if (command == "help" || command == "--help" || command == "-h") {
    out_ << kUsage;
    return 0;
  }
  if (command == "--version") command = "version";
  if (command == "definitions" && !rest.empty() && rest.front() == "apply") {
    command = "definitions apply";
    rest.erase(rest.begin());
  }
  std::string bad = ParseArgs(rest, args_);
  if (args_.Has("--help")) {
    out_ << kUsage;
    return 0;
  }
  if (!bad.empty()) return Usage(bad);
  spec_ = FindCommand(command);
  if (spec_ == nullptr) return Usage(absl::StrCat("unknown command \"", command, "\""));
  if (command == "completion") return Completion();
  if (int code = CheckFlags(command)) return code;
  if (int code = LoadSettings(false)) return code;
  if (int code = CheckModeFlags(command)) return code;
  if (command == "version") return Version();
  if (command == "get") return Get();
  if (command == "gang") return Gang();
  if (command == "describe") return args_.Has("--filename") ? Describe() : LiveDescribe();
  if (command == "definitions apply") return DefinitionsApply();
  if (command == "definitions") return Offline() ? OfflineDefinitions() : Definitions();
  if (command == "validate") return Validate();
  if (command == "eval") return RunEval(args_, in_, out_, err_);
  return Usage(absl::StrCat("unknown command \"", command, "\""));
}

int Invocation::CheckFlags(const std::string& command) {
  const auto& allowed = spec_->flags;
  bool offline = command == "describe"                               ? args_.Has("--filename")
                 : command == "definitions" || command == "validate" ? Offline()
                                                                     : false;
  std::string form = command == "describe" && offline ? "describe -f" : command;
  for (const std::string& flag : args_.order) {
    if (flag == "--output") continue;  // checked with the other settings
    if (std::find(allowed.begin(), allowed.end(), flag) == allowed.end()) {
      return Usage(absl::StrCat(form, " does not take ", flag));
    }
    if (offline && (IsConnectionFlag(flag) || flag == "--namespace")) {
      return Usage(absl::StrCat(form, " works offline and does not take ", flag));
    }
  }
  if (args_.Has("--request-timeout") && !ParseRequestTimeout(args_.Last("--request-timeout"))) {
    return Usage("--request-timeout needs a duration (30s, 2m, 1h), a number of seconds or 0");
  }
  for (const char* number : {"--pod-limit", "--component-limit"}) {
    int value = 0;
    if (args_.Has(number) && (!absl::SimpleAtoi(args_.Last(number), &value) || value < 0)) {
      return Usage(absl::StrCat(number, " needs a number >= 0"));
    }
  }
  return 0;
}

int RunWmctl(const std::vector<std::string>& argv, std::istream& in, std::ostream& out,
             std::ostream& err, const Environment& environment) {
  return Invocation(in, out, err, environment).Run(argv);
}

}  // namespace wm::wmctl
