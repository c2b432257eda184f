#ifndef WM_SERVER_KUBE_AUTH_KUBECONFIG_H_
#define WM_SERVER_KUBE_AUTH_KUBECONFIG_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/kube/auth/credentials.h"

namespace wm::kube {

// Whom requests act as (Kubernetes user impersonation: the Impersonate-*
// headers). The apiserver authorizes, admits and records such a request as
// this user, provided the client's own credential may `impersonate` it.
struct Impersonation {
  std::string user;  // empty: no impersonation
  std::vector<std::string> groups;
  std::string uid;
  std::map<std::string, std::vector<std::string>> extra;
};

// Everything needed to talk to one apiserver.
struct ClusterConnection {
  std::string context;  // the kubeconfig context's name, or "in-cluster"
  std::string server;   // e.g. https://127.0.0.1:6443, trailing slashes removed
  std::string ca_pem;   // empty: the system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url;
  // A static client certificate, if any. A Credential's certificate (from an
  // exec plugin) takes precedence over it.
  std::string client_cert_pem, client_key_pem;
  std::string namespace_;  // the context's namespace, "default" when unset
  // Whom every request acts as (kubeconfig as, as-groups, as-uid,
  // as-user-extra).
  Impersonation impersonate;
  // Bearer token / exec plugin. Null: the user has neither (a client
  // certificate alone, or anonymous).
  std::shared_ptr<CredentialSource> credentials;
};

// Looks up an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

struct KubeconfigOptions {
  // Explicit files (a --kubeconfig flag); each must exist. Empty: the files
  // of $KUBECONFIG split on ':' (empty entries ignored, missing files
  // skipped, as client-go does), else ~/.kube/config.
  std::vector<std::string> paths;
  // Empty: the merged config's current-context.
  std::string context;
  // Null: the process environment (KUBECONFIG, HOME). Tests inject one.
  EnvLookup getenv;
  // For the exec plugin of the chosen user, if any.
  ExecOptions exec_options;
};

// Loads and merges kubeconfig files (client-go rules: for clusters, users and
// contexts the first file defining a name wins; the first file with a
// non-empty current-context sets it; preferences are ignored) and resolves
// one context into a connection.
//
// Relative paths in a file (certificate-authority, client-certificate,
// client-key, tokenFile, an exec command containing a slash) resolve against
// the directory of that file. Files named by the chosen context are read
// now, so their errors surface here. Errors name the file and the field,
// e.g. "kubeconfig /x/config: users[0].user.client-key: open failed: ...".
//
// Decisions where client-go is lax or the feature is gone:
//  - token and tokenFile both set: token wins (client-go); either together
//    with exec is an error (one CredentialSource per connection);
//  - username/password (basic auth, removed from the apiserver in 1.19) and
//    auth-provider (removed from client-go in 1.26) are Unimplemented errors;
//  - a CA together with insecure-skip-tls-verify is an error (kubectl's);
//  - certificate-authority-data wins over certificate-authority, and
//    client-*-data over the file forms;
//  - a server without a scheme gets https://;
//  - exec interactiveMode Always is an error (a daemon has no terminal); an
//    empty interactiveMode is accepted for v1 too.
absl::StatusOr<ClusterConnection> LoadKubeconfig(const KubeconfigOptions& options);

// The context names of the merged config (options.context is ignored),
// sorted. For --context given several times / every context.
absl::StatusOr<std::vector<std::string>> KubeconfigContexts(const KubeconfigOptions& options);

// The merged config's current-context; empty when no file sets one.
absl::StatusOr<std::string> KubeconfigCurrentContext(const KubeconfigOptions& options);

struct InClusterOptions {
  std::string secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  // Null: the process environment. Reads KUBERNETES_SERVICE_HOST,
  // KUBERNETES_SERVICE_PORT and POD_NAMESPACE.
  EnvLookup getenv;
  // For the rotating token file.
  absl::Duration token_reread_interval = absl::Minutes(1);
  Clock clock;
};

// The connection of a pod to its own cluster: https://$KUBERNETES_SERVICE_HOST
// :$KUBERNETES_SERVICE_PORT (an IPv6 host gets brackets), the rotating token
// <secrets_dir>/token (read once now to fail early), CA <secrets_dir>/ca.crt,
// namespace $POD_NAMESPACE, else <secrets_dir>/namespace, else "default".
// Fails with FailedPrecondition outside a cluster (the variables unset).
absl::StatusOr<ClusterConnection> InClusterConnection(const InClusterOptions& options = {});

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_AUTH_KUBECONFIG_H_
