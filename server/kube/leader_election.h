#ifndef WM_SERVER_KUBE_LEADER_ELECTION_H_
#define WM_SERVER_KUBE_LEADER_ELECTION_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/kube/api_client.h"

namespace wm::kube {

// Which replica writes: one candidate at a time holds a
// coordination.k8s.io/v1 Lease, by client-go's leaderelection rules.
//
// A candidate tries to acquire the Lease every retry_period. It may take
// it when the Lease is free or when the holder's record has not changed for
// lease_duration as this candidate observed it (its own clock, not the
// Lease's timestamps: clocks of replicas disagree). The holder renews every
// retry_period; when it could not renew for renew_deadline it stops
// leading. Because renew_deadline < lease_duration, a leader that cannot
// renew stops before any other candidate may take the Lease: IsLeader()
// turns false at the deadline on the leader's own clock, so a writer that
// checks it before each write never writes beside another leader (up to the
// drift of two clocks' rates over lease_duration - renew_deadline).
//
// Updates use the Lease's resourceVersion (optimistic concurrency), so two
// candidates that both saw it expire cannot both take it.
struct LeaderElectionConfig {
  std::string namespace_;
  std::string name;
  // This candidate, unique among the replicas (the pod name and a random
  // suffix: a restarted pod must not pass for its former self).
  std::string identity;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  // Told when this candidate starts and stops leading (on the elector's
  // thread; must not block for long) and when the holder it observes
  // changes ("" when none).
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& holder)> on_new_leader;
};

class LeaderElector {
 public:
  // InvalidArgument, naming the field, unless namespace, name and identity
  // are set and lease_duration > renew_deadline > retry_period * 1.2 > 0
  // (client-go's rule: the renewal jitter must fit).
  static absl::StatusOr<std::unique_ptr<LeaderElector>> Create(const ApiClient& client,
                                                               LeaderElectionConfig config);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts campaigning on a thread of its own.
  void Start();
  // Stops campaigning; a holder gives the Lease up (holder cleared, so the
  // next candidate takes it at once) unless `release` is false.
  void Stop(bool release = true);

  // True while this candidate holds the Lease and its last renewal is
  // younger than renew_deadline. Check it before each write.
  bool IsLeader() const;
  // The holder last observed ("" when none or not yet known).
  std::string leader() const;
  const std::string& identity() const { return config_.identity; }
  // Times this candidate started leading.
  int64_t times_led() const { return times_led_.load(); }

 private:
  LeaderElector(const ApiClient& client, LeaderElectionConfig config);
  void Run();
  // One try: take or renew the Lease. True when this candidate holds it
  // afterwards.
  bool TryAcquireOrRenew();
  void Release();
  // Waits `period` (or until stopped); false once stopped.
  bool Sleep(absl::Duration period);
  void SetLeading(bool leading);
  void Observe(const std::string& holder);

  const ApiClient& client_;
  const LeaderElectionConfig config_;
  const std::string path_;  // of the Lease

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  bool leading_ = false;
  absl::Time last_renew_ = absl::InfinitePast();  // local clock
  std::string observed_holder_;
  // The record as last read, and when (local clock) it last changed.
  std::string observed_record_;
  absl::Time observed_at_ = absl::InfinitePast();
  std::atomic<int64_t> times_led_{0};
  std::thread thread_;
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_LEADER_ELECTION_H_
