#ifndef WM_SERVER_DAEMON_DAEMON_H_
#define WM_SERVER_DAEMON_DAEMON_H_

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/token_reviewer.h"
#include "server/access/unix_peers.h"
#include "server/admission/https_server.h"
#include "server/admission/tls_files.h"
#include "server/controllers/catalog_publication.h"
#include "server/controllers/karta_controller.h"
#include "server/controllers/pod_group_controller.h"
#include "server/daemon/config.h"
#include "server/daemon/rpc_metrics.h"
#include "server/expressions/engine.h"
#include "server/index/live_cluster.h"
#include "server/index/snapshot_cluster.h"
#include "server/kube/leader_election.h"
#include "server/observability/http_server.h"
#include "server/observability/metrics.h"
#include "server/platform/workload_metrics.h"
#include "server/rpc/service.h"
#include "server/rpc/unix_listener.h"
#include "server/rpc/unix_peer_registry.h"
#include "server/web/http_api.h"

namespace wm::daemon {

// The signals that stop the daemon: SIGTERM and SIGINT. main blocks them on
// every thread; AwaitSignal takes them.
sigset_t TerminationSignals();

// workloadmapd: one process's wiring of definitions, clusters (live or a
// snapshot), the workload index, the writers that run while this replica
// leads, and the servers (gRPC, HTTP, the admission webhook). Its members
// are defined by concern, one file each:
//   daemon.cc           Run and Fatal: the order things start and stop in;
//                       the engine, readiness, signals, this replica's name
//   daemon_clusters.cc  the clusters and their base definitions
//   daemon_roles.cc     leader election and the writers (Karta operator,
//                       PodGroups, catalog publication)
//   daemon_grpc.cc      the gRPC server, access control and audit
//   daemon_metrics.cc   the metric families
//   daemon_http.cc      the HTTP endpoint: metrics, probes, API, web page
//   daemon_webhook.cc   the admission webhook
class Daemon {
 public:
  explicit Daemon(Config config) : config_(std::move(config)), started_(absl::Now()) {}

  // Starts everything, serves until SIGTERM or SIGINT, and stops
  // everything; the process's exit code.
  int Run();

 private:
  // ---- daemon.cc

  // The engine --jq-engine names.
  absl::StatusOr<std::unique_ptr<expressions::Engine>> StartEngine();

  // Logs `what` failed and stops what was started; exit code 1.
  int Fatal(absl::string_view what, const absl::Status& status);

  // Stops what works in the background, in this order: the webhook, the
  // writers, the election (giving up the Lease), the clusters' watches and
  // the index. What was never started is skipped.
  void StopWork();

  // This replica's name in the Lease and in what it writes:
  // --leader-election-identity, else $POD_NAME (else the host name) and a
  // random suffix. Computed once, on the main thread.
  const std::string& Identity();

  // SERVING once every cluster's initial lists are in and resolved. The
  // log line says how long after the process started (a snapshot's load
  // included), and how long the lists and resolution took after listening.
  void AwaitReadiness();

  // SIGTERM or SIGINT: NOT_SERVING, stop accepting, let calls finish for
  // the grace period, cancel streams.
  void AwaitSignal();

  // ---- daemon_clusters.cc

  // The definitions every cluster starts from: the catalog (unless
  // --no-catalog) and --definitions.
  absl::Status LoadBase(definitions::Registry& registry) const;

  // The clusters to serve: a --snapshot directory, else one live cluster
  // per kubeconfig context (or in-cluster).
  absl::Status StartClusters();

  // ---- daemon_roles.cc

  // The writers of each live cluster (with --leader-elect: a daemon that
  // may not be alone writes only while it leads). Wired to their cluster's
  // cache here, before it starts; started once the elector exists.
  void AddControllers();

  // The schedulers whose PodGroups the leader writes, by schedulerName.
  controllers::PodGroupController::Options PodGroupOptions() const;

  // With --kai-pod-groups, --volcano-pod-groups or --coscheduling-pod-groups.
  void AddPodGroupControllers();

  // With --publish-catalog: the leader applies the built-in catalog to
  // each cluster when it starts leading.
  void AddCatalogPublications();

  // With --leader-elect: campaigns for the Lease in the first cluster.
  // Writers check elector_->IsLeader() before each write.
  absl::Status StartLeaderElection();

  // ---- daemon_grpc.cc

