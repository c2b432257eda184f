#include "server/daemon/config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "server/access/unix_peers.h"
#include "server/common/file.h"
#include "server/common/json.h"
#include "server/common/quantity.h"
#include "server/common/user_text.h"
#include "server/common/yaml_json.h"
#include "server/expressions/jq_engine.h"

namespace wm::daemon {
namespace {

// Validators and parsers return the reason a value is bad, without the value
// or where it came from: the caller adds both, so every message has the same
// shape whichever source the value came from.
absl::Status Reason(absl::string_view why) { return absl::InvalidArgumentError(why); }

absl::Status ParseBool(absl::string_view text, bool* out) {
  if (absl::EqualsIgnoreCase(text, "true") || text == "1") {
    *out = true;
  } else if (absl::EqualsIgnoreCase(text, "false") || text == "0") {
    *out = false;
  } else {
    return Reason("must be true or false");
  }
  return absl::OkStatus();
}

absl::Status ParsePositiveInt(absl::string_view text, int* out) {
  int value;
  if (!absl::SimpleAtoi(text, &value) || value <= 0) {
    return Reason("must be a positive integer (at most 2147483647)");
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ParseNonNegativeInt(absl::string_view text, int* out) {
  int value;
  if (!absl::SimpleAtoi(text, &value) || value < 0) {
    return Reason("must be a non-negative integer (at most 2147483647)");
  }
  *out = value;
  return absl::OkStatus();
}

// Bytes as a Kubernetes quantity ("512Mi", "1Gi", "536870912"), whole and at
// least `min` (whose message spells it in MiB).
absl::Status ParseBytes(absl::string_view text, int64_t min, int64_t* out) {
  absl::StatusOr<Quantity> quantity = ParseQuantity(text);
  if (!quantity.ok() || quantity->milli < 0 || quantity->milli % 1000 != 0 ||
      quantity->milli == std::numeric_limits<int64_t>::max()) {
    return Reason("must be a number of bytes, as in 512Mi, 1Gi or 536870912");
  }
  if (quantity->Units() < min) return Reason(absl::StrCat("must be at least ", min >> 20, "Mi"));
  *out = quantity->Units();
  return absl::OkStatus();
}

// File permission bits in octal, as chmod takes them: "660", "0660".
absl::Status ParseFileMode(absl::string_view text, int* out) {
  int value = 0;
  bool valid = !text.empty() && text.size() <= 4;
  for (char c : text) {
    if (c < '0' || c > '7') valid = false;
    value = value * 8 + (c - '0');
  }
  if (!valid || value > 0777) return Reason("must be octal permission bits such as 0660");
  *out = value;
  return absl::OkStatus();
}

absl::Status ParseDuration(absl::string_view text, bool allow_zero, absl::Duration* out) {
  absl::Duration value;
  if (!absl::ParseDuration(text, &value) || value == absl::InfiniteDuration() ||
      value == -absl::InfiniteDuration()) {
    return Reason("must be a duration such as 500ms, 10s or 1m");
  }
  if (value < absl::ZeroDuration() || (!allow_zero && value == absl::ZeroDuration())) {
    return Reason(allow_zero ? "must not be negative" : "must be positive");
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status CheckOneOf(absl::string_view text, std::initializer_list<absl::string_view> allowed) {
  for (absl::string_view a : allowed) {
    if (text == a) return absl::OkStatus();
  }
  return Reason(absl::StrCat("must be one of ", absl::StrJoin(allowed, ", ")));
}

bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

// RFC 1123 host name: dot-separated labels of letters, digits and inner
// hyphens.
bool IsHostName(absl::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty() || label.size() > 63 || !IsAlnum(label.front()) || !IsAlnum(label.back())) {
      return false;
    }
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
  }
  return true;
}

absl::Status CheckHostPort(absl::string_view address) {
  size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return Reason("must be HOST:PORT");
  absl::string_view host = address.substr(0, colon);
  absl::string_view port = address.substr(colon + 1);
  int port_number;
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return absl::ascii_isdigit(c); }) ||
      !absl::SimpleAtoi(port, &port_number) || port_number > 65535) {
    return Reason("port must be a number from 0 to 65535");
  }
  if (host.empty()) return Reason("missing host (0.0.0.0 or [::] means every interface)");
  std::string host_string(host);
  if (host.front() == '[') {
    unsigned char buffer[16];
    if (host.size() < 3 || host.back() != ']' ||
        inet_pton(AF_INET6, host_string.substr(1, host_string.size() - 2).c_str(), buffer) != 1) {
      return Reason("host in brackets must be an IPv6 address");
    }
    return absl::OkStatus();
  }
  if (absl::StrContains(host, ':'))
    return Reason("an IPv6 host must be bracketed, as in [::1]:PORT");
  if (host.find_first_not_of("0123456789.") == absl::string_view::npos) {
    unsigned char buffer[4];
    if (inet_pton(AF_INET, host_string.c_str(), buffer) != 1) {
      return Reason("host is not a valid IPv4 address");
    }
    return absl::OkStatus();
  }
  if (!IsHostName(host)) return Reason("host must be a host name, IPv4 or [IPv6] address");
  return absl::OkStatus();
}

absl::Status CheckListenAddress(absl::string_view address) {
  if (absl::ConsumePrefix(&address, "unix://")) {
    // gRPC's URI form: the path must be absolute (unix://host/... is no path).
    if (address.size() < 2 || address.front() != '/') {
      return Reason("unix:// must be followed by an absolute path, as in unix:///run/wm.sock");
    }
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&address, "unix:")) {
    if (address.empty()) return Reason("unix: must be followed by a socket path");
    return absl::OkStatus();
  }
  absl::Status status = CheckHostPort(address);
  if (!status.ok()) {
    return Reason(absl::StrCat(status.message(), " (expected HOST:PORT or unix:PATH)"));
  }
  return absl::OkStatus();
}

// Namespace names are DNS-1123 labels; anything else would silently watch
// nothing.
absl::Status CheckNamespace(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= 63 && IsAlnum(name.front()) && IsAlnum(name.back());
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || absl::ascii_isdigit(c) || c == '-');
  }
  return ok ? absl::OkStatus()
            : Reason("must be a namespace name (lowercase letters, digits and '-', at most 63)");
}

absl::Status CheckNotEmpty(absl::string_view text) {
  return text.empty() ? Reason("must not be empty") : absl::OkStatus();
}

enum class Kind {
  kValue,  // one value; the last one given wins
  kBool,   // `--flag` alone means true
  kList,   // repeatable
};

