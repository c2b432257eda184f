#ifndef WM_SERVER_CONTROLLERS_KARTA_CONTROLLER_H_
#define WM_SERVER_CONTROLLERS_KARTA_CONTROLLER_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/controllers/event_recorder.h"
#include "server/controllers/retries.h"
#include "server/controllers/work_queue.h"
#include "server/definitions/check.h"
#include "server/expressions/engine.h"
#include "server/kube/api_client.h"
#include "server/kube/cluster_cache.h"

namespace wm::controllers {

// The Karta operator role: keeps each Karta object of one cluster telling
// the truth about itself, as upstream's operator does, so that consumers
// that read Kartas directly (KAI Scheduler's fallback, kli) find them and
// users see what is wrong with theirs:
//   - the labels run.ai/karta-group, -version and -kind, equal to the root
//     component's kind (kept right when it changes; removed when the spec
//     names none);
//   - the conditions Validated (with the findings and their field paths),
//     CRDExists (the root kind is served) and Ready, each with
//     observedGeneration, through the status subresource;
//   - a Warning event for each finding not reported before.
// Nothing is written when nothing changed: the desired state is compared
// with the object before each write, and what counts as "reported" is read
// from the object, so a new leader repeats nothing.
//
// Reads come from the cluster's cache (a Karta informer), writes go to the
// apiserver and only while `may_write` is true (this replica leads); each
// is a merge patch carrying the resourceVersion it was computed from, so a
// stale cache can delay a write but never make a wrong one. One worker
// thread; keys are Karta names in a WorkQueue; failures are retried with
// exponential backoff.
class KartaController {
 public:
  struct Options {
    // metadata.managedFields name us as this manager.
    std::string field_manager = "workloadmapd";
    // This replica, for events' reportingInstance.
    std::string instance;
    // Every Karta is looked at again this often (discovery changes, CRDs
    // applied or removed, and leadership gained also trigger it).
    absl::Duration resync = absl::Minutes(10);
    absl::Duration min_backoff = absl::Milliseconds(500);
    absl::Duration max_backoff = absl::Seconds(60);
    // Told of a failed reconcile (on the worker thread), for logs: once per
    // Karta until its error changes or it succeeds.
    std::function<void(const std::string& karta, const absl::Status&)> on_error;
  };
  // Writes made since start, by kind, and failed reconciles.
  struct Counts {
    int64_t label_writes = 0;
    int64_t status_writes = 0;
    int64_t events = 0;
    int64_t failures = 0;
  };

  // REQUIRES: client, cache and engine outlive the controller; `cache`
  // watches Kartas (sources::KartaGvk()).
  KartaController(const kube::ApiClient& client, const kube::ClusterCache& cache,
                  expressions::Engine& engine, std::function<bool()> may_write, Options options);
  ~KartaController();
  KartaController(const KartaController&) = delete;
  KartaController& operator=(const KartaController&) = delete;

  // A ClusterCache handler: queues the Karta of each Karta change.
  void OnChange(const Gvk& gvk, const kube::Change& change);
  // Queues every Karta (after a discovery, when leadership is gained).
  void ResyncAll();

  void Start();
  void Stop();

  Counts counts() const;

 private:
  struct Checked {
    std::string uid;
    int64_t generation = 0;
    definitions::CheckedDefinition result;
  };

  void Run();
  absl::Status Reconcile(const std::string& name);
  // The check of this generation of the object, computed once per
  // generation (status and label writes do not change it).
  const definitions::CheckedDefinition& Check(const std::string& name, const std::string& uid,
                                              int64_t generation, const Json& object);

  const kube::ApiClient& client_;
  const kube::ClusterCache& cache_;
  expressions::Engine& engine_;
  const std::function<bool()> may_write_;
  const Options options_;
  Retries retries_;  // the worker's own
  EventRecorder recorder_;
  WorkQueue queue_;
  std::thread worker_;

  // The worker's own: no lock.
  std::map<std::string, Checked> checked_;

  std::atomic<int64_t> label_writes_{0}, status_writes_{0}, events_{0}, failed_{0};
};

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_KARTA_CONTROLLER_H_
