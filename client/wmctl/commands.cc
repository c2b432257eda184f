#include "client/wmctl/commands.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "catalog/catalog.h"
#include "client/wmctl/apply_command.h"
#include "client/wmctl/cluster_session.h"
#include "client/wmctl/completion.h"
#include "client/wmctl/config.h"
#include "client/wmctl/definitions_view.h"
#include "client/wmctl/describe_view.h"
#include "client/wmctl/engine_factory.h"
#include "client/wmctl/errors.h"
#include "client/wmctl/eval_command.h"
#include "client/wmctl/flags.h"
#include "client/wmctl/input.h"
#include "client/wmctl/live_client.h"
#include "client/wmctl/live_view.h"
#include "client/wmctl/validate_command.h"
#include "server/common/yaml_json.h"
#include "server/definitions/registry.h"
#include "server/resolution/resolver.h"

namespace wm::wmctl {
namespace {

namespace v1 = ::workloadmap::v1;

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

// Completion asks the daemon with a short deadline: a TAB must not hang.
constexpr absl::Duration kCompletionDeadline = absl::Seconds(2);

int OriginRank(absl::string_view origin) {
  return origin == "cluster" ? 2 : origin == "file" ? 1 : 0;
}

// Who answers get, describe TYPE/NAME, gang, and definitions and validate
// unless offline: workloadmapd (daemon mode), or the daemon's libraries in
// this process over a kubeconfig context (kubeconfig mode).
enum class Mode { kDaemon, kKubeconfig };

const char* ModeName(Mode mode) { return mode == Mode::kDaemon ? "daemon" : "kubeconfig"; }

// Kubeconfig mode waits this long for its lists unless --request-timeout.
constexpr absl::Duration kKubeconfigTimeout = absl::Seconds(60);

// The settings that are not per command: the mode and where its cluster
// is, and how to print, each from its flag, else the environment, else the
// config file, else the default.
struct Settings {
  Mode mode = Mode::kKubeconfig;
  std::string mode_reason;  // "--address", "$WM_ADDRESS", "no daemon address configured", ...
  Connection connection;
  std::string address_source;   // for messages: "WM_ADDRESS", "config file X", ...
  bool tls_from_flags = false;  // a --tls* flag was given
  KubeconfigSettings kube;
  std::optional<absl::Duration> request_timeout;  // --request-timeout; infinite for 0
  std::string cluster;
  std::string namespace_ = "default";
  // Where namespace_ came from: "--namespace", the environment variable or
  // the config file; empty for the default, which in kubeconfig mode is
  // the context's namespace.
  std::string namespace_source;
  std::string output = "table";
};

// --request-timeout as kubectl reads it: a duration ("30s", "2m", "1h"), a
// bare number of seconds, or 0 for no limit.
std::optional<absl::Duration> ParseRequestTimeout(const std::string& text) {
  int64_t seconds = 0;
  absl::Duration d;
  if (absl::SimpleAtoi(text, &seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, &d)) {
    return std::nullopt;
  }
  if (d < absl::ZeroDuration()) return std::nullopt;
  return d == absl::ZeroDuration() ? absl::InfiniteDuration() : d;
}

class Wmctl {
 public:
  Wmctl(std::istream& in, std::ostream& out, std::ostream& err, const Environment& environment)
      : in_(in), out_(out), err_(err), env_(environment) {}

