// WatchWorkloads: the index's events, filtered, written by one reactor per call.
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/time/clock.h"
#include "grpcpp/alarm.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/rpc/caller_credentials.h"
#include "server/rpc/internal/list_access.h"
#include "server/rpc/internal/list_filter.h"
#include "server/rpc/internal/messages.h"
#include "server/rpc/request_parsing.h"
#include "server/rpc/service.h"

namespace wm::rpc {

namespace v1 = workloadmap::v1;
using internal::ListFilter;
using internal::MakeFilter;
using internal::NotReadyError;
using internal::SerializeMessage;
using ::wm::index::CopyTrimmed;
using ::wm::index::WorkloadEvent;
using ::wm::index::WorkloadView;

// Writes serialized events: the method is registered raw so that it parses
// its request itself.
class WorkloadMapService::WatchReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  WatchReactor(WorkloadMapService& service, grpc::CallbackServerContext* context,
               const grpc::ByteBuffer& request_bytes)
      : service_(service), context_(context) {
    const access::Authenticator* authenticator = service.options_.authenticator;
    if (authenticator == nullptr) {
      Begin(request_bytes);
      return;
    }
    absl::StatusOr<access::CallerCredentials> credentials =
        ReadCallerCredentials(*context, service.options_.unix_peers);
    if (!credentials.ok()) {
      FinishNow(credentials.status());
      return;
    }
    std::optional<absl::StatusOr<access::SharedIdentity>> known =
        authenticator->AuthenticateWithoutBlocking(*credentials);
    if (known && !known->ok()) {
      FinishNow(known->status());
      return;
    }
    if (known) caller_ = **std::move(known);
    if (known && service.options_.access_reviewers.empty()) {
      Begin(request_bytes);
      return;
    }
    // The token needs a review, or the snapshot needs SubjectAccessReviews:
    // on the pool. Until Begin is done, a cancel only takes note (see
    // OnCancel), so that the stream is not finished, and this reactor
    // deleted, while the pool still holds it.
    starting_ = true;
    service.pool_.Post([this, authenticator, credentials = *std::move(credentials),
                        request = request_bytes] {
      if (caller_ == nullptr) {
        absl::StatusOr<access::SharedIdentity> identity = authenticator->Authenticate(credentials);
        if (!identity.ok()) return FinishNow(identity.status());
        caller_ = *std::move(identity);
      }
      Begin(request);
    });
  }

  void OnWriteDone(bool ok) override {
    std::unique_lock lock(mu_);
    writing_ = false;
    if (!ok) {
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the stream broke"));
      return;
    }
    if (in_flight_.type() == v1::WorkloadEvent::SYNCED) synced_ = true;
    if (synced_) delivered_ = in_flight_.revision();
    if (live_queued_ > 0 && in_flight_.type() != v1::WorkloadEvent::SYNCED && synced_) {
      --live_queued_;
    }
    WriteNextLocked();
  }

  void OnCancel() override {
    std::unique_lock lock(mu_);
    if (starting_) {
      cancelled_while_starting_ = true;
      return;
    }
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client"));
  }

  void OnDone() override {
    if (subscription_ != 0) service_.index_.Unsubscribe(subscription_);
    if (stream_holder_) service_.options_.limits->CloseStream(*stream_holder_);
    std::unique_lock lock(mu_);
    done_ = true;
    ++outstanding_;  // held while the alarm is cancelled, outside the lock
    if (recheck_armed_) {
      lock.unlock();
      alarm_.Cancel();  // its callback still runs, and releases its hold
      lock.lock();
    }
    ReleaseLocked(lock);  // the last hold deletes this
  }

