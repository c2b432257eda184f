#ifndef WM_SERVER_KUBE_AUTH_CREDENTIALS_H_
#define WM_SERVER_KUBE_AUTH_CREDENTIALS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wm::kube {

// The time source of the credential caches. Null means absl::Now; tests
// inject a fake so that rotation and expiry need no sleeping.
using Clock = std::function<absl::Time()>;

// What a request presents to the apiserver. Exec plugins may return a client
// certificate instead of (or as well as) a token. When a Credential carries a
// client certificate it takes precedence over the connection's static one.
struct Credential {
  std::string bearer_token;          // empty: none
  std::string client_cert_pem;       // empty: none
  std::string client_key_pem;        // empty: none
  std::optional<absl::Time> expiry;  // when known

  bool operator==(const Credential&) const = default;
};

// A source of credentials that may change over time (rotated token files,
// exec plugins). Thread-safe: the daemon's request threads share one source
// per cluster.
class CredentialSource {
 public:
  virtual ~CredentialSource() = default;

  // The credential to use now. Cached; refreshed when stale or expired.
  // Errors are never cached for long: after a failure a later call retries.
  virtual absl::StatusOr<Credential> Current() = 0;

  // Called after the apiserver answered 401 to a request made with
  // `rejected`: the next Current() re-reads / re-executes instead of
  // returning the cached value -- unless the cached value already changed
  // since `rejected` was handed out, in which case this does nothing.
  virtual void Invalidate(const Credential& rejected) = 0;
};

// A fixed bearer token (kubeconfig `token`). Never changes; Invalidate does
// nothing.
std::shared_ptr<CredentialSource> StaticToken(std::string token);

// A bearer token read from a file that is rotated in place (projected service
// account tokens, kubeconfig `tokenFile`). The file is re-read at most every
// `reread_interval` (client-go uses one minute) and at once after
// Invalidate. Surrounding whitespace is trimmed. An empty or unreadable file
// is an error naming the path -- except that, as in client-go, a failed
// periodic re-read keeps serving the last good token until the apiserver
// rejects it.
std::shared_ptr<CredentialSource> TokenFile(std::string path,
                                            absl::Duration reread_interval = absl::Minutes(1),
                                            Clock clock = nullptr);

// A kubeconfig `users[].user.exec` stanza: a client-go credential plugin.
struct ExecConfig {
  // client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1.
  std::string api_version;
  // A command containing a slash is a path (relative ones resolve against
  // base_dir); otherwise it is looked up in $PATH.
  std::string command;
  std::vector<std::string> args;
  // Added to (and overriding) the daemon's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  // "", "Never" or "IfAvailable": fine, the plugin runs without a terminal.
  // "Always": an error, since a daemon is never interactive.
  std::string interactive_mode;
  // Pass the cluster's connection details in KUBERNETES_EXEC_INFO.
  bool provide_cluster_info = false;
  // Shown when the command is not installed.
  std::string install_hint;
  // Directory of the kubeconfig file that defined this plugin.
  std::string base_dir;
};

// The cluster a plugin authenticates to, for provide_cluster_info.
struct ExecClusterInfo {
  std::string server;
  std::string certificate_authority_data_base64;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url;
};

// Knobs of ExecPlugin; the defaults are client-go's.
struct ExecOptions {
  Clock clock;  // null: absl::Now
  // The plugin is killed (with its whole process group) after this long.
  absl::Duration timeout = absl::Seconds(60);
  // A credential is refreshed this long before its expirationTimestamp.
  absl::Duration expiry_leeway = absl::Seconds(10);
  // After a failed run, calls within this interval return the same error
  // instead of running the plugin again (so a broken plugin is not forked
  // once per request).
  absl::Duration min_retry_interval = absl::Seconds(1);
};

// Runs a client-go credential plugin to obtain credentials.
//
// The plugin gets stdin from /dev/null, the daemon's environment plus
// config.env plus KUBERNETES_EXEC_INFO (an ExecCredential with
// spec.interactive=false and, with provide_cluster_info, spec.cluster). It
// must exit 0 and print an ExecCredential whose apiVersion equals
// config.api_version, with status.token and/or status.clientCertificateData
// plus status.clientKeyData, and optionally status.expirationTimestamp
// (RFC 3339). Stdout is capped at 1 MiB; up to 64 KiB of stderr is quoted in
// errors. The credential is cached until shortly before its expiry, or until
// Invalidate() with it. Concurrent callers wait for one run of the plugin.
std::shared_ptr<CredentialSource> ExecPlugin(ExecConfig config, ExecClusterInfo cluster,
                                             ExecOptions options = {});

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_AUTH_CREDENTIALS_H_
