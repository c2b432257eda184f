#ifndef WM_SERVER_KUBE_CLUSTER_CACHE_H_
#define WM_SERVER_KUBE_CLUSTER_CACHE_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/kube/api_client.h"
#include "server/kube/cluster_view.h"
#include "server/kube/discovery.h"
#include "server/kube/informer.h"

namespace wm::kube {

// What one wanted kind looks like right now, for health and metrics.
struct KindStatus {
  Gvk gvk;
  std::string resource;  // "jobsets.v1alpha2.jobset.x-k8s.io"; empty when not served
  bool served = false;   // discovery lists it (with list and watch)
  ReflectorHealth health;
  size_t objects = 0;
  std::string message;  // why it is not served, when it is not
};

// Everything the daemon knows of one cluster: an informer per wanted kind
// the apiserver serves, started and stopped as CustomResourceDefinitions
// appear and disappear (the cache watches CRDs and re-runs discovery), and
// as the wanted kinds change (definitions reloaded). A kind that cannot be
// read (403) or is not served is reported in Status() while the others
// keep working.
class ClusterCache : public ClusterView {
 public:
  struct Options {
    // Scopes workload kinds and pods (not CRDs, nor cluster-scoped kinds).
    std::string namespace_;
    std::string label_selector;
    ReflectorOptions reflector;
    // Discovery runs again on every CRD change and at least this often.
    absl::Duration rediscovery_interval = absl::Minutes(5);
  };
  // (kind, change) on the informer's dispatch thread. A kind whose resource
  // stops being served reports a deletion for each of its objects.
  using Handler = std::function<void(const Gvk&, const Change&)>;

  ClusterCache(const ApiClient& client, Options options);
  ~ClusterCache();

  // Handlers must be added before Start().
  void AddHandler(Handler handler);
  // Told after each discovery (at start, on CRD changes, at least every
  // rediscovery_interval), on the cache's manager thread: for what depends
  // on which kinds the apiserver serves. REQUIRES: before Start().
  void AddDiscoveryHandler(std::function<void()> handler);
  // Runs discovery and starts the informers of `kinds` (pods are always
  // wanted) plus the CRD informer. Fails only when discovery fails.
  absl::Status Start(std::vector<Gvk> kinds);
  // Changes the wanted kinds: informers start and stop accordingly.
  void SetKinds(std::vector<Gvk> kinds);
  void Stop();

  // A kind's store, or nullptr when it has no informer. The store stays
  // valid while held, even if its informer is stopped meanwhile.
  std::shared_ptr<const Store> StoreFor(const Gvk& gvk) const override;
  // True when the kind's informer has received a complete list.
  bool HasSynced(const Gvk& gvk) const override;
  std::vector<std::pair<Gvk, std::shared_ptr<const Store>>> Stores() const override;
  uint64_t KindsGeneration() const override { return kinds_generation_.load(); }
  std::vector<KindStatus> Status() const;
  // The served resource of a watched kind (for writes), if any.
  std::optional<ApiResource> ResourceFor(const Gvk& gvk) const;
  // Its resource name ("jobsets"), empty when the kind is not watched: for
  // per-call authorization, which needs that one string of the resource.
  std::string PluralFor(const Gvk& gvk) const;
  // How a watched kind's informer is doing (syncing, synced, forbidden, ...),
  // if it has one.
  std::optional<ReflectorHealth> HealthOf(const Gvk& gvk) const;
  // Why the apiserver cannot list and watch `gvk` ("" when it can), as of
  // the last discovery, for any kind (watched or not); "not yet discovered"
  // before the first.
  std::string WhyNotWatchable(const Gvk& gvk) const;

  // Blocks until every informer has delivered its queued changes (tests).
  void WaitForIdle() const;
  // Re-runs discovery and reconciles now (tests; the cache does it itself).
  void Reconcile();

 private:
  struct Entry {
    ApiResource resource;
    std::shared_ptr<Informer> informer;
  };
  void Run();
  void StartInformer(const Gvk& gvk, const ApiResource& resource);
  void StopInformer(const Gvk& gvk);
  void RequestReconcile();

  const ApiClient& client_;
  const Options options_;
  std::vector<Handler> handlers_;
  std::vector<std::function<void()>> discovery_handlers_;
  std::unique_ptr<Informer> crds_;
  std::thread manager_;

  mutable std::mutex reconcile_mu_;  // one reconciliation at a time
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::vector<Gvk> wanted_;
  std::map<Gvk, Entry> informers_;
  // Bumped (under mu_) whenever informers_ gains or loses a kind.
  std::atomic<uint64_t> kinds_generation_ = 0;
  std::map<Gvk, std::string> not_served_;
  std::shared_ptr<const Discovery> discovery_;  // the last one that succeeded
  bool dirty_ = false;
  bool stopping_ = false;
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_CLUSTER_CACHE_H_