// One setting, known to every source. The table below is the single list of
// settings: parsing, the environment, the file and Usage() all walk it, so a
// setting cannot be settable one way and missing another.
struct Option {
  absl::string_view flag;  // without "--"
  absl::string_view env;
  absl::string_view key;  // config file key ("tls.cert" is `cert` under `tls`); empty: none
  absl::string_view group;
  absl::string_view metavar;  // value placeholder in Usage(); empty for booleans
  Kind kind;
  bool is_path;  // relative values from the file are resolved against its directory
  absl::string_view help;
  // Validates `value` and stores it; for kList, appends it.
  absl::Status (*set)(Config&, absl::string_view value);
  // kList only: the list a higher-precedence source replaces.
  std::vector<std::string>* (*list)(Config&);
  // The current value, as Usage() shows the defaults.
  std::string (*show)(const Config&);
};

// Setters and printers generated per field, so the table stays declarative.
template <std::string Config::*F>
absl::Status SetString(Config& c, absl::string_view v) {
  c.*F = std::string(v);
  return absl::OkStatus();
}
template <std::string Config::*F>
absl::Status SetNonEmptyString(Config& c, absl::string_view v) {
  if (absl::Status s = CheckNotEmpty(v); !s.ok()) return s;
  c.*F = std::string(v);
  return absl::OkStatus();
}
template <std::string TlsConfig::*F>
absl::Status SetTlsString(Config& c, absl::string_view v) {
  c.tls.*F = std::string(v);
  return absl::OkStatus();
}
template <bool Config::*F, bool kNegated>
absl::Status SetBool(Config& c, absl::string_view v) {
  bool value;
  if (absl::Status s = ParseBool(v, &value); !s.ok()) return s;
  c.*F = value != kNegated;
  return absl::OkStatus();
}
template <int Config::*F>
absl::Status SetPositiveInt(Config& c, absl::string_view v) {
  return ParsePositiveInt(v, &(c.*F));
}
template <int Config::*F>
absl::Status SetNonNegativeInt(Config& c, absl::string_view v) {
  return ParseNonNegativeInt(v, &(c.*F));
}
template <absl::Duration Config::*F, bool kAllowZero>
absl::Status SetDuration(Config& c, absl::string_view v) {
  return ParseDuration(v, kAllowZero, &(c.*F));
}
template <std::vector<std::string> Config::*F, absl::Status (*kCheck)(absl::string_view)>
absl::Status AppendItem(Config& c, absl::string_view v) {
  if (absl::Status s = kCheck(v); !s.ok()) return s;
  (c.*F).emplace_back(v);
  return absl::OkStatus();
}
template <std::vector<std::string> Config::*F>
std::vector<std::string>* ListOf(Config& c) {
  return &(c.*F);
}

template <std::string Config::*F>
std::string ShowString(const Config& c) {
  return c.*F;
}
template <std::string TlsConfig::*F>
std::string ShowTlsString(const Config& c) {
  return c.tls.*F;
}
template <bool Config::*F, bool kNegated>
std::string ShowBool(const Config& c) {
  return (c.*F != kNegated) ? "true" : "false";
}
template <int Config::*F>
std::string ShowInt(const Config& c) {
  return absl::StrCat(c.*F);
}
template <absl::Duration Config::*F>
std::string ShowDuration(const Config& c) {
  return absl::FormatDuration(c.*F);
}
template <std::vector<std::string> Config::*F>
std::string ShowList(const Config& c) {
  return absl::StrJoin(c.*F, ",");
}

constexpr absl::string_view kGroups[] = {"General",         "Serving",     "Cluster",
                                         "Leader election", "Definitions", "TLS",
                                         "Access",          "Limits",      "Logging"};