 private:
  // Parses the request, subscribes to the index and writes the snapshot.
  void Begin(const grpc::ByteBuffer& request_bytes) {
    if (access::CallerLimits* limits = service_.options_.limits) {
      if (absl::Status s = service_.AdmitCall(*context_, caller_.get()); !s.ok()) {
        return FinishNow(s);
      }
      std::string key = LimitKey(*context_, caller_.get());
      if (absl::Status s = limits->OpenStream(key); !s.ok()) return FinishNow(s);
      stream_holder_ = std::move(key);
    }
    v1::WatchWorkloadsRequest request;
    if (absl::Status parsed = ParseRequest(request_bytes, &request); !parsed.ok()) {
      return FinishNow(parsed);
    }
    include_pods_ = request.include_pods();
    if (!service_.ready_) return FinishNow(NotReadyError());
    auto filter = MakeFilter(service_.index_, service_.kind_names_, request.cluster(),
                             request.namespace_(), request.kinds(), {}, request.label_selector());
    if (!filter.ok()) return FinishNow(filter.status());
    filter_ = *std::move(filter);
    access_.emplace(caller_, service_.options_.access_reviewers, service_.index_);
    checked_access_ = absl::Now();
    // Whether the caller sees only some namespaces, as of the views now:
    // a resumed stream may send none, yet its SYNCED must say so too.
    bool filtered = false;
    if (!access_->unrestricted()) {
      // Asks what the snapshot needs before subscribing, so that the index
      // never waits on this stream's lock while the apiserver answers (the
      // answers land in the reviewers' caches).
      internal::ListAccess probe(caller_, service_.options_.access_reviewers, service_.index_);
      for (const auto& view : service_.index_.List()) {
        if (!filter_.Matches(service_.index_, service_.kind_names_, *view)) continue;
        if (auto asked = probe.MaySee(*view, true); !asked.ok()) return FinishNow(asked.status());
      }
      filtered = probe.filtered();
    }
    std::unique_lock lock(mu_);
    auto subscription = service_.index_.Subscribe(
        [this](const WorkloadEvent& event) { OnEvent(event); }, request.resume_revision());
    if (!subscription.ok()) {
      starting_ = false;
      finished_ = true;
      Finish(ToGrpcStatus(subscription.status()));
      return;
    }
    subscription_ = subscription->id;
    // Decisions are cached by now (see the probe above); one that is not (a
    // namespace new since) is asked here, on the pool.
    for (const auto& view : subscription->views) {
      if (!filter_.Matches(service_.index_, service_.kind_names_, *view)) continue;
      if (absl::Status s = AdmitLocked({v1::WorkloadEvent::ADDED, view->revision, view}, true);
          !s.ok()) {
        return FinishStartingLocked(s);
      }
    }
    for (const WorkloadEvent& event : subscription->backlog) {
      if (!filter_.Matches(service_.index_, service_.kind_names_, *event.view)) continue;
      if (absl::Status s = AdmitLocked(event, true, /*resumed=*/true); !s.ok()) {
        return FinishStartingLocked(s);
      }
    }
    v1::WorkloadEvent synced;
    synced.set_type(v1::WorkloadEvent::SYNCED);
    synced.set_revision(subscription->revision);
    synced.set_filtered(filtered || access_->filtered());
    last_revision_ = subscription->revision;
    ArmRecheckLocked();
    queue_.push_back(std::move(synced));
    starting_ = false;
    if (cancelled_while_starting_) {
      return FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client"));
    }
    WriteNextLocked();
  }

  // Ends the stream before it started.
  void FinishNow(const absl::Status& status) {
    std::unique_lock lock(mu_);
    FinishStartingLocked(status);
  }
  void FinishStartingLocked(const absl::Status& status) {
    starting_ = false;
    finished_ = true;
    queue_.clear();
    Finish(ToGrpcStatus(status));
  }

