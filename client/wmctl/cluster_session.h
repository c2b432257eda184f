#ifndef WM_CLIENT_WMCTL_CLUSTER_SESSION_H_
#define WM_CLIENT_WMCTL_CLUSTER_SESSION_H_

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "server/expressions/engine.h"
#include "server/index/live_cluster.h"
#include "server/index/workload_index.h"
#include "server/kube/auth/kubeconfig.h"
#include "server/rpc/service.h"
#include "server/sources/definition_set.h"

namespace wm::wmctl {

// Where kubeconfig mode finds its cluster: kubectl's connection flags.
struct KubeconfigSettings {
  std::string kubeconfig;  // --kubeconfig; empty: $KUBECONFIG, else ~/.kube/config
  std::string context;     // --context; empty: the current-context
  // --as and --as-group: replace the kubeconfig's impersonation when given.
  std::string as;
  std::vector<std::string> as_groups;
  kube::EnvLookup getenv;  // for $KUBECONFIG and $HOME; null: the process's
};

// The connection `settings` name, read from the kubeconfig (no request is
// sent). Errors name the file and the field, or say that there is no
// kubeconfig or no current-context.
absl::StatusOr<kube::ClusterConnection> LoadClusterConnection(const KubeconfigSettings& settings);

// kubeconfig mode: the daemon's own stack for one command, in this process
// and over one kubeconfig context. The same libraries, wired as
// workloadmapd wires them (docs/ARCHITECTURE.md): a LiveCluster (watch
// cache of the kinds the definitions need, the definitions in force: the
// base overlaid with the cluster's Karta objects), a WorkloadIndex and the
// WorkloadMapService on an in-process gRPC server. wmctl talks to it
// through the same LiveClient as to a daemon, so both modes answer the same
// bytes. Start() returns once every watched kind is listed (or known
// forbidden or not served) and resolved.
class ClusterSession {
 public:
  struct Options {
    // Scope of the workload kinds and pods listed; empty: every namespace.
    std::string namespace_;
    // Fills the base registry (the catalog and --definitions files).
    sources::DefinitionSet::BaseLoader base;
    // How long discovery and the initial lists may take; zero, less or
    // infinite: no limit.
    absl::Duration timeout = absl::Seconds(60);
    // When the lists take longer than `progress_after`, a line on
    // `progress` says what is still being listed, then every
    // `progress_every`.
    absl::Duration progress_after = absl::Seconds(1);
    absl::Duration progress_every = absl::Seconds(2);
  };

  // Starts watching and waits for the initial lists. Unavailable when
  // discovery fails; DeadlineExceeded, naming the kinds still unlisted and
  // their last errors, when `options.timeout` passes first (checked before
  // the lists are: a timeout of 1ms always passes).
  static absl::StatusOr<std::unique_ptr<ClusterSession>> Start(kube::ClusterConnection connection,
                                                               Options options,
                                                               std::ostream& progress);
  ~ClusterSession();
  ClusterSession(const ClusterSession&) = delete;
  ClusterSession& operator=(const ClusterSession&) = delete;

  // A channel to the in-process service.
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  // The kubeconfig context (the service's one cluster has its name).
  const std::string& context() const { return context_; }
  // What the answers lack, for warnings: the Karta objects when they may
  // not be listed (the catalog and --definitions are used alone), and the
  // other kinds the credentials may not list (one line naming them all).
  std::vector<std::string> Warnings() const;

 private:
  ClusterSession() = default;
  // Blocks until every watched kind is settled and resolved, printing
  // progress, or until `options.timeout` after `start`; the error of
  // Start().
  absl::Status AwaitInitialLists(const Options& options, absl::Time start, std::ostream& progress);

  std::string context_;
  std::unique_ptr<expressions::Engine> engine_;
  std::unique_ptr<index::WorkloadIndex> index_;
  std::unique_ptr<index::LiveCluster> cluster_;
  std::unique_ptr<rpc::WorkloadMapService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_CLUSTER_SESSION_H_
