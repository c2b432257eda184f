#ifndef WM_CLIENT_WMCTL_SETTINGS_H_
#define WM_CLIENT_WMCTL_SETTINGS_H_

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "client/wmctl/cluster_session.h"
#include "client/wmctl/live_client.h"

namespace wm::wmctl {

// Who answers get, describe TYPE/NAME, gang, and definitions and validate
// unless offline: workloadmapd (daemon mode), or the daemon's libraries in
// this process over a kubeconfig context (kubeconfig mode).
enum class Mode { kDaemon, kKubeconfig };

// "daemon" or "kubeconfig", as -o json and yaml name the mode.
const char* ModeName(Mode mode);

// The settings that are not per command: the mode and where its cluster
// is, and how to print, each from its flag, else the environment, else the
// config file, else the default (Invocation::LoadSettings, settings.cc).
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
// bare number of seconds, or 0 for no limit (an infinite duration); nullopt
// for anything else.
std::optional<absl::Duration> ParseRequestTimeout(const std::string& text);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_SETTINGS_H_
