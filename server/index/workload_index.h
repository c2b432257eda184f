#ifndef WM_SERVER_INDEX_WORKLOAD_INDEX_H_
#define WM_SERVER_INDEX_WORKLOAD_INDEX_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/common/work_pool.h"
#include "server/expressions/engine.h"
#include "server/index/cluster.h"
#include "server/kube/document_cache.h"
#include "server/kube/store.h"
#include "workloadmap/v1/service.pb.h"

namespace wm::index {

// Names one workload object across the daemon's clusters.
struct WorkloadKey {
  std::string cluster;
  Gvk gvk;
  std::string key;  // "namespace/name"
  bool operator<(const WorkloadKey& o) const {
    return std::tie(cluster, gvk, key) < std::tie(o.cluster, o.gvk, o.key);
  }
  bool operator==(const WorkloadKey& o) const = default;
};

// One workload as last resolved. Immutable once published: readers share
// it without locks.
struct WorkloadView {
  WorkloadKey id;
  std::string namespace_, name, uid, creation_timestamp;
  std::map<std::string, std::string> labels;
  // The revision that published this view, and the one that published the
  // first view of this workload (its ADDED event).
  uint64_t revision = 0;
  uint64_t added_revision = 0;
  // When this view was published: the workload's last change as resolved
  // (a resolution that changes nothing publishes nothing). InfinitePast for
  // a view resolved on request (ResolveNow).
  absl::Time changed = absl::InfinitePast();
  // Resolved with every pod; absent when resolution failed (see error).
  std::shared_ptr<const workloadmap::v1::ResolvedWorkload> resolved;
  // A ResolveWorkloadResponse of `resolved` without pods and without a
  // revision, serialized: most ResolveWorkload calls answer with these
  // bytes followed by the revision's field, without a copy of `resolved`.
  std::string resolve_response_without_pods;
  absl::Status error;
  workloadmap::v1::WorkloadSummary summary;
};

struct WorkloadEvent {
  workloadmap::v1::WorkloadEvent::Type type;
  uint64_t revision;
  std::shared_ptr<const WorkloadView> view;
};

// The resolved workloads of every cluster the daemon serves, kept current:
// cache changes are queued by the informers' dispatch threads, and one
// resolver thread coalesces them into the set of affected workloads (the
// changed object if a definition covers its kind, and every covered object
// up its controller chain), resolves those (with helper threads, see
// Options::resolver_threads) and publishes new views with a revision. Only workloads at the top of
// their controller chains are kept: an object inside a covered workload (a JobSet's Jobs, a Job's
// pods) is resolved on request by ResolveNow, so a cluster's pods do not each hold a view. Reads
// (Get, List) are snapshot reads that run no expression. Subscribers see every published change in
// revision order. A subscriber that resumes after a disconnect gets each workload's latest change
// since its revision (intermediate states are skipped, as after a relist), which the current views
// and a bounded list of deletions provide: memory does not grow with the rate of change.
class WorkloadIndex {
 public:
  struct Options {
    // Deletions of top-level workloads remembered for resuming watches;
    // resuming from before the last one forgotten is refused (OutOfRange).
    size_t history = 10000;
    // Threads resolving one batch of changes together (the resolver thread
    // and resolver_threads - 1 helpers); 0: one per usable CPU, at most 4.
    // A batch's views are published by the resolver thread alone, in key
    // order, after the whole batch is resolved: each workload's views stay
    // in order and subscribers see one writer.
    int resolver_threads = 0;
    // What the trees of large workloads' pods kept between resolutions may
    // take (kube::DocumentCache); 0 keeps none. A workload of at least
    // kPodTreeCacheMinObjects objects below it keeps its pods' trees: a
    // large job resolved again when one pod changes then rebuilds that
    // pod's tree only. A small workload rebuilds its few in microseconds,
    // and leaves the budget to the jobs where it saves milliseconds.
    size_t pod_tree_cache_bytes = 64 << 20;
  };
  static constexpr size_t kPodTreeCacheMinObjects = 32;
  // Called on the resolver thread with each event; must not block.
  using Listener = std::function<void(const WorkloadEvent&)>;

  WorkloadIndex(expressions::Engine& engine, Options options);
  ~WorkloadIndex();

  // Clusters are added before Start(); they must outlive the index.
  void AddCluster(Cluster* cluster);
  void Start();
  void Stop();

  // A change of one cached object (a ClusterCache handler).
  void OnChange(const std::string& cluster, const Gvk& gvk, const kube::Change& change);
  // Every workload of `cluster` is resolved again, found by listing the
  // covered kinds rather than by tracing each object's controller chain:
  // for when everything may have changed at once (its definitions were
  // replaced) or arrived at once (a snapshot, loaded whole before the index
  // starts: a start of 10,000 workloads would otherwise trace 70,000
  // objects' chains up and down, on the resolver thread alone).
  void Resync(const std::string& cluster);

  Cluster* FindCluster(const std::string& name) const;
  const std::vector<Cluster*>& clusters() const { return clusters_; }