constexpr Option kOptions[] = {
    {"config", "WM_CONFIG", "", "General", "FILE", Kind::kValue, false,
     "YAML config file (see above). --config= ignores WM_CONFIG.", &SetString<&Config::config_file>,
     nullptr, &ShowString<&Config::config_file>},

    {"listen", "WM_LISTEN", "listen", "Serving", "ADDR", Kind::kList, false,
     "gRPC address to serve on: HOST:PORT (HOST a name, IPv4 or [IPv6] address; PORT 0 "
     "picks a free port), unix:PATH or unix:///ABS/PATH. Repeatable; WM_LISTEN is "
     "comma-separated.",
     &AppendItem<&Config::listen, &CheckListenAddress>, &ListOf<&Config::listen>,
     &ShowList<&Config::listen>},
    {"unix-socket-mode", "WM_UNIX_SOCKET_MODE", "unix-socket-mode", "Serving", "MODE", Kind::kValue,
     false,
     "Permissions of Unix-socket listeners, in octal. Connecting needs write permission: 0660 "
     "admits the owner and the socket's group (e.g. a pod's fsGroup), 0600 the owner only.",
     [](Config& c, absl::string_view v) { return ParseFileMode(v, &c.unix_socket_mode); }, nullptr,
     [](const Config& c) -> std::string { return absl::StrFormat("%04o", c.unix_socket_mode); }},
    {"metrics-address", "WM_METRICS_ADDRESS", "metrics-address", "Serving", "HOST:PORT",
     Kind::kValue, false,
     "Address of the Prometheus /metrics HTTP endpoint; \"off\" or an empty value disables it.",
     [](Config& c, absl::string_view v) -> absl::Status {
       if (v.empty() || v == "off") {
         c.metrics_address.clear();
         return absl::OkStatus();
       }
       if (absl::Status s = CheckHostPort(v); !s.ok()) {
         return Reason(absl::StrCat(s.message(), " (or \"off\")"));
       }
       c.metrics_address = std::string(v);
       return absl::OkStatus();
     },
     nullptr, &ShowString<&Config::metrics_address>},
    {"workload-metrics-max-series", "WM_WORKLOAD_METRICS_MAX_SERIES", "workload-metrics-max-series",
     "Serving", "N", Kind::kValue, false,
     "Most workload and pod series (workloadmap_workload_*, workloadmap_pod_workload_info) one "
     "scrape of /metrics holds; the rest are counted as dropped. 0 leaves them out.",
     &SetNonNegativeInt<&Config::workload_metrics_max_series>, nullptr,
     &ShowInt<&Config::workload_metrics_max_series>},
    {"no-web", "WM_NO_WEB", "no-web", "Serving", "", Kind::kBool, false,
     "Do not serve the JSON API (/api/v1/...) and the web page (/) on the --metrics-address "
     "port.",
     &SetBool<&Config::web, true>, nullptr, &ShowBool<&Config::web, true>},
    {"web-assets-dir", "WM_WEB_ASSETS_DIR", "web-assets-dir", "Serving", "DIR", Kind::kValue, true,
     "Serve the web page's files from DIR (server/web/assets of a checkout), read at each "
     "request, instead of the copies built into the binary: for working on the page.",
     &SetString<&Config::web_assets_dir>, nullptr, &ShowString<&Config::web_assets_dir>},
    {"shutdown-grace", "WM_SHUTDOWN_GRACE", "shutdown-grace", "Serving", "DURATION", Kind::kValue,
     false,
     "On SIGTERM, how long in-flight calls and watches may run before they are cancelled; 0 "
     "cancels them at once.",
     &SetDuration<&Config::shutdown_grace, true>, nullptr, &ShowDuration<&Config::shutdown_grace>},

    {"kubeconfig", "WM_KUBECONFIG", "kubeconfig", "Cluster", "FILE", Kind::kValue, true,
     "Kubeconfig file. Unset: the kube client's own lookup ($KUBECONFIG, then ~/.kube/config).",
     &SetString<&Config::kubeconfig>, nullptr, &ShowString<&Config::kubeconfig>},
    {"context", "WM_CONTEXTS", "context", "Cluster", "NAME", Kind::kList, false,
     "Kubeconfig context of a cluster to watch. Repeatable, one cluster each; WM_CONTEXTS is "
     "comma-separated. Unset: the kubeconfig's current context.",
     &AppendItem<&Config::contexts, &CheckNotEmpty>, &ListOf<&Config::contexts>,
     &ShowList<&Config::contexts>},
    {"in-cluster", "WM_IN_CLUSTER", "in-cluster", "Cluster", "", Kind::kBool, false,
     "Authenticate with the pod's service account instead of a kubeconfig; excludes "
     "--kubeconfig and --context.",
     &SetBool<&Config::in_cluster, false>, nullptr, &ShowBool<&Config::in_cluster, false>},
    {"snapshot", "WM_SNAPSHOT", "snapshot", "Cluster", "DIR", Kind::kValue, true,
     "Serve the manifests in DIR instead of a cluster; excludes --kubeconfig, --context and "
     "--in-cluster.",
     &SetString<&Config::snapshot>, nullptr, &ShowString<&Config::snapshot>},
    {"namespace", "WM_NAMESPACE", "namespace", "Cluster", "NAME", Kind::kValue, false,
     "Watch only this namespace. Unset: every namespace.",
     [](Config& c, absl::string_view v) -> absl::Status {
       if (!v.empty()) {
         if (absl::Status s = CheckNamespace(v); !s.ok()) return s;
       }
       c.namespace_ = std::string(v);
       return absl::OkStatus();
     },
     nullptr, &ShowString<&Config::namespace_>},
    {"selector", "WM_SELECTOR", "selector", "Cluster", "SELECTOR", Kind::kValue, false,
     "Watch only objects matching this label selector (e.g. app=web,tier!=cache).",
     &SetString<&Config::label_selector>, nullptr, &ShowString<&Config::label_selector>},

    {"definitions", "WM_DEFINITIONS", "definitions", "Definitions", "PATH", Kind::kList, true,
     "Workload definition file, or directory of them, to load. Repeatable; WM_DEFINITIONS is "
     "comma-separated.",
     &AppendItem<&Config::definitions, &CheckNotEmpty>, &ListOf<&Config::definitions>,
     &ShowList<&Config::definitions>},
    {"no-builtin-catalog", "WM_NO_BUILTIN_CATALOG", "no-builtin-catalog", "Definitions", "",
     Kind::kBool, false, "Do not load the built-in definition catalog.",
     &SetBool<&Config::builtin_catalog, true>, nullptr, &ShowBool<&Config::builtin_catalog, true>},
    {"no-cluster-definitions", "WM_NO_CLUSTER_DEFINITIONS", "no-cluster-definitions", "Definitions",
     "", Kind::kBool, false, "Ignore the definitions stored in the cluster (Karta objects).",
     &SetBool<&Config::cluster_definitions, true>, nullptr,
     &ShowBool<&Config::cluster_definitions, true>},

    {"tls-cert", "WM_TLS_CERT", "tls.cert", "TLS", "FILE", Kind::kValue, true,
     "PEM server certificate chain; serving is plaintext without it. Needs --tls-key. "
     "Read again when it changes (with the key and CA), for new connections.",
     &SetTlsString<&TlsConfig::cert_file>, nullptr, &ShowTlsString<&TlsConfig::cert_file>},
    {"tls-key", "WM_TLS_KEY", "tls.key", "TLS", "FILE", Kind::kValue, true,
     "PEM private key of --tls-cert.", &SetTlsString<&TlsConfig::key_file>, nullptr,
     &ShowTlsString<&TlsConfig::key_file>},
    {"tls-client-ca", "WM_TLS_CLIENT_CA", "tls.client-ca", "TLS", "FILE", Kind::kValue, true,
     "PEM CA bundle that verifies client certificates (mutual TLS). Needs --tls-cert.",
     &SetTlsString<&TlsConfig::client_ca_file>, nullptr,
     &ShowTlsString<&TlsConfig::client_ca_file>},
    {"tls-require-client-cert", "WM_TLS_REQUIRE_CLIENT_CERT", "tls.require-client-cert", "TLS", "",
     Kind::kBool, false,
     "Reject clients without a certificate signed by --tls-client-ca (which it needs).",
     [](Config& c, absl::string_view v) { return ParseBool(v, &c.tls.require_client_cert); },
     nullptr,
     [](const Config& c) -> std::string { return c.tls.require_client_cert ? "true" : "false"; }},

    {"publish-catalog", "WM_PUBLISH_CATALOG", "publish-catalog", "Leader election", "", Kind::kBool,
     false,
     "On the leader (--leader-elect), server-side apply the built-in catalog as Karta objects "
     "(field manager workloadmap-catalog, label workloadmap.run.ai/catalog=true) each time it "
     "starts leading, so that KAI Scheduler's fallback and kli read our definitions; a Karta "
     "whose fields someone else changed is kept as it is.",
     &SetBool<&Config::publish_catalog, false>, nullptr,
     &ShowBool<&Config::publish_catalog, false>},
    {"webhook-address", "WM_WEBHOOK_ADDRESS", "webhook.address", "Admission webhook", "HOST:PORT",
     Kind::kValue, false,
     "Serve the admission webhooks over HTTPS on this address (AdmissionReview v1): "
     "validating for Karta objects (POST /validate-karta) and, with a PodGroup role "
     "(--kai-pod-groups, ...), mutating for pods (POST /mutate-pod: a pod joins its "
     "PodGroup as it is created). Needs --webhook-tls-cert and --webhook-tls-key.",
     [](Config& c, absl::string_view v) -> absl::Status {
       if (absl::Status s = CheckHostPort(v); !s.ok()) return s;
       c.webhook_address = std::string(v);
       return absl::OkStatus();
     },
     nullptr, &ShowString<&Config::webhook_address>},
    {"webhook-tls-cert", "WM_WEBHOOK_TLS_CERT", "webhook.tls-cert", "Admission webhook", "FILE",
     Kind::kValue, false,
     "PEM certificate chain of the webhook, read again when it changes (a renewed Secret).",
     &SetString<&Config::webhook_tls_cert>, nullptr, &ShowString<&Config::webhook_tls_cert>},
    {"webhook-tls-key", "WM_WEBHOOK_TLS_KEY", "webhook.tls-key", "Admission webhook", "FILE",
     Kind::kValue, false, "PEM private key of --webhook-tls-cert, read again with it.",
     &SetString<&Config::webhook_tls_key>, nullptr, &ShowString<&Config::webhook_tls_key>},

    {"authentication", "WM_AUTHENTICATION", "authentication.mode", "Access", "MODE", Kind::kValue,
     false,
     "Who may call: none (anyone who can connect; for local use) or kubernetes (a bearer "
     "token the cluster accepts through TokenReview, or a client certificate verified by "
     "--tls-client-ca).",
     [](Config& c, absl::string_view v) -> absl::Status {
       if (v != "none" && v != "kubernetes") {
         return absl::InvalidArgumentError("neither none nor kubernetes");
       }
       c.authentication = std::string(v);
       return absl::OkStatus();
     },
     nullptr, [](const Config& c) { return c.authentication; }},
    {"token-audiences", "WM_TOKEN_AUDIENCES", "authentication.audiences", "Access", "AUDIENCE",
     Kind::kList, false,
     "An audience bearer tokens must be valid for (repeatable); default: the apiserver's.",
     &AppendItem<&Config::token_audiences, &CheckNotEmpty>, &ListOf<&Config::token_audiences>,
     &ShowList<&Config::token_audiences>},
    {"unix-peer-identity", "WM_UNIX_PEER_IDENTITY", "authentication.unix-peers", "Access",
     "uid:UID=USER[;GROUP...]", Kind::kList, false,
     "Who a process connecting over a unix: listener is, by its uid (or gid:GID, its primary "
     "group) as the kernel reports it; repeatable. It then needs no token; RBAC decides what "
     "the user may do.",
     &AppendItem<&Config::unix_peer_identities, &access::CheckUnixPeerIdentity>,
     &ListOf<&Config::unix_peer_identities>, &ShowList<&Config::unix_peer_identities>},
    {"leader-elect", "WM_LEADER_ELECT", "leader-election.enabled", "Leader election", "",
     Kind::kBool, false,
     "Campaign for the Lease of the first cluster (coordination.k8s.io/v1); of several "
     "replicas, the one holding it does the daemon's writes to the cluster. Every replica "
     "serves reads.",
     &SetBool<&Config::leader_elect, false>, nullptr, &ShowBool<&Config::leader_elect, false>},
    {"leader-election-namespace", "WM_LEADER_ELECTION_NAMESPACE", "leader-election.namespace",
     "Leader election", "NAMESPACE", Kind::kValue, false,
     "Namespace of the Lease; default: the pod's (in-cluster) or the kubeconfig context's.",
     &SetString<&Config::leader_election_namespace>, nullptr,
     &ShowString<&Config::leader_election_namespace>},
    {"leader-election-lease", "WM_LEADER_ELECTION_LEASE", "leader-election.lease",
     "Leader election", "NAME", Kind::kValue, false,
     "Name of the Lease the replicas share (replicas of another deployment need another).",
     &SetString<&Config::leader_election_lease>, nullptr,
     &ShowString<&Config::leader_election_lease>},
    {"leader-election-identity", "WM_LEADER_ELECTION_IDENTITY", "leader-election.identity",
     "Leader election", "ID", Kind::kValue, false,
     "This replica's name in the Lease; default: $POD_NAME (else the host name) and a random "
     "suffix, so that a restarted replica is a new candidate.",
     &SetString<&Config::leader_election_identity>, nullptr,
     &ShowString<&Config::leader_election_identity>},
    {"leader-election-lease-duration", "WM_LEADER_ELECTION_LEASE_DURATION",
     "leader-election.lease-duration", "Leader election", "DURATION", Kind::kValue, false,
     "How long the others wait, after the Lease last changed, before they may take it.",
     &SetDuration<&Config::leader_election_lease_duration, false>, nullptr,
     &ShowDuration<&Config::leader_election_lease_duration>},
    {"leader-election-renew-deadline", "WM_LEADER_ELECTION_RENEW_DEADLINE",
     "leader-election.renew-deadline", "Leader election", "DURATION", Kind::kValue, false,
     "How long the leader may fail to renew before it stops leading; below the lease "
     "duration.",
     &SetDuration<&Config::leader_election_renew_deadline, false>, nullptr,
     &ShowDuration<&Config::leader_election_renew_deadline>},
    {"leader-election-retry-period", "WM_LEADER_ELECTION_RETRY_PERIOD",
     "leader-election.retry-period", "Leader election", "DURATION", Kind::kValue, false,
     "Between tries to take or renew the Lease.",
     &SetDuration<&Config::leader_election_retry_period, false>, nullptr,
     &ShowDuration<&Config::leader_election_retry_period>},
    {"no-karta-operator", "WM_NO_KARTA_OPERATOR", "karta-operator.disabled", "Leader election", "",
     Kind::kBool, false,
     "Do not act as the Karta operator on the leader (the labels run.ai/karta-group, -version "
     "and -kind, the conditions Validated, CRDExists and Ready, and a Warning event per "
     "finding on each Karta object). Without --leader-elect the daemon writes nothing.",
     &SetBool<&Config::karta_operator, true>, nullptr, &ShowBool<&Config::karta_operator, true>},
    {"kai-pod-groups", "WM_KAI_POD_GROUPS", "pod-groups.kai", "Leader election", "SCHEDULER",
     Kind::kList, false,
     "On the leader (--leader-elect), write KAI Scheduler PodGroups (scheduling.run.ai/v2alpha2, "
     "as KAI's pod-grouper would) for pods with this schedulerName whose top owner's definition "
     "has gang instructions, and annotate the pods. Repeatable. Kinds KAI groups itself are "
     "left to KAI unless --kai-pod-groups-for-native-kinds.",
     &AppendItem<&Config::kai_pod_groups, &CheckNotEmpty>, &ListOf<&Config::kai_pod_groups>,
     &ShowList<&Config::kai_pod_groups>},
    {"kai-pod-groups-for-native-kinds", "WM_KAI_POD_GROUPS_FOR_NATIVE_KINDS",
     "pod-groups.kai-native-kinds", "Leader election", "", Kind::kBool, false,
     "Write KAI PodGroups also for the kinds KAI's pod-grouper has a plugin for (JobSet, "
     "PyTorchJob, RayCluster, LeaderWorkerSet, ...): for clusters where KAI's pod-grouper does "
     "not run.",
     &SetBool<&Config::kai_pod_groups_for_native_kinds, false>, nullptr,
     &ShowBool<&Config::kai_pod_groups_for_native_kinds, false>},
    {"volcano-pod-groups", "WM_VOLCANO_POD_GROUPS", "pod-groups.volcano", "Leader election",
     "SCHEDULER", Kind::kList, false,
     "On the leader, write Volcano PodGroups (scheduling.volcano.sh/v1beta1) for pods with this "
     "schedulerName and annotate the pods (scheduling.k8s.io/group-name). Repeatable.",
     &AppendItem<&Config::volcano_pod_groups, &CheckNotEmpty>, &ListOf<&Config::volcano_pod_groups>,
     &ShowList<&Config::volcano_pod_groups>},
    {"coscheduling-pod-groups", "WM_COSCHEDULING_POD_GROUPS", "pod-groups.coscheduling",
     "Leader election", "SCHEDULER", Kind::kList, false,
     "On the leader, write scheduler-plugins coscheduling PodGroups (scheduling.x-k8s.io/"
     "v1alpha1) for pods with this schedulerName and label the pods "
     "(scheduling.x-k8s.io/pod-group). Repeatable.",
     &AppendItem<&Config::coscheduling_pod_groups, &CheckNotEmpty>,
     &ListOf<&Config::coscheduling_pod_groups>, &ShowList<&Config::coscheduling_pod_groups>},
    {"authentication-cache-ttl", "WM_AUTHENTICATION_CACHE_TTL", "authentication.cache-ttl",
     "Access", "DURATION", Kind::kValue, false,
     "How long an accepted token is trusted before the apiserver is asked again.",
     &SetDuration<&Config::authentication_cache_ttl, false>, nullptr,
     &ShowDuration<&Config::authentication_cache_ttl>},
    {"authorization-allowed-ttl", "WM_AUTHORIZATION_ALLOWED_TTL", "authorization.allowed-ttl",
     "Access", "DURATION", Kind::kValue, false,
     "How long a caller's allowed access is trusted (a revoked grant takes effect within it).",
     &SetDuration<&Config::authorization_allowed_ttl, false>, nullptr,
     &ShowDuration<&Config::authorization_allowed_ttl>},
    {"authorization-denied-ttl", "WM_AUTHORIZATION_DENIED_TTL", "authorization.denied-ttl",
     "Access", "DURATION", Kind::kValue, false,
     "How long a caller's denied access stands (a new grant takes effect within it).",
     &SetDuration<&Config::authorization_denied_ttl, false>, nullptr,
     &ShowDuration<&Config::authorization_denied_ttl>},

    {"inline-permission", "WM_INLINE_PERMISSION", "authorization.inline-permission", "Access",
     "VERB RESOURCE[.GROUP]", Kind::kValue, false,
     "What a caller needs, cluster-wide, for inline calls and ValidateDefinition (kubectl auth "
     "can-i's words, e.g. \"create pods\"); default: any authenticated caller.",
     [](Config& c, absl::string_view v) -> absl::Status {
       std::vector<std::string> words = absl::StrSplit(v, ' ', absl::SkipEmpty());
       if (words.size() != 2) {
         return absl::InvalidArgumentError("expected a verb and a resource, as \"create pods\"");
       }
       c.inline_permission = absl::StrJoin(words, " ");
       return absl::OkStatus();
     },
     nullptr, [](const Config& c) { return c.inline_permission; }},
    {"keepalive-min-ping-interval", "WM_KEEPALIVE_MIN_PING_INTERVAL", "keepalive-min-ping-interval",
     "Limits", "DURATION", Kind::kValue, false,
     "Clients sending keepalive pings more often than this are disconnected.",
     &SetDuration<&Config::keepalive_min_ping_interval, false>, nullptr,
     &ShowDuration<&Config::keepalive_min_ping_interval>},
    {"jq-engine", "WM_JQ_ENGINE", "jq-engine", "Limits", "NAME", Kind::kValue, false,
     "The jq engine: native (in-process, gojq's semantics, upstream's engine) or libjq (jq "
     "1.6 in worker processes sized by --jq-workers and --jq-memory-limit).",
     [](Config& c, absl::string_view v) -> absl::Status {
       if (v != "native" && v != "libjq") {
         return absl::InvalidArgumentError(
             absl::StrCat("--jq-engine: \"", v, "\" is neither native nor libjq"));
       }
       c.jq_engine = std::string(v);
       return absl::OkStatus();
     },
     nullptr, [](const Config& c) { return c.jq_engine; }},
    {"jq-workers", "WM_JQ_WORKERS", "jq-workers", "Limits", "N", Kind::kValue, false,
     "jq worker processes, i.e. expression evaluations that can run at once; 0 gives one per "
     "CPU the process may use (affinity mask and cgroup CPU quota), at least 2.",
     [](Config& c, absl::string_view v) { return ParseNonNegativeInt(v, &c.jq_workers); }, nullptr,
     &ShowInt<&Config::jq_workers>},
    {"jq-memory-limit", "WM_JQ_MEMORY_LIMIT", "jq-memory-limit", "Limits", "BYTES", Kind::kValue,
     false,
     "Memory of all jq workers together (512Mi, 1Gi, or bytes), divided among them as each "
     "one's address-space limit: an expression that needs more than its worker's share fails "
     "with RESOURCE_EXHAUSTED and the worker is replaced. Keep it plus the daemon's own memory "
     "below the container's limit. At least 64Mi per worker.",
     [](Config& c, absl::string_view v) {
       return ParseBytes(v, 2 * expressions::kMinJqWorkerMemoryBytes, &c.jq_memory_limit_bytes);
     },
     nullptr, [](const Config& c) { return FormatReported("memory", c.jq_memory_limit_bytes); }},
    {"max-inline-objects", "WM_MAX_INLINE_OBJECTS", "max-inline-objects", "Limits", "N",
     Kind::kValue, false,
     "Most pods plus owners one ResolveWorkload call may send inline; each costs the daemon "
     "a few KB while the call runs.",
     &SetPositiveInt<&Config::max_inline_objects>, nullptr, &ShowInt<&Config::max_inline_objects>},
    {"default-deadline", "WM_DEFAULT_DEADLINE", "default-deadline", "Limits", "DURATION",
     Kind::kValue, false, "Deadline given to calls that arrive without one.",
     &SetDuration<&Config::default_deadline, false>, nullptr,
     &ShowDuration<&Config::default_deadline>},
    {"max-message-bytes", "WM_MAX_MESSAGE_BYTES", "max-message-bytes", "Limits", "BYTES",
     Kind::kValue, false, "Largest gRPC request or response message.",
     &SetPositiveInt<&Config::max_message_bytes>, nullptr, &ShowInt<&Config::max_message_bytes>},
    {"grpc-memory-limit", "WM_GRPC_MEMORY_LIMIT", "grpc-memory-limit", "Limits", "BYTES",
     Kind::kValue, false,
     "Memory gRPC may hold of requests being received, all connections together (256Mi, 1Gi, "
     "or bytes; at least 16Mi). gRPC checks --max-message-bytes only once it holds a whole "
     "message: past this limit it resets streams being received (RESOURCE_EXHAUSTED), so a "
     "request of gigabytes cannot exhaust the daemon. Keep it above --max-message-bytes times "
     "the large requests you expect at once.",
     [](Config& c, absl::string_view v) {
       return ParseBytes(v, int64_t{16} << 20, &c.grpc_memory_limit_bytes);
     },
     nullptr, [](const Config& c) { return FormatReported("memory", c.grpc_memory_limit_bytes); }},
    {"pod-tree-cache", "WM_POD_TREE_CACHE", "pod-tree-cache", "Limits", "BYTES", Kind::kValue,
     false,
     "Memory the trees of large workloads' pods may keep between resolutions (64Mi, or bytes; "
     "0: none). A workload with 32 or more objects below it keeps its pods' trees, so when one "
     "pod changes only that pod's tree is rebuilt; about 5 KB a pod.",
     [](Config& c, absl::string_view v) { return ParseBytes(v, 0, &c.pod_tree_cache_bytes); },
     nullptr, [](const Config& c) { return FormatReported("memory", c.pod_tree_cache_bytes); }},
    {"max-page-size", "WM_MAX_PAGE_SIZE", "max-page-size", "Limits", "N", Kind::kValue, false,
     "Most items one page of a List call returns.", &SetPositiveInt<&Config::max_page_size>,
     nullptr, &ShowInt<&Config::max_page_size>},
    {"watch-queue-size", "WM_WATCH_QUEUE_SIZE", "watch-queue-size", "Limits", "N", Kind::kValue,
     false, "Events buffered for each WatchWorkloads stream.",
     &SetPositiveInt<&Config::watch_queue_size>, nullptr, &ShowInt<&Config::watch_queue_size>},
    {"caller-rate", "WM_CALLER_RATE", "caller-limits.rate", "Limits", "N", Kind::kValue, false,
     "Calls per second each caller may make (a user, or a peer address without "
     "authentication); over it, RESOURCE_EXHAUSTED with a retry hint. 0: no limit.",
     &SetNonNegativeInt<&Config::caller_rate>, nullptr, &ShowInt<&Config::caller_rate>},
    {"caller-burst", "WM_CALLER_BURST", "caller-limits.burst", "Limits", "N", Kind::kValue, false,
     "Calls a caller may make at once after a pause; 0: twice --caller-rate.",
     &SetNonNegativeInt<&Config::caller_burst>, nullptr, &ShowInt<&Config::caller_burst>},
    {"caller-max-watches", "WM_CALLER_MAX_WATCHES", "caller-limits.max-watches", "Limits", "N",
     Kind::kValue, false, "WatchWorkloads streams each caller may hold open; 0: no limit.",
     &SetNonNegativeInt<&Config::caller_max_watches>, nullptr,
     &ShowInt<&Config::caller_max_watches>},
    {"caller-limit-exempt", "WM_CALLER_LIMIT_EXEMPT", "caller-limits.exempt", "Limits", "USER",
     Kind::kList, false,
     "A user the caller limits never apply to (repeatable), e.g. the scheduler's "
     "system:serviceaccount:kai-scheduler:kai-scheduler.",
     &AppendItem<&Config::caller_limit_exempt, &CheckNotEmpty>,
     &ListOf<&Config::caller_limit_exempt>, &ShowList<&Config::caller_limit_exempt>},
    {"watch-history", "WM_WATCH_HISTORY", "watch-history", "Limits", "N", Kind::kValue, false,
     "Deleted workloads remembered so that watches can resume across them.",
     &SetPositiveInt<&Config::watch_history>, nullptr, &ShowInt<&Config::watch_history>},

    {"log-format", "WM_LOG_FORMAT", "log-format", "Logging", "FORMAT", Kind::kValue, false,
     "text or json.",
     [](Config& c,
        absl::string_view v) -> absl::
                                 Status {
                                   if (absl::Status s = CheckOneOf(v, {"text", "json"}); !s.ok())
                                     return s;
                                   c.log_format = std::string(v);
                                   return absl::OkStatus();
                                 },
     nullptr, &ShowString<&Config::log_format>},
    {"log-level", "WM_LOG_LEVEL", "log-level", "Logging", "LEVEL", Kind::kValue, false,
     "debug, info, warn or error.",
     [](Config& c, absl::string_view v)
         -> absl::
             Status {
               if (absl::Status s = CheckOneOf(v, {"debug", "info", "warn", "error"}); !s.ok())
                 return s;
               c.log_level = std::string(v);
               return absl::OkStatus();
             },
     nullptr, &ShowString<&Config::log_level>},
};