  int Run(const std::vector<std::string>& argv) {
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

 private:
  int Usage(const std::string& message) { return UsageError(err_, message); }

  int Fail(int code, const std::string& message) { return wmctl::Fail(err_, code, message); }

  // definitions and validate work in-process with --offline, --definitions
  // or --no-catalog.
  bool Offline() const {
    return args_.Has("--offline") || args_.Has("--definitions") || args_.Has("--no-catalog");
  }

  // A usage error (2) for a flag the command, or its form, does not take.
  int CheckFlags(const std::string& command) {
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

  std::string Env(const char* name) const {
    const char* value = env_.getenv(name);
    return value == nullptr ? "" : value;
  }

  // Fills settings_ from flags, environment, config file and defaults.
  // Returns an exit code (2) after printing the error, unless `quiet`.
  int LoadSettings(bool quiet) {
    auto fail = [&](const std::string& message) {
      if (!quiet) err_ << "error: " << message << "\n";
      return 2;
    };
    std::optional<std::string> config_flag;
    if (args_.Has("--config")) config_flag = args_.Last("--config");
    ConfigLocation location = LocateConfig(config_flag, env_.getenv);
    FileSettings file;
    std::string file_name = absl::StrCat("config file ", location.path);
    if (!location.path.empty()) {
      auto read = ReadConfigFile(location.path);
      if (read.ok()) {
        file = *std::move(read);
      } else if (location.required || !absl::IsNotFound(read.status())) {
        return fail(std::string(read.status().message()));
      }
    }
    // flag > environment > file > default, naming where the value came from.
    auto pick = [&](const char* flag, const char* env, const std::optional<std::string>& from_file,
                    std::string& out, std::string* source) {
      if (args_.Has(flag)) {
        out = args_.Last(flag);
        if (source) *source = flag;
      } else if (std::string value = env ? Env(env) : ""; !value.empty()) {
        out = value;
        if (source) *source = env;
      } else if (from_file) {
        out = *from_file;
        if (source) *source = file_name;
      }
    };
    Connection& c = settings_.connection;
    pick("--address", kAddressEnv, file.address, c.address, &settings_.address_source);
    pick("--cluster", kClusterEnv, file.cluster, settings_.cluster, nullptr);
    pick("--namespace", kNamespaceEnv, file.namespace_, settings_.namespace_,
         &settings_.namespace_source);
    std::string output_source;
    pick("--output", kOutputEnv, file.output, settings_.output, &output_source);
    if (settings_.namespace_.empty()) return fail("--namespace needs a name");
    // An -o the command does not take is a usage error; a format from the
    // environment or the file is a preference, and falls back to table.
    // (Completion only needs the connection.)
    if (!quiet) {
      const auto& formats = spec_->formats;
      bool takes = std::find(formats.begin(), formats.end(), settings_.output) != formats.end();
      if (output_source == "--output") {
        if (formats.empty()) return Usage(absl::StrCat(spec_->name, " does not take -o"));
        if (!IsOutputFormat(settings_.output)) {
          return Usage(absl::StrCat("unknown output format \"", settings_.output,
                                    "\" (table, wide, json, yaml)"));
        }
        if (!takes) {
          return Usage(absl::StrCat(spec_->name, " does not take -o ", settings_.output));
        }
      } else if (output_source == kOutputEnv && !IsOutputFormat(settings_.output)) {
        return fail(absl::StrCat(kOutputEnv, ": unknown output format \"", settings_.output,
                                 "\" (table, wide, json, yaml)"));
      }
      if (!takes) settings_.output = "table";
    }
    // TLS: any TLS flag turns it on; else the file's tls.enabled, which the
    // file's other tls keys imply.
    for (const char* flag : {"--tls", "--tls-ca", "--tls-cert", "--tls-key", "--tls-server-name"}) {
      settings_.tls_from_flags = settings_.tls_from_flags || args_.Has(flag);
    }
    bool file_tls_keys = file.tls_ca || file.tls_cert || file.tls_key || file.tls_server_name;
    c.tls = settings_.tls_from_flags || file.tls.value_or(file_tls_keys);
    pick("--tls-ca", nullptr, file.tls_ca, c.tls_ca_file, nullptr);
    pick("--tls-cert", nullptr, file.tls_cert, c.tls_cert_file, nullptr);
    pick("--tls-key", nullptr, file.tls_key, c.tls_key_file, nullptr);
    pick("--tls-server-name", nullptr, file.tls_server_name, c.tls_server_name, nullptr);
    pick("--token-file", kTokenFileEnv, file.token_file, c.token_file, nullptr);
    // The mode: --address, else a kubeconfig-mode flag, else an address from
    // the environment or the config file, else kubeconfig mode.
    std::string kube_flag;
    for (const std::string& flag : args_.order) {
      if (IsKubeconfigFlag(flag) && kube_flag.empty()) kube_flag = flag;
    }
    if (args_.Has("--address") && !kube_flag.empty()) {
      if (quiet) return 2;
      return Usage(absl::StrCat("--address (daemon mode) and ", kube_flag,
                                " (kubeconfig mode) do not go together"));
    }
    if (args_.Has("--address")) {
      settings_.mode = Mode::kDaemon;
      settings_.mode_reason = "--address";
    } else if (!kube_flag.empty()) {
      settings_.mode = Mode::kKubeconfig;
      settings_.mode_reason = kube_flag;
    } else if (!settings_.address_source.empty()) {
      settings_.mode = Mode::kDaemon;
      settings_.mode_reason = settings_.address_source == kAddressEnv
                                  ? absl::StrCat("$", kAddressEnv)
                                  : settings_.address_source;
    } else {
      settings_.mode = Mode::kKubeconfig;
      settings_.mode_reason = "no daemon address configured";
    }
    if (settings_.mode == Mode::kKubeconfig) {
      // The config file's namespace is a daemon-mode setting; kubeconfig
      // mode defaults to the context's.
      if (settings_.namespace_source == file_name) {
        settings_.namespace_source.clear();
        settings_.namespace_ = "default";
      }
      settings_.cluster.clear();  // WMCTL_CLUSTER names a daemon's cluster
    }
    KubeconfigSettings& kube = settings_.kube;
    kube.kubeconfig = args_.Last("--kubeconfig");
    kube.context = args_.Last("--context");
    kube.as = args_.Last("--as");
    if (args_.Has("--as-group")) kube.as_groups = args_.flags.at("--as-group");
    kube.getenv = [this](const std::string& name) -> std::optional<std::string> {
      const char* value = env_.getenv(name.c_str());
      if (value == nullptr) return std::nullopt;
      return std::string(value);
    };
    if (args_.Has("--request-timeout")) {
      settings_.request_timeout = ParseRequestTimeout(args_.Last("--request-timeout"));
      if (settings_.mode == Mode::kDaemon && settings_.request_timeout) {
        c.deadline = *settings_.request_timeout;
      }
    }
    return 0;
  }

  // A usage error (2) for a flag of the other mode, or one the mode does
  // not take.
  int CheckModeFlags(const std::string& command) {
    bool connects = command == "get" || command == "gang" || command == "version" ||
                    (command == "describe" && !args_.Has("--filename")) ||
                    ((command == "definitions" || command == "validate") && !Offline());
    if (!connects) return 0;
    for (const std::string& flag : args_.order) {
      if (settings_.mode == Mode::kKubeconfig && IsDaemonFlag(flag)) {
        return Usage(absl::StrCat(flag,
                                  " is for daemon mode (--address); wmctl is in kubeconfig mode (",
                                  settings_.mode_reason, ")",
                                  flag == "--cluster" ? ": --context picks the cluster" : ""));
      }
      bool base_flag = flag == "--definitions" || flag == "--no-catalog";
      if (settings_.mode == Mode::kDaemon && base_flag &&
          (command == "get" || command == "describe" || command == "gang")) {
        return Usage(
            absl::StrCat(command, " asks workloadmapd (daemon mode, ", settings_.mode_reason,
                         ") and does not take ", flag,
                         " (give it to workloadmapd, use describe -f, or kubeconfig mode)"));
      }
    }
    return 0;
  }

  // Why the connection settings cannot work, or "". Checked only by the
  // commands that connect: a bad WM_ADDRESS does not stop offline ones.
  std::string ConnectionProblem() const {
    if (settings_.mode == Mode::kKubeconfig) return "";
    const Connection& c = settings_.connection;
    if (std::string bad = CheckAddress(c.address); !bad.empty()) {
      const std::string& source = settings_.address_source;
      return source.empty() || source == "--address" ? bad : absl::StrCat(bad, " in ", source);
    }
    // A TLS setting in the file does not stop a --address unix:... run.
    if (c.tls && absl::StartsWith(c.address, "unix:") && settings_.tls_from_flags) {
      return "TLS does not apply to unix: addresses (the daemon serves them in plaintext)";
    }
    if (c.tls && c.tls_cert_file.empty() != c.tls_key_file.empty()) {
      return "--tls-cert and --tls-key go together";
    }
    return "";
  }

  absl::StatusOr<expressions::Engine*> Engine() {
    if (!engine_) {
      auto engine = MakeEngine(kDefaultEngine);
      if (!engine.ok()) return engine.status();
      engine_ = *std::move(engine);
    }
    return engine_.get();
  }

  // Loads the catalog (unless --no-catalog) and every --definitions path.
  absl::StatusOr<definitions::Registry*> LoadRegistry() {
    auto engine = Engine();
    if (!engine.ok()) return engine.status();
    registry_ = std::make_unique<definitions::Registry>(**engine);
    if (!args_.Has("--no-catalog")) {
      absl::Status s = registry_->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
      if (!s.ok()) return s;
    }
    if (args_.Has("--definitions")) {
      for (const std::string& path : args_.flags.at("--definitions")) {
        absl::Status s = registry_->AddPath(path);
        if (!s.ok()) return s;
      }
    }
    return registry_.get();
  }

  std::vector<RejectedRow> RegistryRejected() const {
    std::vector<RejectedRow> out;
    for (const auto& r : registry_->rejected()) {
      RejectedRow row{r.name, r.source, {}};
      for (const auto& f : r.findings) {
        if (f.is_error()) row.findings.push_back(f.ToString());
      }
      out.push_back(std::move(row));
    }
    return out;
  }

  void Print(const Json& value) {
    if (settings_.output == "yaml") {
      out_ << ToYaml(value);
    } else {
      out_ << value.dump(2) << "\n";
    }
  }

  // ---- Daemon connection ----------------------------------------------------

  // The client of the daemon, or of the in-process service over the
  // cluster in kubeconfig mode (listing `all_namespaces` or the namespace);
  // an exit code after printing the error.
  int Connect(bool all_namespaces = false) {
    if (settings_.mode == Mode::kKubeconfig) return ConnectToCluster(all_namespaces, false);
    if (std::string bad = ConnectionProblem(); !bad.empty()) return Fail(2, bad);
    auto client = LiveClient::Create(settings_.connection);
    if (!client.ok()) return Fail(2, std::string(client.status().message()));
    client_ = *std::move(client);
    return 0;
  }

  // The connection of kubeconfig mode, with the namespace defaulted to the
  // context's; an exit code (2) after printing the error unless `quiet`.
  int LoadKubeconfig(bool quiet) {
    if (cluster_connection_) return 0;
    auto connection = LoadClusterConnection(settings_.kube);
    if (!connection.ok()) {
      if (quiet) return 2;
      return Fail(2, absl::StrCat(connection.status().message(),
                                  " (kubeconfig mode: no daemon address configured by --address, $",
                                  kAddressEnv, " or the config file)"));
    }
    if (settings_.namespace_source.empty()) settings_.namespace_ = connection->namespace_;
    cluster_connection_ = *std::move(connection);
    return 0;
  }

  // Kubeconfig mode: the daemon's libraries over the context, in-process.
  int ConnectToCluster(bool all_namespaces, bool quiet) {
    if (int code = LoadKubeconfig(quiet)) return code;
    ClusterSession::Options options;
    options.namespace_ = all_namespaces ? "" : settings_.namespace_;
    options.base = [this](definitions::Registry& registry) { return LoadBase(registry); };
    absl::Duration timeout = settings_.request_timeout.value_or(kKubeconfigTimeout);
    if (quiet) timeout = std::min(timeout, kCompletionDeadline);
    options.timeout = timeout;
    std::ostringstream quiet_progress;
    auto session =
        ClusterSession::Start(*cluster_connection_, options, quiet ? quiet_progress : err_);
    if (!session.ok()) return quiet ? 1 : Fail(1, std::string(session.status().message()));
    session_ = *std::move(session);
    client_ = LiveClient::InProcess(session_->channel(), timeout);
    return 0;
  }

  // Kubeconfig mode's base definitions: the catalog (unless --no-catalog)
  // and every --definitions path, as the daemon's. Called again whenever
  // the cluster's Karta objects change (on a cache thread).
  absl::Status LoadBase(definitions::Registry& registry) {
    if (!args_.Has("--no-catalog")) {
      absl::Status s = registry.AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
      if (!s.ok()) return s;
    }
    if (args_.Has("--definitions")) {
      for (const std::string& path : args_.flags.at("--definitions")) {
        absl::Status s = registry.AddPath(path);
        if (!s.ok()) return s;
      }
    }
    std::lock_guard lock(base_mu_);
    base_rejected_ = registry.rejected();
    return absl::OkStatus();
  }

  // After a kubeconfig-mode answer: what it lacks, and the --definitions
  // that were rejected.
  void PrintSessionWarnings() {
    if (!session_) return;
    for (const std::string& w : session_->Warnings()) err_ << "warning: " << w << "\n";
    std::vector<definitions::Registry::Rejected> rejected;
    {
      std::lock_guard lock(base_mu_);
      rejected = base_rejected_;
    }
    for (const auto& r : rejected) {
      std::vector<std::string> errors;
      for (const auto& f : r.findings) {
        if (f.is_error()) errors.push_back(f.ToString());
      }
      err_ << "warning: definition " << r.name << " (" << r.source
           << ") rejected: " << absl::StrJoin(errors, "; ") << "\n";
    }
  }

  // -o json and yaml of get, describe TYPE/NAME and gang name the mode that
  // answered.
  Json WithMode(Json view) const {
    view["mode"] = ModeName(settings_.mode);
    return view;
  }

  // `wmctl version`: the build and which mode would answer.
  int Version() {
    out_ << "wmctl " << WM_VERSION << "\n";
    if (settings_.mode == Mode::kDaemon) {
      out_ << "mode: daemon (workloadmapd at " << settings_.connection.address << ", from "
           << settings_.mode_reason << ")\n";
      return 0;
    }
    auto connection = LoadClusterConnection(settings_.kube);
    if (!connection.ok()) {
      out_ << "mode: kubeconfig (" << settings_.mode_reason
           << "), but no usable kubeconfig: " << connection.status().message() << "\n";
      return 0;
    }
    std::string namespace_ =
        settings_.namespace_source.empty() ? connection->namespace_ : settings_.namespace_;
    out_ << "mode: kubeconfig (context " << connection->context << " at " << connection->server
         << ", namespace " << namespace_ << "; " << settings_.mode_reason << ")\n";
    return 0;
  }

  int CallFailed(const grpc::Status& status) {
    return Fail(ExitCodeFor(status), ErrorMessageFor(status, client_->connection()));
  }

  // TYPE/NAME, or TYPE NAME; `name_required` makes a bare TYPE a usage error.
  // Returns an error message, empty on success.
  std::string TypeAndName(const std::string& command, bool name_required, std::string& type,
                          std::string& name) {
    const std::vector<std::string>& p = args_.positional;
    std::string form = name_required ? "TYPE/NAME" : "[TYPE[/NAME]]";
    if (p.size() > 2) return absl::StrCat(command, " takes ", form);
    if (p.size() == 2) {
      if (absl::StrContains(p[0], '/') || absl::StrContains(p[1], '/')) {
        return absl::StrCat(command, " takes TYPE/NAME or TYPE NAME");
      }
      type = p[0];
      name = p[1];
    } else if (p.size() == 1) {
      size_t slash = p[0].rfind('/');
      type = p[0].substr(0, slash);
      if (slash != std::string::npos) {
        name = p[0].substr(slash + 1);
        if (name.empty()) return absl::StrCat(command, ": \"", p[0], "\" has no NAME after /");
      }
    }
    if (type.empty() && !p.empty()) return absl::StrCat(command, ": TYPE is empty");
    if (name_required && name.empty()) return absl::StrCat(command, " needs ", form);
    return "";
  }

  // A Kind starts with an uppercase letter, else TYPE is a plural resource
  // (as the daemon matches them); ".GROUP" after either sets the group.
  static void SetType(const std::string& type, v1::ObjectRef* ref) {
    size_t dot = type.find('.');
    std::string head = type.substr(0, dot);
    if (dot != std::string::npos) ref->set_group(type.substr(dot + 1));
    if (absl::ascii_isupper(static_cast<unsigned char>(head[0]))) {
      ref->set_kind(head);
    } else {
      ref->set_resource(head);
    }
  }

  // The kinds filter of ListWorkloads: "Kind", "group/Kind", "resource" or
  // "resource.group".
  static std::string KindFilter(const std::string& type) {
    size_t dot = type.find('.');
    if (dot == std::string::npos || !absl::ascii_isupper(static_cast<unsigned char>(type[0]))) {
      return type;
    }
    return absl::StrCat(type.substr(dot + 1), "/", type.substr(0, dot));
  }

  // ---- get, describe TYPE/NAME, gang ------------------------------------------

  int Get() {
    std::string type, name;
    std::string bad = TypeAndName("get", false, type, name);
    if (!bad.empty()) return Usage(bad);
    bool all_namespaces = args_.Has("--all-namespaces");
    if (all_namespaces && args_.Has("--namespace")) {
      return Usage("get takes -n NAMESPACE or -A, not both");
    }
    if (args_.Has("--all-types") && !type.empty()) {
      return Usage("get takes TYPE or --all-types, not both");
    }
    std::string selector = args_.Last("--selector");
    if (!name.empty() && !selector.empty()) return Usage("get takes NAME or -l, not both");
    if (int code = Connect(all_namespaces)) return code;
    v1::ListWorkloadsRequest request;
    request.set_cluster(settings_.cluster);
    if (!all_namespaces) request.set_namespace_(settings_.namespace_);
    if (!type.empty()) request.add_kinds(KindFilter(type));
    if (args_.Has("--phase")) {
      for (const std::string& value : args_.flags.at("--phase")) {
        for (absl::string_view p : absl::StrSplit(value, ',', absl::SkipEmpty())) {
          request.add_statuses(std::string(p));
        }
      }
    }
    request.set_label_selector(selector);
    std::vector<v1::WorkloadSummary> rows;
    grpc::Status status = client_->ListAllWorkloads(request, &rows);
    if (!status.ok()) return CallFailed(status);
    std::string where =
        all_namespaces ? "in any namespace" : absl::StrCat("in namespace ", settings_.namespace_);
    if (!name.empty()) {
      rows.erase(std::remove_if(rows.begin(), rows.end(),
                                [&](const auto& row) { return row.ref().name() != name; }),
                 rows.end());
      if (rows.empty()) return Fail(3, absl::StrCat(type, " ", name, " not found ", where));
    }
    if (settings_.output == "json" || settings_.output == "yaml") {
      // kli: a NAME prints its view bare, a listing {"items", "count"}.
      if (!name.empty() && rows.size() == 1) {
        Print(WithMode(GetRowJson(rows[0])));
      } else {
        Json items = Json::array();
        for (const auto& row : rows) items.push_back(GetRowJson(row));
        Print(WithMode({{"items", items}, {"count", items.size()}}));
      }
    } else if (rows.empty()) {
      err_ << "No workloads found " << where << ".\n";
    } else {
      out_ << GetTable(rows, {.all_namespaces = all_namespaces,
                              .wide = settings_.output == "wide",
                              .now = env_.now()});
    }
    for (const auto& row : rows) {
      if (!row.error().empty()) {
        err_ << "warning: " << row.ref().kind() << " " << row.ref().namespace_() << "/"
             << row.ref().name() << ": " << row.error() << "\n";
      }
      for (const auto& c : row.components()) {
        if (c.error().empty()) continue;
        err_ << "warning: " << row.ref().kind() << " " << row.ref().namespace_() << "/"
             << row.ref().name() << ": component " << c.name() << ": " << c.error() << "\n";
      }
    }
    PrintSessionWarnings();
    return 0;
  }

  DescribeOptions Options(bool file_mode, bool has_pods) {
    DescribeOptions options;
    options.file_mode = file_mode;
    options.has_pods = has_pods;
    options.pod_limit = std::stoi(args_.Last("--pod-limit", "0"));
    options.component_limit = std::stoi(args_.Last("--component-limit", "0"));
    options.now = env_.now();
    return options;
  }

  int LiveDescribe() {
    if (args_.positional.empty()) return Usage("describe needs TYPE/NAME or -f FILE");
    std::string type, name;
    std::string bad = TypeAndName("describe", true, type, name);
    if (!bad.empty()) return Usage(bad);
    if (int code = Connect()) return code;
    v1::ResolveWorkloadRequest request;
    v1::ObjectRef* ref = request.mutable_ref();
    SetType(type, ref);
    ref->set_namespace_(settings_.namespace_);
    ref->set_name(name);
    ref->set_cluster(settings_.cluster);
    request.set_include_pods(true);
    // Every pod: --pod-limit is applied here, unhealthy first, so that the
    // "... and K more (U unhealthy shown)" line can count what it hides.
    request.set_pod_limit(0);
    v1::ResolveWorkloadResponse response;
    grpc::Status status = client_->ResolveWorkload(request, &response);
    if (!status.ok()) {
      PrintSessionWarnings();
      if (ExitCodeFor(status) == 4 && settings_.output != "table") {
        Print({{"error", "no_definition_for_type"},
               {"type", type},
               {"message", "no Karta definition covers this workload type"},
               {"hint",
                "give the daemon one with --definitions PATH, or add a Karta to the "
                "cluster"}});
      }
      return CallFailed(status);
    }
    DescribeOptions options = Options(false, true);
    if (settings_.output == "table") {
      out_ << DescribeText(response.workload(), options);
    } else {
      Print(WithMode(DescribeJson(response.workload(), options)));
    }
    for (const auto& w : response.workload().warnings()) err_ << "warning: " << w << "\n";
    PrintSessionWarnings();
    return 0;
  }

  int Gang() {
    if (args_.positional.size() != 1) return Usage("gang takes one POD");
    std::string pod = args_.positional[0];
    for (const char* prefix : {"pod/", "pods/", "Pod/"}) {
      if (absl::StartsWith(pod, prefix)) pod = pod.substr(strlen(prefix));
    }
    if (pod.empty() || absl::StrContains(pod, '/')) return Usage("gang takes one POD");
    if (int code = Connect()) return code;
    v1::GetGangInstructionsRequest request;
    request.mutable_pod()->set_cluster(settings_.cluster);
    request.mutable_pod()->set_namespace_(settings_.namespace_);
    request.mutable_pod()->set_name(pod);
    v1::GetGangInstructionsResponse response;
    grpc::Status status = client_->GetGangInstructions(request, &response);
    if (!status.ok()) {
      PrintSessionWarnings();
      return CallFailed(status);
    }
    if (settings_.output == "table") {
      out_ << GangText(settings_.namespace_, pod, response);
    } else {
      Print(WithMode(GangJson(settings_.namespace_, pod, response)));
    }
    PrintSessionWarnings();
    if (!response.assignment().error().empty()) {
      return Fail(1,
                  absl::StrCat("pod ", pod, " has no pod group: ", response.assignment().error()));
    }
    return 0;
  }

  // ---- describe -f ------------------------------------------------------------

  int Describe() {
    if (!args_.positional.empty()) return Usage("describe -f takes no TYPE or NAME");
    auto text = ReadInput(args_.Last("--filename"), in_);
    if (!text.ok()) return Fail(2, std::string(text.status().message()));
    auto docs = ReadDocuments(*text);
    if (!docs.ok()) return Fail(2, std::string(docs.status().message()));
    if (docs->empty()) return Fail(2, "the file holds no object");
    for (const Json& d : *docs) {
      if (!d.is_object() || !d.contains("apiVersion") || !d.contains("kind")) {
        return Fail(2, "every object needs apiVersion and kind");
      }
    }
    auto registry = LoadRegistry();
    if (!registry.ok()) return Fail(1, std::string(registry.status().message()));
    std::string warnings = RejectedWarnings(RegistryRejected());
    // The workload: the first object that is not a Pod, else the first.
    size_t workload = 0;
    for (size_t i = 0; i < docs->size(); ++i) {
      if ((*docs)[i]["kind"] != "Pod") {
        workload = i;
        break;
      }
    }
    const Json& object = (*docs)[workload];
    Gvk gvk = GvkFromApiVersion(object["apiVersion"].get<std::string>(),
                                object["kind"].get<std::string>());
    auto def = (*registry)->ForKind(gvk);
    if (!def.ok()) {
      if (absl::IsNotFound(def.status())) {
        if (settings_.output != "table") {
          Print({{"error", "no_definition_for_type"},
                 {"gvk", gvk.ToString()},
                 {"message", "no Karta definition covers this workload type"},
                 {"hint", "add one with --definitions PATH"}});
        }
        err_ << warnings;
        return Fail(4, std::string(def.status().message()));
      }
      err_ << warnings;
      return Fail(2, std::string(def.status().message()));
    }
    resolution::WorkloadInput input{&object};
    for (size_t i = 0; i < docs->size(); ++i) {
      if (i == workload) continue;
      ((*docs)[i]["kind"] == "Pod" ? input.pods : input.owners).push_back(&(*docs)[i]);
    }
    auto engine = Engine();
    auto resolved = resolution::ResolveWorkload(**def, **engine, input);
    if (!resolved.ok()) {
      err_ << warnings;
      return Fail(1, std::string(resolved.status().message()));
    }
    DescribeOptions options = Options(true, !input.pods.empty());
    if (settings_.output == "table") {
      out_ << DescribeText(*resolved, options);
    } else {
      Print(DescribeJson(*resolved, options));
    }
    err_ << warnings;
    for (const auto& w : resolved->warnings()) err_ << "warning: " << w << "\n";
    return 0;
  }

  // ---- definitions ------------------------------------------------------------

  // --group, --kind and --version: an error message, or "".
  std::string CheckKindFilter() const {
    if (args_.Has("--kind") && !args_.Has("--group")) return "--kind needs --group";
    if (args_.Has("--version") && !args_.Has("--kind")) return "--version needs --kind";
    if (args_.positional.size() > 1) return "definitions takes at most one NAME";
    return "";
  }

  bool KindFilterKeeps(const DefinitionRow& row) const {
    auto keeps = [&](const char* flag, const std::string& value) {
      return !args_.Has(flag) || args_.Last(flag) == value;
    };
    return keeps("--group", row.group) && keeps("--kind", row.kind) &&
           keeps("--version", row.version);
  }

  // Prints the rows (filtered; one NAME if given) and then the warnings.
  int PrintDefinitions(std::vector<DefinitionRow> rows, const std::vector<RejectedRow>& rejected) {
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const DefinitionRow& r) { return !KindFilterKeeps(r); }),
               rows.end());
    SortDefinitions(rows);
    int component_limit = std::stoi(args_.Last("--component-limit", "3"));
    if (!args_.positional.empty()) {
      const std::string& name = args_.positional[0];
      // The copy in force: cluster over file over catalog.
      const DefinitionRow* found = nullptr;
      for (const DefinitionRow& r : rows) {
        if (r.name == name && (!found || OriginRank(r.origin) > OriginRank(found->origin))) {
          found = &r;
        }
      }
      if (found == nullptr) return Fail(3, absl::StrCat("definition ", name, " not found"));
      if (settings_.output == "table") {
        out_ << DefinitionsTable({*found}, component_limit);
      } else {
        // Offline, the Karta itself, so that it round-trips into validate.
        Print(found->object);
      }
      return 0;
    }
    if (settings_.output != "table") {
      Print(DefinitionsJson(rows, rejected));
    } else if (rows.empty()) {
      err_ << "No Karta definitions found.\n";
    } else {
      out_ << DefinitionsTable(rows, component_limit);
    }
    err_ << RejectedWarnings(rejected);
    return 0;
  }

