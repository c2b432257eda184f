#ifndef WM_SERVER_CONTROLLERS_POD_GROUP_CONTROLLER_H_
#define WM_SERVER_CONTROLLERS_POD_GROUP_CONTROLLER_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/controllers/pod_groups.h"
#include "server/controllers/retries.h"
#include "server/controllers/work_queue.h"
#include "server/index/workload_index.h"
#include "server/kube/api_client.h"
#include "server/kube/cluster_cache.h"

namespace wm::controllers {

// The PodGroup role: for the pods of one cluster whose schedulerName is
// configured, and whose top owner's definition has gang instructions,
// creates and keeps current the gang scheduler's own PodGroup (KAI's,
// Volcano's or the coscheduling plugin's, see pod_groups.h) and puts each
// pod into it (and into its subgroup).
//
// Input is the index's resolved views (a subscription: a workload whose
// pods, scale or labels change is published again) and the cache's
// PodGroups (one changed or deleted by someone else is looked at again).
// Writes go to the apiserver only while `may_write` is true (this replica
// leads): the PodGroup first (created, or merge-patched with the
// resourceVersion it was computed from), then each pod's membership (a
// merge patch of its labels and annotations with its resourceVersion), as
// KAI's own pod-grouper orders them. Nothing is written when nothing
// changed. The PodGroup's owner reference to the top owner (without
// controller) lets the garbage collector delete it with the workload.
//
// A pod is in its group only once the controller has seen it: a scheduler
// that would place an unannotated pod alone (Volcano, coscheduling) must
// not see it first. Nothing here guarantees that; docs/kai.md says what
// does.
class PodGroupController {
 public:
  struct Options {
    // Pods with these schedulerNames get their scheduler's PodGroups.
    std::map<std::string, GangScheduler> scheduler_names;
    // KAI PodGroups also for kinds KAI's pod-grouper groups itself
    // (KaiHasNativeGrouper); by default those are left to KAI.
    bool kai_native_kinds = false;
    std::string field_manager = "workloadmapd";
    absl::Duration resync = absl::Minutes(10);
    absl::Duration min_backoff = absl::Milliseconds(500);
    absl::Duration max_backoff = absl::Seconds(60);
    // How long MembershipOfNewPod waits for the cache and the index to
    // catch up with a pod's owners (well inside the webhook's 5 s).
    absl::Duration admission_wait = absl::Seconds(2);
    // Told of a failed reconcile (on the worker thread), once per workload
    // until its error changes or it succeeds.
    std::function<void(const std::string& workload, const absl::Status&)> on_error;
  };
  struct Counts {
    int64_t creates = 0;
    int64_t updates = 0;
    int64_t pod_patches = 0;
    int64_t failures = 0;
  };

  // The PodGroup kinds the cache must watch for `options`.
  static std::vector<Gvk> KindsToWatch(const Options& options);

  // REQUIRES: client, cache and index outlive the controller; `cache` is
  // the cluster's named `cluster` in the index, and watches
  // KindsToWatch(options).
  PodGroupController(const kube::ApiClient& client, const kube::ClusterCache& cache,
                     index::WorkloadIndex& index, std::string cluster,
                     std::function<bool()> may_write, Options options);
  ~PodGroupController();
  PodGroupController(const PodGroupController&) = delete;
  PodGroupController& operator=(const PodGroupController&) = delete;

  // A ClusterCache handler: queues the owner of each PodGroup change.
  void OnChange(const Gvk& gvk, const kube::Change& change);
  // After a discovery: the PodGroup CRDs' schemas are read again, and
  // every workload looked at.
  void OnDiscovery();
  // Queues every workload of the cluster (when leadership is gained).
  void ResyncAll();

  // The group a pod being created joins, for the mutating webhook, when it
  // can be told before the pod exists: its schedulerName is configured, its
  // controller chain leads through the cache to a workload the index has
  // resolved, and that workload's gang is one pod group (the podGroup form;
  // the alpha form's groups depend on the pod, and subgroups on its
  // labels: those the worker adds once the pod exists). Waits up to
  // Options::admission_wait for owners the cache has not seen yet. The pod
  // as the admission request holds it, in `namespace_`. Safe from any
  // thread.
  std::optional<PodGroupMembership> MembershipOfNewPod(const Json& pod,
                                                       const std::string& namespace_) const;

  // REQUIRES: the index is started.
  absl::Status Start();
  void Stop();

  Counts counts() const;

 private:
  struct Member {
    std::shared_ptr<const Json> pod;
    std::string sub_group;
  };

  void Run();
  // Until the cache has listed every kind (the workloads', their
  // children's, the pods, the PodGroups) and the index has resolved what
  // it holds, a view may be partial: a write computed from it would be
  // undone a moment later.
  bool Synced();
  absl::Status Reconcile(const index::WorkloadKey& key);
  // Whether the daemon writes `scheduler`'s group for a pod of `owner`
  // (KAI: not for kinds KAI groups itself, unless told; not when the top
  // owner or the pod says kai.scheduler/skip-podgrouper).
  // MembershipOfNewPod's one look; `behind` is set when the cache or the
  // index may not have caught up yet.
  std::optional<PodGroupMembership> TryMembership(const Json& pod, const std::string& namespace_,
                                                  GangScheduler scheduler, bool* behind) const;
  bool Handles(GangScheduler scheduler, const Gvk& owner_kind, const Json& top_owner,
               const Json& pod) const;
  absl::Status EnsurePodGroup(GangScheduler scheduler, const Json& desired);
  PodGroupSchema SchemaOf(GangScheduler scheduler);
  std::string KaiPriorityClass(const std::string& labelled);
  void Queue(const index::WorkloadKey& key);

  const kube::ApiClient& client_;
  const kube::ClusterCache& cache_;
  index::WorkloadIndex& index_;
  const std::string cluster_;
  const std::function<bool()> may_write_;
  const Options options_;
  const std::vector<Gvk> pod_group_kinds_;  // KindsToWatch(options_)
  WorkQueue queue_;
  std::thread worker_;
  int subscription_ = 0;
  std::atomic<bool> schemas_stale_{true};

  // The worker's own: no lock.
  bool initial_sync_seen_ = false;
  std::map<GangScheduler, PodGroupSchema> schemas_;
  Retries retries_;

  std::atomic<int64_t> creates_{0}, updates_{0}, pod_patches_{0}, failed_{0};
};

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_POD_GROUP_CONTROLLER_H_