const Option* FindFlag(absl::string_view flag) {
  for (const Option& o : kOptions) {
    if (o.flag == flag) return &o;
  }
  return nullptr;
}

const Option* FindKey(absl::string_view key) {
  for (const Option& o : kOptions) {
    if (!o.key.empty() && o.key == key) return &o;
  }
  return nullptr;
}

absl::Status BadValue(absl::string_view value, absl::string_view where, const absl::Status& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value \"", value, "\" for ", where, ": ", why.message()));
}

absl::Status SetValue(const Option& o, Config& c, absl::string_view value,
                      absl::string_view where) {
  absl::Status status = o.set(c, value);
  return status.ok() ? status : BadValue(value, where, status);
}

// Replaces the option's list with `values`, rejecting duplicates (listening
// on or watching the same thing twice is always a mistake).
absl::Status SetList(const Option& o, Config& c, const std::vector<std::string>& values,
                     absl::string_view where) {
  o.list(c)->clear();
  for (const std::string& value : values) {
    const std::vector<std::string>& list = *o.list(c);
    if (std::find(list.begin(), list.end(), value) != list.end()) {
      return BadValue(value, where, Reason("given twice"));
    }
    if (absl::Status s = SetValue(o, c, value, where); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// A value from the file as the text a flag would carry; nullopt for
// structures. YAML typed it (500 is a number, true a boolean), the options
// parse text.
std::optional<std::string> ScalarText(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return absl::StrCat(value.get<int64_t>());
  if (value.is_number_unsigned()) return absl::StrCat(value.get<uint64_t>());
  if (value.is_number()) return value.dump();
  return std::nullopt;
}

// `dir` is empty or ends with '/'.
std::string ResolveAgainst(absl::string_view dir, absl::string_view path) {
  if (path.empty() || path.front() == '/') return std::string(path);
  return absl::StrCat(dir, path);
}

absl::Status ApplyFileValue(const Option& o, Config& c, const Json& value, absl::string_view dir,
                            absl::string_view where) {
  if (value.is_null()) return absl::OkStatus();  // `key:` with no value: as if absent
  std::vector<std::string> texts;
  if (o.kind == Kind::kList && value.is_array()) {
    for (const Json& item : value) {
      std::optional<std::string> text = ScalarText(item);
      if (!text) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": list items must be single values, not ", item.type_name()));
      }
      texts.push_back(*std::move(text));
    }
  } else {
    std::optional<std::string> text = ScalarText(value);
    if (!text) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": expected ", o.kind == Kind::kList ? "a value or a list of values" : "a value",
          ", not ", value.type_name()));
    }
    texts.push_back(*std::move(text));
  }
  if (o.is_path) {
    for (std::string& text : texts) text = ResolveAgainst(dir, text);
  }
  if (o.kind == Kind::kList) return SetList(o, c, texts, where);
  return SetValue(o, c, texts.front(), where);
}