  // Always over the kubeconfig's context: a write made as the user.
  int DefinitionsApply() {
    if (!args_.positional.empty()) {
      return Usage("definitions apply takes no arguments: it applies the built-in catalog");
    }
    if (int code = LoadKubeconfig(false)) return code;
    kube::ApiClient client(*cluster_connection_);
    return RunDefinitionsApply(client, args_.Has("--prune"), out_, err_);
  }

  int Definitions() {
    if (std::string bad = CheckKindFilter(); !bad.empty()) return Usage(bad);
    if (int code = Connect()) return code;
    v1::ListDefinitionsResponse response;
    grpc::Status status = client_->ListDefinitions({}, &response);
    if (!status.ok()) return CallFailed(status);
    PrintSessionWarnings();
    std::vector<DefinitionRow> rows;
    for (const v1::DefinitionInfo& d : response.definitions()) {
      DefinitionRow row{d.name(),
                        d.root_kind().group(),
                        d.root_kind().version(),
                        d.root_kind().kind(),
                        d.origin(),
                        {d.components().begin(), d.components().end()},
                        {}};
      // The daemon's API carries what it made of the Karta, not the Karta.
      row.object = {{"name", d.name()},
                    {"origin", d.origin()},
                    {"source", d.source()},
                    {"rootKind",
                     {{"group", d.root_kind().group()},
                      {"version", d.root_kind().version()},
                      {"kind", d.root_kind().kind()}}},
                    {"components", row.components},
                    {"gangScheduling", d.gang_scheduling()},
                    {"synced", d.synced()}};
      rows.push_back(std::move(row));
    }
    std::vector<RejectedRow> rejected;
    for (const v1::RejectedDefinition& r : response.rejected()) {
      RejectedRow row{r.name(), r.source(), {}};
      for (const v1::Finding& f : r.findings()) {
        if (f.severity() == "error") row.findings.push_back(FindingText(f));
      }
      rejected.push_back(std::move(row));
    }
    return PrintDefinitions(std::move(rows), rejected);
  }