  // Queues `event` if the caller may see its workload. A workload the caller
  // could see and now may not (RBAC changed) goes as DELETED; one it now may
  // and did not see comes as ADDED. Events whose decision is not known wait,
  // in order, behind a review on the pool, unless `may_ask` (on the pool).
  // A `resumed` event (a resume's backlog) is about what the client saw on
  // an earlier stream, which this one does not know: it goes as it is.
  absl::Status AdmitLocked(const WorkloadEvent& event, bool may_ask, bool resumed = false) {
    if (access_->unrestricted()) {
      queue_.push_back(Event(event.type, event.revision, *event.view));
      return absl::OkStatus();
    }
    if (!held_.empty()) {
      held_.push_back(event);
      return absl::OkStatus();
    }
    if (absl::Now() - checked_access_ > service_.options_.watch_access_recheck) {
      access_->Forget();  // ask the reviewers again: their caches follow RBAC
      checked_access_ = absl::Now();
    }
    absl::StatusOr<std::optional<bool>> may_see = access_->MaySee(*event.view, may_ask);
    if (!may_see.ok()) return may_see.status();
    if (!may_see->has_value()) {
      held_.push_back(event);
      ReviewHeldLocked();
      return absl::OkStatus();
    }
    auto shown = shown_.find(event.view->id);
    v1::WorkloadEvent::Type type = event.type;
    if (resumed) {
      if (!**may_see) return absl::OkStatus();
      if (type == v1::WorkloadEvent::DELETED) {
        if (shown != shown_.end()) shown_.erase(shown);
      } else {
        shown_[event.view->id] = event.view;
      }
      queue_.push_back(Event(type, event.revision, *event.view));
      return absl::OkStatus();
    }
    if (!**may_see) {
      if (shown == shown_.end()) return absl::OkStatus();
      queue_.push_back(Event(v1::WorkloadEvent::DELETED, event.revision, *shown->second));
      shown_.erase(shown);
      return absl::OkStatus();
    }
    if (type == v1::WorkloadEvent::DELETED) {
      if (shown == shown_.end()) return absl::OkStatus();
      shown_.erase(shown);
    } else {
      if (shown == shown_.end()) type = v1::WorkloadEvent::ADDED;
      shown_[event.view->id] = event.view;
    }
    queue_.push_back(Event(type, event.revision, *event.view));
    return absl::OkStatus();
  }

  // Asks, on the pool, what the first held event needs (the answer lands in
  // the reviewer's cache), then admits the held events in order.
  void ReviewHeldLocked() {
    ++outstanding_;
    service_.pool_.Post([this, view = held_.front().view] {
      internal::ListAccess probe(caller_, service_.options_.access_reviewers, service_.index_);
      absl::StatusOr<std::optional<bool>> asked = probe.MaySee(*view, true);
      std::unique_lock lock(mu_);
      absl::Cleanup release = [&] { ReleaseLocked(lock); };
      if (done_ || finished_ || pending_finish_) return;
      if (!asked.ok()) return FinishLocked(ToGrpcStatus(asked.status()));
      std::deque<WorkloadEvent> held = std::move(held_);
      held_.clear();
      size_t queued = queue_.size();
      while (!held.empty()) {
        if (absl::Status s = AdmitLocked(held.front(), false); !s.ok()) {
          return FinishLocked(ToGrpcStatus(s));
        }
        held.pop_front();
        if (!held_.empty()) break;  // waits for another review
      }
      for (WorkloadEvent& rest : held) held_.push_back(std::move(rest));
      live_queued_ += queue_.size() - queued;
      WriteNextLocked();
    });
  }

  // Ends a task of the pool or the alarm that holds this reactor; the last
  // one after OnDone deletes it.
  void ReleaseLocked(std::unique_lock<std::mutex>& lock) {
    if (--outstanding_ > 0 || !done_) return;
    lock.unlock();
    delete this;
  }

