#ifndef WM_SERVER_DAEMON_CONFIG_H_
#define WM_SERVER_DAEMON_CONFIG_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wm::daemon {

// Serving TLS. Empty cert_file means plaintext; ParseConfig guarantees that
// cert_file and key_file are set together, that client_ca_file implies
// cert_file, and that require_client_cert implies client_ca_file (a client
// certificate that cannot be verified proves nothing).
struct TlsConfig {
  std::string cert_file, key_file, client_ca_file;
  bool require_client_cert = false;
};

// Everything workloadmapd is told at startup. Each field is settable by a
// command-line flag, an environment variable and a config file key (see
// Usage()); the defaults here are the daemon's defaults. A Config returned by
// ParseConfig has been validated, so the daemon can use it without checks.
struct Config {
  // --listen, repeatable; WM_LISTEN comma-separated. HOST:PORT (host a name,
  // IPv4 or bracketed IPv6; port 0 picks a free port), unix:PATH or
  // unix:///ABS/PATH, exactly as written (both are gRPC target syntax).
  // Never empty.
  std::vector<std::string> listen = {"127.0.0.1:50051"};
  // --unix-socket-mode, WM_UNIX_SOCKET_MODE: permission bits of Unix-socket
  // listeners (octal on input). Connecting needs write permission, so 0660
  // lets the owner and the socket's group in (a pod's fsGroup, say).
  int unix_socket_mode = 0660;
  // --metrics-address, WM_METRICS_ADDRESS. HOST:PORT; "off" is stored as ""
  // so "" is the only spelling of "disabled" the daemon needs to check.
  std::string metrics_address = "127.0.0.1:9090";
  // --workload-metrics-max-series (>= 0): the workload and pod series one
  // scrape of /metrics may hold (platform::WorkloadMetrics); 0: none.
  int workload_metrics_max_series = 500000;
  // --no-web, WM_NO_WEB: false leaves the JSON API and the web page out of
  // the HTTP endpoint (which must be on for them: --metrics-address).
  bool web = true;
  // --web-assets-dir, WM_WEB_ASSETS_DIR: the page's files are read from here
  // at each request instead of the embedded copies (for page development).
  std::string web_assets_dir;
  // --leader-elect and --leader-election-*: whether to campaign for the
  // Lease (kube::LeaderElector) and its place, name, candidate and times
  // (client-go's defaults). Empty namespace and identity: derived at start.
  bool leader_elect = false;
  std::string leader_election_namespace;
  std::string leader_election_lease = "workloadmapd";
  std::string leader_election_identity;
  absl::Duration leader_election_lease_duration = absl::Seconds(15);
  absl::Duration leader_election_renew_deadline = absl::Seconds(10);
  absl::Duration leader_election_retry_period = absl::Seconds(2);
  // --no-karta-operator: the leader keeps Kartas' labels, conditions and
  // events unless this is false.
  bool karta_operator = true;
  // --publish-catalog: the leader applies the built-in catalog as Kartas.
  bool publish_catalog = false;
  // --kai-pod-groups, --volcano-pod-groups, --coscheduling-pod-groups: the
  // leader writes that scheduler's PodGroups for pods with these
  // schedulerNames; --kai-pod-groups-for-native-kinds also for the kinds
  // KAI's pod-grouper groups itself.
  std::vector<std::string> kai_pod_groups;
  std::vector<std::string> volcano_pod_groups;
  std::vector<std::string> coscheduling_pod_groups;
  bool kai_pod_groups_for_native_kinds = false;
  // --webhook-address and its TLS files: the validating admission webhook
  // for Karta objects; off when the address is empty.
  std::string webhook_address;
  std::string webhook_tls_cert;
  std::string webhook_tls_key;
  // --kubeconfig, WM_KUBECONFIG. Empty: the kube client's own lookup, which
  // reads KUBECONFIG itself (so this parser does not).
  std::string kubeconfig;
  // --context, repeatable; WM_CONTEXTS comma-separated. One watched cluster
  // per context; empty means the kubeconfig's current context.
  std::vector<std::string> contexts;
  // --in-cluster, WM_IN_CLUSTER: the pod's service account instead of a
  // kubeconfig. Excludes kubeconfig and contexts.
  bool in_cluster = false;
  // --definitions (file or directory), repeatable; WM_DEFINITIONS comma-sep.
  std::vector<std::string> definitions;
  // --no-builtin-catalog, WM_NO_BUILTIN_CATALOG.
  bool builtin_catalog = true;
  // --no-cluster-definitions, WM_NO_CLUSTER_DEFINITIONS: ignore the
  // definitions stored in the cluster (Karta objects).
  bool cluster_definitions = true;
  // --snapshot, WM_SNAPSHOT: serve manifests from this directory instead of
  // a cluster. Excludes kubeconfig, contexts and in_cluster.
  std::string snapshot;
  // --namespace, WM_NAMESPACE: scope the watches to one namespace (a valid
  // namespace name); empty means all namespaces.
  std::string namespace_;
  // --selector, WM_SELECTOR: a label selector, passed to the apiserver as is.
  std::string label_selector;
  // --tls-cert, --tls-key, --tls-client-ca, --tls-require-client-cert;
  // WM_TLS_*; file key `tls: {cert, key, client-ca, require-client-cert}`.
  TlsConfig tls;
  // --authentication, WM_AUTHENTICATION: "none" (every caller is served, as
  // before; the daemon says so at start) or "kubernetes" (a caller presents
  // a bearer token the cluster's apiserver accepts through TokenReview, or a
  // client certificate verified by --tls-client-ca). Needs a cluster.
  std::string authentication = "none";
  // --unix-peer-identity, WM_UNIX_PEER_IDENTITY (repeatable):
  // "uid:UID=USER[;GROUP...]" or "gid:GID=USER[;GROUP...]". With
  // --authentication=kubernetes, names the processes that connect over the
  // Unix-socket listeners by their uid (else primary gid) as the kernel
  // reports it (SO_PEERCRED), so a sidecar's scheduler needs no token; RBAC
  // decides what that user may do. Needs a unix: listener.
  std::vector<std::string> unix_peer_identities;
  // --token-audiences, WM_TOKEN_AUDIENCES: audiences a bearer token must be
  // valid for; empty: the apiserver's own.
  std::vector<std::string> token_audiences;
  // --authentication-cache-ttl (> 0): how long an accepted token is trusted
  // without asking the apiserver again (rejected ones: 10 s).
  absl::Duration authentication_cache_ttl = absl::Minutes(2);
  // --authorization-allowed-ttl, --authorization-denied-ttl (> 0): how long
  // a SubjectAccessReview's answer stands (the apiserver's webhook authorizer
  // defaults): a revoked grant takes effect within the first, a new one
  // within the second.
  absl::Duration authorization_allowed_ttl = absl::Minutes(5);
  absl::Duration authorization_denied_ttl = absl::Seconds(30);
  // --inline-permission "VERB RESOURCE[.GROUP]" (kubectl auth can-i's
  // words): what a caller needs, cluster-wide, for calls on objects it
  // sends (inline resolution, inline dry runs, ValidateDefinition). Empty:
  // any authenticated caller.
  std::string inline_permission;
  // --keepalive-min-ping-interval (> 0): clients pinging more often are
  // disconnected.
  absl::Duration keepalive_min_ping_interval = absl::Seconds(10);
  // --shutdown-grace (>= 0): how long in-flight calls may finish on SIGTERM.
  absl::Duration shutdown_grace = absl::Seconds(10);
  // --max-message-bytes, --max-page-size, --watch-queue-size (per
  // WatchWorkloads stream), --watch-history (deleted workloads remembered
  // for resuming watches): all > 0.
  int max_message_bytes = 16 << 20;
  // --grpc-memory-limit (>= 16 MiB): what gRPC may hold of requests being
  // received, all connections together. Debian's gRPC 1.51 checks a
  // message's size against --max-message-bytes only once it holds the
  // whole message, so without this a client could make the daemon buffer
  // up to 4 GiB per call; past it, gRPC sends idle connections GOAWAY and
  // resets streams being received (RESOURCE_EXHAUSTED) until it is under.
  int64_t grpc_memory_limit_bytes = int64_t{256} << 20;
  // --pod-tree-cache (>= 0): what the trees of large workloads' pods may
  // keep between resolutions (index::WorkloadIndex::Options).
  int64_t pod_tree_cache_bytes = int64_t{64} << 20;
  int max_page_size = 500;
  int watch_queue_size = 1000;
  // --caller-rate, --caller-burst, --caller-max-watches (>= 0; 0: no
  // limit): each caller's (user's, or peer address's without
  // authentication) calls per second, the calls it may make at once (0:
  // twice the rate), and the watches it may hold open.
  // --caller-limit-exempt: users never limited (the scheduler).
  int caller_rate = 0;
  int caller_burst = 0;
  int caller_max_watches = 0;
  std::vector<std::string> caller_limit_exempt;
  int watch_history = 10000;
  // --jq-engine: "native" (in-process, gojq's semantics;
  // expressions/native_engine.h) or "libjq" (jq 1.6 in worker processes,
  // which --jq-workers and --jq-memory-limit size).
  std::string jq_engine = "native";
  // --jq-workers (>= 0): jq worker processes; 0 sizes the pool by the CPUs
  // the process may use (see expressions::JqEngineOptions::workers).
  int jq_workers = 0;
  // --jq-memory-limit: memory of all jq workers together, in bytes (a
  // Kubernetes quantity on input: 512Mi, 1Gi, 536870912), divided among them
  // as each one's address-space limit. The default is
  // expressions::kDefaultJqMemoryLimitBytes, half the Deployment's 1 GiB.
  // ParseConfig guarantees each worker at least 64 MiB
  // (expressions::kMinJqWorkerMemoryBytes): at least 128Mi, and at least
  // 64 MiB per worker when jq_workers is set.
  int64_t jq_memory_limit_bytes = int64_t{512} << 20;
  // --max-inline-objects (> 0): pods plus owners one ResolveWorkload call
  // may send inline (rpc::WorkloadMapService::Options::max_inline_objects).
  int max_inline_objects = 10000;
  // --default-deadline (> 0): applied to calls that arrive without one.
  absl::Duration default_deadline = absl::Seconds(30);
  // --log-format text|json, --log-level debug|info|warn|error.
  std::string log_format = "text";
  std::string log_level = "info";
  // --config, WM_CONFIG: the YAML file that was read, or empty.
  std::string config_file;
};