  int OfflineDefinitions() {
    if (std::string bad = CheckKindFilter(); !bad.empty()) return Usage(bad);
    auto registry = LoadRegistry();
    if (!registry.ok()) return Fail(1, std::string(registry.status().message()));
    std::vector<DefinitionRow> rows;
    for (const auto& d : (*registry)->All()) {
      DefinitionRow row{d->name,        "",       "", "", definitions::OriginName(d->origin),
                        {d->root.name}, d->object};
      if (d->root.kind) {
        row.group = d->root.kind->group;
        row.version = d->root.kind->version;
        row.kind = d->root.kind->kind;
      }
      for (const auto& child : d->children) row.components.push_back(child.name);
      rows.push_back(std::move(row));
    }
    return PrintDefinitions(std::move(rows), RegistryRejected());
  }

  // ---- validate -----------------------------------------------------------------

  // One document's findings: from the daemon, or in-process with --offline.
  absl::StatusOr<std::vector<v1::Finding>> Findings(const DefinitionDocument& document,
                                                    int& exit_code) {
    if (!Offline()) {
      v1::ValidateDefinitionRequest request;
      request.set_definition_yaml(document.object.dump());
      v1::ValidateDefinitionResponse response;
      grpc::Status status = client_->ValidateDefinition(request, &response);
      if (!status.ok()) {
        exit_code = ExitCodeFor(status);
        return absl::UnavailableError(ErrorMessageFor(status, client_->connection()));
      }
      return std::vector<v1::Finding>(response.findings().begin(), response.findings().end());
    }
    auto engine = Engine();
    if (!engine.ok()) {
      exit_code = 1;
      return engine.status();
    }
    return OfflineFindings(document, **engine);
  }