  // Every watch_access_recheck, Recheck: what the caller may see now, for
  // workloads that do not change (those that do are checked as they come).
  void ArmRecheckLocked() {
    if (access_->unrestricted() || done_ || finished_ || pending_finish_) return;
    ++outstanding_;
    recheck_armed_ = true;
    alarm_.Set(absl::ToChronoTime(absl::Now() + service_.options_.watch_access_recheck),
               [this](bool fired) {
                 std::unique_lock lock(mu_);
                 recheck_armed_ = false;
                 if (fired && !done_ && !finished_ && !pending_finish_) {
                   ++outstanding_;
                   service_.pool_.Post([this] { Recheck(); });
                 }
                 ReleaseLocked(lock);
               });
  }

  // On the pool. Workloads shown that the caller may no longer see go as
  // DELETED; workloads of the filter it may now see come as ADDED.
  void Recheck() {
    std::vector<std::shared_ptr<const WorkloadView>> candidates;
    {
      std::unique_lock lock(mu_);
      for (const auto& [id, view] : shown_) candidates.push_back(view);
      // From here, workloads that change are the live events' to judge.
      changed_during_recheck_.clear();
      rechecking_ = true;
    }
    for (auto& view : service_.index_.List()) {
      if (filter_.Matches(service_.index_, service_.kind_names_, *view)) {
        candidates.push_back(std::move(view));
      }
    }
    // The answers land in the reviewers' caches, outside this stream's lock.
    internal::ListAccess probe(caller_, service_.options_.access_reviewers, service_.index_);
    absl::Status asked = absl::OkStatus();
    for (const auto& view : candidates) {
      if (auto may = probe.MaySee(*view, true); !may.ok()) {
        asked = may.status();
        break;
      }
    }
    std::unique_lock lock(mu_);
    absl::Cleanup release = [&] { ReleaseLocked(lock); };
    rechecking_ = false;
    if (done_ || finished_ || pending_finish_) return;
    if (!asked.ok()) return FinishLocked(ToGrpcStatus(asked));
    access_->Forget();
    checked_access_ = absl::Now();
    size_t queued = queue_.size();
    for (const auto& view : candidates) {
      if (changed_during_recheck_.contains(view->id)) continue;
      absl::StatusOr<std::optional<bool>> may = access_->MaySee(*view, false);
      if (!may.ok()) return FinishLocked(ToGrpcStatus(may.status()));
      if (!may->has_value()) continue;  // expired meanwhile: the next recheck
      auto shown = shown_.find(view->id);
      if (**may && shown == shown_.end()) {
        queue_.push_back(Event(v1::WorkloadEvent::ADDED, last_revision_, *view));
        shown_[view->id] = view;
      } else if (!**may && shown != shown_.end()) {
        queue_.push_back(Event(v1::WorkloadEvent::DELETED, last_revision_, *shown->second));
        shown_.erase(shown);
      }
    }
    changed_during_recheck_.clear();
    if (synced_) live_queued_ += queue_.size() - queued;
    WriteNextLocked();
    ArmRecheckLocked();
  }

  v1::WorkloadEvent Event(v1::WorkloadEvent::Type type, uint64_t revision,
                          const WorkloadView& view) const {
    v1::WorkloadEvent event;
    event.set_type(type);
    event.set_revision(revision);
    if (view.resolved) {
      CopyTrimmed(*view.resolved, include_pods_, 0, event.mutable_workload());
    } else {
      *event.mutable_workload()->mutable_ref() = view.summary.ref();
      event.mutable_workload()->add_warnings(view.summary.error());
    }
    return event;
  }