  std::shared_ptr<const WorkloadView> Get(const WorkloadKey& key) const;
  // Every view, in key order.
  std::vector<std::shared_ptr<const WorkloadView>> List() const;
  uint64_t revision() const;
  // True when no change is waiting to be resolved.
  bool Idle() const;
  // Blocks until Idle() (tests, readiness).
  void WaitForIdle() const;

  // Resolves one object now, outside the index: an object inside a
  // workload, or one the resolver thread has not reached yet. Evaluates
  // expressions. NotFound when it is not in the cache.
  absl::StatusOr<std::shared_ptr<const WorkloadView>> ResolveNow(const WorkloadKey& key);

  // Registers `listener` for events after the current revision and returns
  // the current views with that revision, atomically. With a non-zero
  // `resume_after` it instead returns, in backlog and in revision order, the
  // latest event of each workload changed after that revision: ADDED or
  // MODIFIED with its current view, or DELETED (top-level workloads only,
  // the ones watches carry; workloads both added and deleted since are left
  // out); OutOfRange when a deletion after it has been forgotten, or the
  // revision is ahead of the index.
  struct Subscription {
    int id = 0;
    uint64_t revision = 0;
    std::vector<std::shared_ptr<const WorkloadView>> views;
    std::vector<WorkloadEvent> backlog;
  };
  absl::StatusOr<Subscription> Subscribe(Listener listener, uint64_t resume_after);
  void Unsubscribe(int id);

  // Resolver work done, for metrics.
  struct Counters {
    uint64_t resolutions = 0;
    uint64_t resolution_errors = 0;
    uint64_t changes = 0;
  };
  Counters counters() const;
  kube::DocumentCache::Stats pod_tree_cache_stats() const { return pod_trees_.stats(); }

 private:
  struct Pending {
    std::string cluster;
    Gvk gvk;
    std::shared_ptr<const kube::CachedObject> object;  // old or new
    // Added, deleted or moved to another controller: the controller chains
    // of the objects below it changed too.
    bool structural = false;
  };
  void Run();
  // The covered workloads a change touches.
  void Affected(const Pending& change, std::vector<WorkloadKey>* out) const;
  bool Covered(const Cluster& cluster, const Gvk& gvk) const;
  // True when a covered workload controls `object`, directly or higher up.
  bool InsideCoveredWorkload(const Cluster& cluster, const kube::CachedObject& object) const;
  std::shared_ptr<WorkloadView> Resolve(const Cluster& cluster, const Gvk& gvk,
                                        std::shared_ptr<const kube::CachedObject> object);
  void Publish(const WorkloadKey& key, std::shared_ptr<WorkloadView> view);
  // The views of `keys` (null for those to drop), resolved by the resolver
  // thread and the helpers together.
  std::vector<std::shared_ptr<WorkloadView>> ResolveBatch(const std::vector<WorkloadKey>& keys);
  std::shared_ptr<WorkloadView> ResolveKey(const WorkloadKey& key);

  expressions::Engine& engine_;
  const Options options_;
  kube::DocumentCache pod_trees_;
  std::vector<Cluster*> clusters_;
  std::thread resolver_;
  // Helpers of the resolver thread (resolver_threads - 1 of them).
  std::unique_ptr<WorkPool> helpers_;
  int helper_count_ = 0;

  mutable std::mutex queue_mu_;
  mutable std::condition_variable queue_cv_;
  std::vector<Pending> queue_;
  std::vector<std::string> resyncs_;  // clusters to resync (Resync)
  bool busy_ = false;
  bool stopping_ = false;

  // Views, deletions and listeners; publishing and subscribing hold it, so
  // a subscriber misses no event and sees none twice.
  mutable std::mutex mu_;
  std::map<WorkloadKey, std::shared_ptr<const WorkloadView>> views_;
  uint64_t revision_ = 0;
  // The last options_.history DELETED events of top-level workloads, oldest
  // first, and the newest revision resuming cannot start before (the last
  // deletion forgotten).
  std::deque<WorkloadEvent> deletions_;
  uint64_t oldest_resumable_ = 0;
  std::map<int, Listener> listeners_;
  int next_listener_ = 1;
  Counters counters_;
};

// Copies `from` with at most `pod_limit` pods per component instance (0:
// all), the unhealthy ones kept first, or with none unless include_pods.
void CopyTrimmed(const workloadmap::v1::ResolvedWorkload& from, bool include_pods, int pod_limit,
                 workloadmap::v1::ResolvedWorkload* to);
// The same trimming done in place, on an answer nobody else holds (an
// inline resolution's).
void TrimPods(bool include_pods, int pod_limit, workloadmap::v1::ResolvedWorkload* workload);

// The summary row of a resolved workload (ListWorkloads).
workloadmap::v1::WorkloadSummary Summarize(const WorkloadView& view);

}  // namespace wm::index

#endif  // WM_SERVER_INDEX_WORKLOAD_INDEX_H_