  int Validate() {
    if (args_.positional.size() != 1) return Usage("validate takes one FILE or -");
    auto documents = ReadDefinitionDocuments(args_.positional[0], in_);
    if (!documents.ok()) return Fail(2, std::string(documents.status().message()));
    if (!Offline()) {
      if (int code = Connect()) return code;
    }
    return PrintVerdicts(
        *documents,
        [&](const DefinitionDocument& document, int& exit_code) {
          return Findings(document, exit_code);
        },
        out_, err_);
  }

  // ---- completion -----------------------------------------------------------------

  int Completion() {
    if (!args_.order.empty()) {
      return Usage(absl::StrCat("completion does not take ", args_.order[0]));
    }
    if (args_.positional.size() != 1) return Usage("completion takes bash, zsh or fish");
    std::string script = CompletionScript(args_.positional[0]);
    if (script.empty()) {
      return Usage(
          absl::StrCat("no completion for \"", args_.positional[0], "\" (bash, zsh or fish)"));
    }
    out_ << script;
    return 0;
  }

  // `wmctl __complete WORD... CURRENT` (see completion.h).
  int Complete(std::vector<std::string> words) {
    std::string current = words.empty() ? "" : words.back();
    if (!words.empty()) words.pop_back();
    // The words before, as far as they parse: a half-typed line still says
    // which daemon, namespace and command.
    (void)ParseArgs(words, args_);
    std::string command = args_.positional.empty() ? "" : args_.positional[0];
    spec_ = FindCommand(command);
    // The value of a flag: "--flag VALUE" or "--flag=VALUE".
    const FlagSpec* flag = words.empty() ? nullptr : FindFlag(words.back());
    if (flag != nullptr && flag->value == FlagValue::kNone) flag = nullptr;
    std::string prefix;  // "--flag=", put back before each candidate
    std::string word = current;
    if (flag == nullptr && absl::StartsWith(current, "--") && absl::StrContains(current, '=')) {
      flag = FindFlag(current.substr(0, current.find('=')));
      if (flag == nullptr || flag->value == FlagValue::kNone) return 0;
      prefix = current.substr(0, current.find('=') + 1);
      word = current.substr(prefix.size());
    }
    std::vector<std::string> candidates;
    if (flag != nullptr) {
      if (flag->value == FlagValue::kPath) return kCompleteFilesExit;
      candidates = FlagValues(*flag, word);
    } else if (absl::StartsWith(current, "-")) {
      if (spec_ == nullptr) {
        candidates = {"--help", "--version"};
      } else {
        for (absl::string_view f : spec_->flags) candidates.emplace_back(f);
        candidates.push_back("--help");
      }
    } else if (spec_ == nullptr) {
      if (command.empty()) {
        for (const CommandSpec& c : AllCommands()) {
          // "definitions apply" is completed as definitions' first word.
          if (c.name.find(' ') == absl::string_view::npos) candidates.emplace_back(c.name);
        }
      }
    } else {
      size_t position = args_.positional.size() - 1;
      if (command == "validate" && position == 0) return kCompleteFilesExit;
      candidates = Positionals(command, position, word);
    }
    for (const std::string& c : candidates) {
      if (absl::StartsWith(c, word)) out_ << prefix << c << "\n";
    }
    return 0;
  }