  // With --authentication=kubernetes, the service's authenticator and a
  // reviewer of access per cluster; with none, neither (said loudly: anyone
  // who can connect is served). Tokens are reviewed by the first cluster's
  // apiserver, the one whose ServiceAccounts the callers (schedulers,
  // platforms) run as; each call on a workload is authorized by the
  // apiserver of the workload's cluster.
  void StartAccessControl(rpc::WorkloadMapService::Options& options);

  // Counts every access decision, and logs each denial and each apply: who,
  // what, the decision and how long it took.
  void OnAudit(const rpc::AuditEvent& event);

  // The gRPC service on every --listen address (and the HTTP API's own
  // loopback listener), with health and reflection.
  absl::Status StartServer();

  // The health service's status for the whole server and the service.
  void SetServing(bool serving);

  // ---- daemon_metrics.cc

  // The daemon's metric families and their collectors
  // (docs/operations.md lists them).
  void AddMetrics();

  // ---- daemon_http.cc

  // `handler`, and with --authentication=kubernetes only for a caller with
  // a bearer token the apiserver accepts and RBAC's get on the request's
  // path as a non-resource URL (a ClusterRole's nonResourceURLs:
  // ["/metrics"]), as kube-rbac-proxy guards metrics; 401 or 403 otherwise.
  // The probes are never guarded: the kubelet sends no token.
  observability::HttpServer::Handler Guarded(observability::HttpServer::Handler handler);

  // The HTTP endpoint: metrics, probes, /debug, and the JSON API and web
  // page (docs/http-api.md).
  absl::Status StartHttp();

  // ---- daemon_webhook.cc

  // With --webhook-address: the validating admission webhook for Karta
  // objects, on its own HTTPS port (the apiserver calls it; the metrics
  // port may be plaintext and is for people).
  absl::Status StartWebhook();

  const Config config_;
  const absl::Time started_;  // when the process began, for the ready line
  std::unique_ptr<expressions::Engine> engine_;
  std::unique_ptr<index::WorkloadIndex> index_;
  std::vector<std::unique_ptr<index::LiveCluster>> live_;
  // After live_, whose first client it uses: stopped before it goes.
  std::string identity_;  // Identity()
  std::unique_ptr<kube::LeaderElector> elector_;
  std::vector<std::unique_ptr<controllers::KartaController>> karta_controllers_;
  std::vector<std::unique_ptr<controllers::PodGroupController>> pod_group_controllers_;
  std::vector<std::unique_ptr<controllers::CatalogPublication>> publications_;
  std::string lease_;  // "namespace/name" of elector_'s Lease
  std::unique_ptr<index::SnapshotCluster> snapshot_;
  std::unique_ptr<access::TokenReviewer> tokens_;
  access::UnixPeerTable unix_peer_table_;
  rpc::UnixPeerRegistry unix_peers_;
  std::unique_ptr<access::Authenticator> authenticator_;
  std::vector<std::unique_ptr<access::AccessReviewer>> access_reviewers_;
  std::unique_ptr<access::CallerLimits> caller_limits_;
  std::unique_ptr<rpc::WorkloadMapService> service_;
  std::unique_ptr<grpc::Server> server_;
  // After server_: stopped (their threads joined) before it goes.
  std::vector<std::unique_ptr<rpc::UnixListener>> unix_listeners_;
  observability::Registry metrics_;
  std::unique_ptr<RpcMetrics> rpc_metrics_;
  observability::CounterFamily* authentications_ = nullptr;
  observability::CounterFamily* authorizations_ = nullptr;
  // Their OK series, [0] from the apiserver and [1] from a cache.
  observability::Counter* authenticated_[2] = {};
  observability::Counter* authorized_[2] = {};
  std::unique_ptr<platform::WorkloadMetrics> workload_metrics_;
  // The listener the HTTP API calls the service through (StartServer).
  std::string api_address_;
  // Before http_: its handlers call it until http_ has stopped.
  std::unique_ptr<web::HttpApi> http_api_;
  std::unique_ptr<observability::HttpServer> http_;
  std::unique_ptr<admission::TlsFiles> webhook_tls_;
  std::unique_ptr<admission::HttpsServer> webhook_;
  std::atomic<int64_t> webhook_reviews_[3] = {0, 0, 0};  // allowed, denied, invalid
  std::atomic<int64_t> pod_reviews_[3] = {0, 0, 0};      // placed, admitted, invalid
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace wm::daemon

#endif  // WM_SERVER_DAEMON_DAEMON_H_
