// Invocation's settings (settings.h): from flags, the environment, the
// config file, else defaults; and the flags each mode takes.
#include "client/wmctl/settings.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/wmctl/config.h"
#include "client/wmctl/invocation.h"

namespace wm::wmctl {

const char* ModeName(Mode mode) { return mode == Mode::kDaemon ? "daemon" : "kubeconfig"; }

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

int Invocation::LoadSettings(bool quiet) {
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
    settings_.mode_reason = settings_.address_source == kAddressEnv ? absl::StrCat("$", kAddressEnv)
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

int Invocation::CheckModeFlags(const std::string& command) {
  bool connects = command == "get" || command == "gang" || command == "version" ||
                  (command == "describe" && !args_.Has("--filename")) ||
                  ((command == "definitions" || command == "validate") && !Offline());
  if (!connects) return 0;
  for (const std::string& flag : args_.order) {
    if (settings_.mode == Mode::kKubeconfig && IsDaemonFlag(flag)) {
      return Usage(absl::StrCat(
          flag, " is for daemon mode (--address); wmctl is in kubeconfig mode (",
          settings_.mode_reason, ")", flag == "--cluster" ? ": --context picks the cluster" : ""));
    }
    bool base_flag = flag == "--definitions" || flag == "--no-catalog";
    if (settings_.mode == Mode::kDaemon && base_flag &&
        (command == "get" || command == "describe" || command == "gang")) {
      return Usage(absl::StrCat(command, " asks workloadmapd (daemon mode, ", settings_.mode_reason,
                                ") and does not take ", flag,
                                " (give it to workloadmapd, use describe -f, or kubeconfig mode)"));
    }
  }
  return 0;
}

std::string Invocation::ConnectionProblem() const {
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

}  // namespace wm::wmctl