  // Candidates for the value of `flag`; `word` is what is typed of it.
  std::vector<std::string> FlagValues(const FlagSpec& flag, const std::string& word) {
    switch (flag.value) {
      case FlagValue::kFormat: {
        std::vector<std::string> out;
        if (spec_ == nullptr) return {"table", "wide", "json", "yaml"};
        for (absl::string_view f : spec_->formats) out.emplace_back(f);
        return out;
      }
      case FlagValue::kPhase: {
        // Comma-separated: complete the last status.
        size_t comma = word.rfind(',');
        std::string done = comma == std::string::npos ? "" : word.substr(0, comma + 1);
        std::vector<std::string> out;
        for (int s = 0; s < definitions::kMappedStatusCount; ++s) {
          out.push_back(done +
                        definitions::StatusName(static_cast<definitions::WorkloadStatus>(s)));
        }
        out.push_back(done + "Undefined");
        return out;
      }
      case FlagValue::kNamespace:
      case FlagValue::kCluster: {
        std::set<std::string> values;
        for (const auto& row : ListForCompletion("", false)) {
          values.insert(flag.value == FlagValue::kNamespace ? row.ref().namespace_()
                                                            : row.ref().cluster());
        }
        values.erase("");
        return {values.begin(), values.end()};
      }
      case FlagValue::kEngine:
        return {EngineNames().begin(), EngineNames().end()};
      case FlagValue::kContext: {
        if (LoadSettings(true) != 0) return {};
        kube::KubeconfigOptions options;
        if (!settings_.kube.kubeconfig.empty()) options.paths = {settings_.kube.kubeconfig};
        options.getenv = settings_.kube.getenv;
        auto contexts = kube::KubeconfigContexts(options);
        if (!contexts.ok()) return {};
        return *std::move(contexts);
      }
      default:
        return {};
    }
  }

