#ifndef WM_CLIENT_WMCTL_CONFIG_H_
#define WM_CLIENT_WMCTL_CONFIG_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm::wmctl {

// Reads an environment variable: null when unset. Tests pass their own.
using Getenv = std::function<const char*(const char*)>;

// The environment variables wmctl reads. The daemon's own variables are
// WM_*; wmctl's are WMCTL_*, except WM_ADDRESS and WM_TOKEN_FILE, which say
// where a client finds the daemon and what it shows it.
inline constexpr char kAddressEnv[] = "WM_ADDRESS";
inline constexpr char kClusterEnv[] = "WMCTL_CLUSTER";
inline constexpr char kNamespaceEnv[] = "WMCTL_NAMESPACE";
inline constexpr char kOutputEnv[] = "WMCTL_OUTPUT";
inline constexpr char kConfigEnv[] = "WMCTL_CONFIG";
inline constexpr char kTokenFileEnv[] = "WM_TOKEN_FILE";

// True for table, wide, json and yaml.
bool IsOutputFormat(absl::string_view format);

// The settings of a config file; absent keys stay unset. A YAML mapping:
//
//   address: wm.example.com:50051
//   cluster: prod-eu
//   namespace: ml-team
//   output: wide
//   tls:
//     enabled: true        # implied by any of the keys below
//     ca: ca.crt           # relative paths: from the file's directory
//     cert: client.crt
//     key: client.key
//     server-name: workloadmapd.example.com
//   token-file: /var/run/secrets/workloadmap/token
struct FileSettings {
  std::optional<std::string> address, cluster, namespace_, output, token_file;
  std::optional<bool> tls;
  std::optional<std::string> tls_ca, tls_cert, tls_key, tls_server_name;
};

// Which config file to read: `flag` (--config; an empty value means none) >
// $WMCTL_CONFIG > $XDG_CONFIG_HOME/wmctl/config.yaml (XDG_CONFIG_HOME
// defaults to $HOME/.config). `required` is false only for the default
// location, whose absence is not an error. An empty path: no file.
struct ConfigLocation {
  std::string path;
  bool required = false;
};
ConfigLocation LocateConfig(const std::optional<std::string>& flag, const Getenv& getenv);

// Reads a config file. NotFound when it does not exist; InvalidArgument,
// naming the file and the key, for an unknown key, a value of the wrong
// type or an unknown output format.
absl::StatusOr<FileSettings> ReadConfigFile(const std::string& path);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_CONFIG_H_
