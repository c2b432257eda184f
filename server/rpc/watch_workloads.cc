// WatchWorkloads: the index's events, filtered, written by one reactor per call.
#include <deque>
#include <memory>
#include <mutex>

#include "grpcpp/support/byte_buffer.h"
#include "server/rpc/caller_credentials.h"
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
    absl::StatusOr<access::CallerCredentials> credentials = ReadCallerCredentials(*context);
    if (!credentials.ok()) {
      FinishNow(credentials.status());
      return;
    }
    if (std::optional<absl::StatusOr<access::Identity>> known =
            authenticator->AuthenticateWithoutBlocking(*credentials)) {
      if (!known->ok()) {
        FinishNow(known->status());
        return;
      }
      Begin(request_bytes);
      return;
    }
    // The token needs a review: on the pool. Until Begin is done, a cancel
    // only takes note (see OnCancel), so that the stream is not finished,
    // and this reactor deleted, while the pool still holds it.
    starting_ = true;
    service.pool_.Post(
        [this, authenticator, credentials = *std::move(credentials), request = request_bytes] {
          absl::StatusOr<access::Identity> identity = authenticator->Authenticate(credentials);
          if (!identity.ok()) return FinishNow(identity.status());
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
    delete this;
  }

 private:
  // Parses the request, subscribes to the index and writes the snapshot.
  void Begin(const grpc::ByteBuffer& request_bytes) {
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
    for (const auto& view : subscription->views) {
      if (filter_.Matches(service_.index_, service_.kind_names_, *view)) {
        queue_.push_back(Event(v1::WorkloadEvent::ADDED, view->revision, *view));
      }
    }
    for (const WorkloadEvent& event : subscription->backlog) {
      if (filter_.Matches(service_.index_, service_.kind_names_, *event.view)) {
        queue_.push_back(Event(event.type, event.revision, *event.view));
      }
    }
    v1::WorkloadEvent synced;
    synced.set_type(v1::WorkloadEvent::SYNCED);
    synced.set_revision(subscription->revision);
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
    starting_ = false;
    finished_ = true;
    Finish(ToGrpcStatus(status));
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
    if (live_queued_ >= service_.options_.watch_queue_size) {
      queue_.clear();
      FinishLocked(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          synced_ ? absl::StrCat("the client fell behind; resume with resume_revision ",
                                 ResumeRevisionLocked())
                  : "the client fell behind during the snapshot; watch again"));
      return;
    }
    queue_.push_back(Event(event.type, event.revision, *event.view));
    ++live_queued_;
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
};

grpc::ServerWriteReactor<grpc::ByteBuffer>* WorkloadMapService::WatchWorkloads(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return new WatchReactor(*this, context, *request);
}

}  // namespace wm::rpc