  // Candidates for the positional argument at `position` (after the
  // command); `word` is what is typed of it.
  std::vector<std::string> Positionals(const std::string& command, size_t position,
                                       const std::string& word) {
    std::set<std::string> out;
    if (command == "completion" && position == 0) return {"bash", "fish", "zsh"};
    if (command == "definitions" && position == 0) {
      out.insert("apply");
      for (const DefinitionRow& row : DefinitionsForCompletion()) out.insert(row.name);
      return {out.begin(), out.end()};
    }
    if (command != "get" && (command != "describe" || args_.Has("--filename"))) return {};
    bool in_namespace = !args_.Has("--all-namespaces");
    size_t slash = word.find('/');
    if (position == 0 && slash == std::string::npos) {
      // TYPE: the kinds of the daemon's definitions.
      for (const DefinitionRow& row : DefinitionsForCompletion()) {
        if (!row.kind.empty()) out.insert(row.kind);
      }
    } else if (position == 0) {
      // TYPE/NAME.
      std::string type = word.substr(0, slash);
      for (const auto& row : ListForCompletion(type, in_namespace)) {
        out.insert(absl::StrCat(type, "/", row.ref().name()));
      }
    } else if (position == 1 && !absl::StrContains(args_.positional[1], '/')) {
      // TYPE NAME.
      for (const auto& row : ListForCompletion(args_.positional[1], in_namespace)) {
        out.insert(row.ref().name());
      }
    }
    return {out.begin(), out.end()};
  }