absl::Status ApplyFile(const std::string& path, Config& c) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return FileErrorAs(text.status(), "config file", path);
  absl::StatusOr<std::vector<Json>> documents = ParseYamlDocuments(*text);
  if (!documents.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": ", documents.status().message()));
  }
  if (documents->empty()) return absl::OkStatus();  // nothing set
  if (documents->size() > 1 || !documents->front().is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": must be a single YAML mapping of settings"));
  }
  // The directory with its trailing slash; empty (the working directory) for
  // a bare file name.
  size_t slash = path.rfind('/');
  absl::string_view dir = slash == std::string::npos ? absl::string_view()
                                                     : absl::string_view(path).substr(0, slash + 1);
  const Json& root = documents->front();
  // The settings as (key, value), tls's flattened to "tls.cert" and so on.
  std::vector<std::pair<std::string, const Json*>> entries;
  for (const auto& [key, value] : root.items()) {
    if (key == "tls" && value.is_object()) {
      for (const auto& [sub, sub_value] : value.items()) {
        entries.emplace_back(absl::StrCat("tls.", sub), &sub_value);
      }
    } else if (key == "tls" && !value.is_null()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "config file ", path,
          ": key \"tls\" must be a mapping of cert, key, client-ca, require-client-cert"));
    } else if (key != "tls") {
      entries.emplace_back(key, &value);
    }
  }
  for (const auto& [key, value] : entries) {
    const Option* o = FindKey(key);
    if (o == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("config file ", path, ": unknown key \"", key, "\""));
    }
    std::string where = absl::StrCat("key \"", key, "\" in config file ", path);
    if (absl::Status s = ApplyFileValue(*o, c, *value, dir, where); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyEnv(const std::function<const char*(const char*)>& getenv, Config& c) {
  for (const Option& o : kOptions) {
    const char* raw = getenv(std::string(o.env).c_str());
    if (raw == nullptr || *raw == '\0') continue;
    absl::string_view value = absl::StripAsciiWhitespace(raw);
    if (o.kind == Kind::kList) {
      std::vector<std::string> items;
      for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
        items.emplace_back(absl::StripAsciiWhitespace(item));
      }
      if (absl::Status s = SetList(o, c, items, o.env); !s.ok()) return s;
    } else if (absl::Status s = SetValue(o, c, value, o.env); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

struct FlagValue {
  const Option* option;
  std::string value;
};

// Splits argv into flags and values. Keeps scanning after an error so that
// --help anywhere still wins.
struct ScannedArgs {
  std::vector<FlagValue> flags;
  absl::Status error;
  bool help = false;
};

ScannedArgs ScanArgs(const std::vector<std::string>& argv) {
  ScannedArgs out;
  auto fail = [&out](std::string message) {
    if (out.error.ok()) out.error = absl::InvalidArgumentError(std::move(message));
  };
  const Option* previous_bool = nullptr;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    const Option* last_bool = previous_bool;
    previous_bool = nullptr;
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      continue;
    }
    absl::string_view body = arg;
    if (!absl::ConsumePrefix(&body, "--") || body.empty()) {
      if (arg != "--" && arg.size() > 1 && arg[0] == '-') {
        fail(absl::StrCat("unknown flag ", arg, " (flags start with --)"));
      } else if (last_bool != nullptr) {
        fail(absl::StrCat("unexpected argument \"", arg, "\": boolean flags take a value as --",
                          last_bool->flag, "=", arg));
      } else {
        fail(absl::StrCat("unexpected argument \"", arg, "\": workloadmapd takes only flags"));
      }
      continue;
    }
    std::pair<absl::string_view, absl::string_view> split =
        absl::StrSplit(body, absl::MaxSplits('=', 1));
    absl::string_view name = split.first;
    bool has_value = name.size() < body.size();
    const Option* o = FindFlag(name);
    if (o == nullptr) {
      fail(absl::StrCat("unknown flag --", name, " (see --help)"));
      continue;
    }
    std::string value;
    if (has_value) {
      value = std::string(split.second);
    } else if (o->kind == Kind::kBool) {
      value = "true";
      previous_bool = o;
    } else if (i + 1 < argv.size() && !(argv[i + 1].size() > 1 && argv[i + 1][0] == '-')) {
      value = argv[++i];
    } else {
      fail(i + 1 < argv.size() ? absl::StrCat("flag --", name, " needs a value (use --", name,
                                              "=VALUE for a value starting with '-')")
                               : absl::StrCat("flag --", name, " needs a value"));
      continue;
    }
    out.flags.push_back({o, std::move(value)});
  }
  return out;
}

absl::Status CheckCombination(const Config& c) {
  if (c.listen.empty())
    return absl::InvalidArgumentError("at least one --listen address is needed");
  const TlsConfig& tls = c.tls;
  if (!tls.cert_file.empty() && tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert needs --tls-key");
  }
  if (tls.cert_file.empty() && !tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-key needs --tls-cert");
  }
  if (!tls.client_ca_file.empty() && tls.cert_file.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert (mutual TLS is TLS)");
  }
  if (tls.require_client_cert && tls.client_ca_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-require-client-cert needs --tls-client-ca to verify the certificates");
  }
  if (c.publish_catalog && !c.leader_elect) {
    return absl::InvalidArgumentError(
        "--publish-catalog needs --leader-elect (one replica at a time writes to the cluster)");
  }
  {
    std::map<std::string, std::string> seen;  // schedulerName -> flag
    for (const auto& [flag, names] :
         {std::pair{"--kai-pod-groups", &c.kai_pod_groups},
          std::pair{"--volcano-pod-groups", &c.volcano_pod_groups},
          std::pair{"--coscheduling-pod-groups", &c.coscheduling_pod_groups}}) {
      if (!names->empty() && !c.leader_elect) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, " needs --leader-elect (one replica at a time writes to the cluster)"));
      }
      for (const std::string& name : *names) {
        auto [it, fresh] = seen.emplace(name, flag);
        if (!fresh) {
          return absl::InvalidArgumentError(absl::StrCat(
              "scheduler ", QuoteUserText(name), " is named by both ", it->second, " and ", flag));
        }
      }
    }
  }
  if (c.kai_pod_groups_for_native_kinds && c.kai_pod_groups.empty()) {
    return absl::InvalidArgumentError("--kai-pod-groups-for-native-kinds needs --kai-pod-groups");
  }
  if (c.publish_catalog && !c.builtin_catalog) {
    return absl::InvalidArgumentError(
        "--publish-catalog publishes the built-in catalog: not with --no-builtin-catalog");
  }
  if (!c.webhook_address.empty() && (c.webhook_tls_cert.empty() || c.webhook_tls_key.empty())) {
    return absl::InvalidArgumentError(
        "--webhook-address needs --webhook-tls-cert and --webhook-tls-key (the apiserver calls "
        "webhooks over HTTPS only)");
  }
  if (c.webhook_address.empty() && (!c.webhook_tls_cert.empty() || !c.webhook_tls_key.empty())) {
    return absl::InvalidArgumentError(
        "--webhook-tls-cert and --webhook-tls-key need --webhook-address");
  }
  if (c.jq_workers > 0 &&
      c.jq_memory_limit_bytes / c.jq_workers < expressions::kMinJqWorkerMemoryBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--jq-memory-limit ", FormatReported("memory", c.jq_memory_limit_bytes),
                     " gives each of --jq-workers ", c.jq_workers, " ",
                     (c.jq_memory_limit_bytes / c.jq_workers) >> 20, " MiB, less than the ",
                     expressions::kMinJqWorkerMemoryBytes >> 20, " MiB a jq worker needs"));
  }
  if (!c.unix_peer_identities.empty()) {
    if (c.authentication != "kubernetes") {
      return absl::InvalidArgumentError(
          "--unix-peer-identity needs --authentication=kubernetes (without it nobody is asked "
          "who they are)");
    }
    if (std::none_of(c.listen.begin(), c.listen.end(),
                     [](const std::string& a) { return absl::StartsWith(a, "unix:"); })) {
      return absl::InvalidArgumentError("--unix-peer-identity needs a --listen unix:PATH");
    }
  }
  if (c.authentication == "kubernetes" && !c.snapshot.empty()) {
    return absl::InvalidArgumentError(
        "--authentication=kubernetes needs a cluster to review tokens; --snapshot has none");
  }
  std::vector<absl::string_view> cluster;
  if (!c.kubeconfig.empty()) cluster.push_back("--kubeconfig");
  if (!c.contexts.empty()) cluster.push_back("--context");
  if (!c.snapshot.empty()) {
    if (c.in_cluster) cluster.push_back("--in-cluster");
    if (!cluster.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--snapshot cannot be combined with ", absl::StrJoin(cluster, " or ")));
    }
  } else if (c.in_cluster && !cluster.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--in-cluster cannot be combined with ", absl::StrJoin(cluster, " or ")));
  }
  return absl::OkStatus();
}