struct ParseResult {
  Config config;
  // --help or -h was given (wherever, even next to bad flags): main should
  // print Usage() and exit 0. `config` is then the defaults; nothing was read.
  bool help = false;
};

// Builds the Config from argv (argv[0] is the program name and is skipped),
// the environment (through `getenv`, so tests need not touch the process
// environment) and the YAML file named by --config, else WM_CONFIG.
//
// Precedence, per field: flag > environment variable > config file > default.
// A repeatable flag given at least once replaces the lower sources' list, as
// an environment list replaces the file's: lists are never merged, so an
// operator can always see where a value came from. Empty environment
// variables count as unset (manifests often carry `value: ""`); use
// WM_METRICS_ADDRESS=off to disable metrics from the environment.
//
// Flags: `--flag VALUE` or `--flag=VALUE` (a next token starting with '-' is
// not taken as a value: use the = form); boolean flags are set by `--flag`
// or `--flag=true|false`. There are no positional arguments.
//
// The config file is one YAML mapping keyed by flag name without the dashes
// (`listen: [..]`, `metrics-address: off`, `shutdown-grace: 30s`), except
// that the tls-* flags nest under `tls:`. A repeatable key takes a list or a
// single value; a key with a null value counts as absent. Relative paths in
// the file (kubeconfig, definitions, snapshot, tls files) are relative to
// the file's directory, so the file means the same from any working
// directory.
//
// Errors are InvalidArgument (NotFound for an unreadable config file) and
// name the flag, environment variable or file key and the rejected value.
absl::StatusOr<ParseResult> ParseConfig(const std::vector<std::string>& argv,
                                        std::function<const char*(const char*)> getenv = ::getenv);

// The --help text: every flag with its environment variable, default and
// meaning, grouped (General, Serving, Cluster, Definitions, TLS, Limits,
// Logging), plus the precedence and config file rules.
std::string Usage();

}  // namespace wm::daemon

#endif  // WM_SERVER_DAEMON_CONFIG_H_