  // On the resolver thread.
  void OnEvent(const WorkloadEvent& event) {
    if (!filter_.Matches(service_.index_, service_.kind_names_, *event.view)) return;
    std::unique_lock lock(mu_);
    if (finished_) return;
    last_revision_ = event.revision;
    if (rechecking_) changed_during_recheck_.insert(event.view->id);
    if (live_queued_ + static_cast<int>(held_.size()) >= service_.options_.watch_queue_size) {
      queue_.clear();
      FinishLocked(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          synced_ ? absl::StrCat("the client fell behind; resume with resume_revision ",
                                 ResumeRevisionLocked())
                  : "the client fell behind during the snapshot; watch again"));
      return;
    }
    size_t queued = queue_.size();
    if (absl::Status s = AdmitLocked(event, false); !s.ok()) {
      return FinishLocked(ToGrpcStatus(s));
    }
    live_queued_ += queue_.size() - queued;
    WriteNextLocked();
  }

  void WriteNextLocked() {
    if (writing_) return;
    if (queue_.empty()) {
      if (pending_finish_) {
        finished_ = true;
        Finish(*pending_finish_);
        pending_finish_.reset();
      }
      return;
    }
    if (pending_finish_ && !pending_finish_->ok()) queue_.clear();
    if (queue_.empty()) return WriteNextLocked();
    in_flight_ = std::move(queue_.front());
    queue_.pop_front();
    in_flight_bytes_.Clear();
    if (absl::Status s = SerializeMessage(in_flight_, &in_flight_bytes_); !s.ok()) {
      finished_ = true;
      Finish(ToGrpcStatus(s));
      return;
    }
    writing_ = true;
    StartWrite(&in_flight_bytes_);
  }

  // Where a client cut off after the snapshot resumes: the last event it
  // gets, which is the write in flight (it still completes) if any.
  uint64_t ResumeRevisionLocked() const { return writing_ ? in_flight_.revision() : delivered_; }

  // Ends the stream with `status` once no write is in flight; the first
  // status wins. Called again (a cancel, then the write failing) it still
  // finishes the stream if the write it waited for is done.
  void FinishLocked(grpc::Status status) {
    if (finished_) return;
    if (!pending_finish_) {
      if (!status.ok() && status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED && synced_) {
        context_->AddTrailingMetadata("wm-resume-revision", std::to_string(ResumeRevisionLocked()));
      }
      queue_.clear();
      pending_finish_ = std::move(status);
    }
    WriteNextLocked();
  }

  WorkloadMapService& service_;
  grpc::CallbackServerContext* context_;
  // Who authenticated; null when calls are not authenticated.
  access::SharedIdentity caller_;
  // Whose stream slot (Options::limits) this stream holds, if any.
  std::optional<std::string> stream_holder_;
  bool include_pods_ = false;
  ListFilter filter_;
  int subscription_ = 0;

  std::mutex mu_;
  std::deque<v1::WorkloadEvent> queue_;
  v1::WorkloadEvent in_flight_;
  grpc::ByteBuffer in_flight_bytes_;  // in_flight_ serialized
  int live_queued_ = 0;
  bool writing_ = false;
  bool synced_ = false;
  uint64_t delivered_ = 0;
  bool finished_ = false;
  std::optional<grpc::Status> pending_finish_;
  // Begin has not run yet (the caller's token is being reviewed), and a
  // cancel came meanwhile.
  bool starting_ = false;
  bool cancelled_while_starting_ = false;

  // What the caller may see (set by Begin), when its decisions were last
  // asked again, and, when authorization applies, the workloads the stream
  // shows: a namespace the caller loses is told as their deletion.
  std::optional<internal::ListAccess> access_;
  absl::Time checked_access_;
  std::map<index::WorkloadKey, std::shared_ptr<const WorkloadView>> shown_;
  // Live events waiting for a review on the pool, in order.
  std::deque<WorkloadEvent> held_;
  // The revision of the last event the index sent: what events the stream
  // makes itself (a namespace gained or lost) carry.
  uint64_t last_revision_ = 0;
  grpc::Alarm alarm_;
  bool recheck_armed_ = false;
  bool rechecking_ = false;
  std::set<index::WorkloadKey> changed_during_recheck_;
  // Pool tasks and alarms that hold this reactor; OnDone ran.
  int outstanding_ = 0;
  bool done_ = false;
};

grpc::ServerWriteReactor<grpc::ByteBuffer>* WorkloadMapService::WatchWorkloads(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return new WatchReactor(*this, context, *request);
}

}  // namespace wm::rpc