// Appends `text` word-wrapped to `width` columns, each line indented.
void AppendWrapped(std::string& out, absl::string_view text, absl::string_view indent,
                   size_t width = 80) {
  size_t column = 0;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (column > 0 && column + 1 + word.size() > width) {
      out.push_back('\n');
      column = 0;
    }
    if (column == 0) {
      absl::StrAppend(&out, indent, word);
      column = indent.size() + word.size();
    } else {
      absl::StrAppend(&out, " ", word);
      column += 1 + word.size();
    }
  }
  out.push_back('\n');
}

}  // namespace

absl::StatusOr<ParseResult> ParseConfig(const std::vector<std::string>& argv,
                                        std::function<const char*(const char*)> getenv) {
  ParseResult result;
  ScannedArgs args = ScanArgs(argv);
  if (args.help) {
    result.help = true;
    return result;
  }
  if (!args.error.ok()) return args.error;

  // The file's name comes from the higher sources, so find it first.
  std::string config_file;
  bool config_flag = false;
  for (const FlagValue& f : args.flags) {
    if (f.option->flag == "config") {
      config_file = f.value;
      config_flag = true;
    }
  }
  if (!config_flag) {
    const char* env = getenv("WM_CONFIG");
    if (env != nullptr) config_file = std::string(absl::StripAsciiWhitespace(env));
  }

  Config& c = result.config;
  if (!config_file.empty()) {
    if (absl::Status s = ApplyFile(config_file, c); !s.ok()) return s;
  }
  if (absl::Status s = ApplyEnv(getenv, c); !s.ok()) return s;
  absl::flat_hash_set<const Option*> replaced_lists;
  for (const FlagValue& f : args.flags) {
    const Option& o = *f.option;
    std::string where = absl::StrCat("--", o.flag);
    if (o.kind == Kind::kList) {
      std::vector<std::string>& list = *o.list(c);
      if (replaced_lists.insert(&o).second) list.clear();
      if (std::find(list.begin(), list.end(), f.value) != list.end()) {
        return BadValue(f.value, where, Reason("given twice"));
      }
    }
    if (absl::Status s = SetValue(o, c, f.value, where); !s.ok()) return s;
  }
  c.config_file = config_file;
  if (absl::Status s = CheckCombination(c); !s.ok()) return s;
  return result;
}