  // Daemon look-ups for completion: nothing on any error.
  bool ConnectQuietly(bool all_namespaces) {
    if (client_) return true;
    if (LoadSettings(true) != 0 || !ConnectionProblem().empty()) return false;
    if (settings_.mode == Mode::kKubeconfig) return ConnectToCluster(all_namespaces, true) == 0;
    settings_.connection.deadline = kCompletionDeadline;
    auto client = LiveClient::Create(settings_.connection);
    if (!client.ok()) return false;
    client_ = *std::move(client);
    return true;
  }

  std::vector<v1::WorkloadSummary> ListForCompletion(const std::string& type, bool in_namespace) {
    std::vector<v1::WorkloadSummary> rows;
    if (!ConnectQuietly(!in_namespace)) return rows;
    v1::ListWorkloadsRequest request;
    request.set_cluster(settings_.cluster);
    if (in_namespace) request.set_namespace_(settings_.namespace_);
    if (!type.empty()) request.add_kinds(KindFilter(type));
    if (!client_->ListAllWorkloads(request, &rows).ok()) rows.clear();
    return rows;
  }

  std::vector<DefinitionRow> DefinitionsForCompletion() {
    std::vector<DefinitionRow> rows;
    if (Offline()) {
      if (!LoadRegistry().ok()) return rows;
      for (const auto& d : registry_->All()) {
        rows.push_back({d->name, "", "", d->root.kind ? d->root.kind->kind : "", "", {}, {}});
      }
      return rows;
    }
    if (!ConnectQuietly(false)) return rows;
    v1::ListDefinitionsResponse response;
    if (!client_->ListDefinitions({}, &response).ok()) return rows;
    for (const v1::DefinitionInfo& d : response.definitions()) {
      rows.push_back({d.name(), "", "", d.root_kind().kind(), "", {}, {}});
    }
    return rows;
  }

  std::istream& in_;
  std::ostream& out_;
  std::ostream& err_;
  const Environment& env_;
  ParsedArgs args_;
  const CommandSpec* spec_ = nullptr;
  Settings settings_;
  std::unique_ptr<expressions::Engine> engine_;
  std::unique_ptr<definitions::Registry> registry_;
  std::optional<kube::ClusterConnection> cluster_connection_;
  std::mutex base_mu_;
  std::vector<definitions::Registry::Rejected> base_rejected_;  // under base_mu_
  // Kubeconfig mode's in-process service; the client, which may hold its
  // channel, goes first.
  std::unique_ptr<ClusterSession> session_;
  std::unique_ptr<LiveClient> client_;
};

}  // namespace

int RunWmctl(const std::vector<std::string>& argv, std::istream& in, std::ostream& out,
             std::ostream& err, const Environment& environment) {
  return Wmctl(in, out, err, environment).Run(argv);
}

}  // namespace wm::wmctl