std::string Usage() {
  std::string out =
      "Usage: workloadmapd [FLAGS]\n"
      "\n"
      "Resolves Kubernetes workloads into workload maps and serves them over gRPC.\n"
      "\n";
  AppendWrapped(
      out,
      "Every setting is a flag, an environment variable and a config file key; the flag wins "
      "over the environment, which wins over the file, which wins over the default. Flags take "
      "--flag VALUE or --flag=VALUE; boolean flags are --flag or --flag=true|false. A "
      "repeatable flag, or a comma-separated environment list, replaces the lower sources' "
      "list rather than adding to it. Empty environment variables count as unset.",
      "");
  out += "\n";
  AppendWrapped(out,
                "The config file is a YAML mapping keyed by flag name without the dashes, with "
                "the tls-* settings nested under tls. Relative paths in it are relative to its "
                "directory; a key with no value counts as absent. For example:",
                "");
  out +=
      "  listen: [\"0.0.0.0:50051\", \"unix:/run/workloadmapd.sock\"]\n"
      "  metrics-address: \"off\"\n"
      "  context: [prod-eu, prod-us]\n"
      "  shutdown-grace: 30s\n"
      "  tls:\n"
      "    cert: tls.crt\n"
      "    key: tls.key\n"
      "    client-ca: ca.crt\n"
      "    require-client-cert: true\n";
  const Config defaults;
  for (absl::string_view group : kGroups) {
    absl::StrAppend(&out, "\n", group, ":\n");
    if (group == "General") {
      out += "  --help, -h\n";
      AppendWrapped(out, "Print this help and exit.", "      ");
    }
    for (const Option& o : kOptions) {
      if (o.group != group) continue;
      absl::StrAppend(&out, "  --", o.flag, o.metavar.empty() ? "" : " ", o.metavar, "\n");
      AppendWrapped(out, o.help, "      ");
      std::string default_value = o.show(defaults);
      std::string meta = absl::StrCat("env ", o.env);
      if (o.key.empty()) {
        absl::StrAppend(&meta, "; not in the file");
      } else if (o.key != o.flag) {
        absl::StrAppend(&meta, "; file ", o.key);
      }
      absl::StrAppend(&meta, "; default ", default_value.empty() ? "none" : default_value);
      AppendWrapped(out, meta, "      ");
    }
  }
  return out;
}

}  // namespace wm::daemon
