#include "server/web/event_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/web/http_status.h"
#include "server/web/proto_json.h"

namespace wm::web {
namespace {

namespace v1 = workloadmap::v1;

std::string ErrorEvent(const grpc::Status& status) {
  return absl::StrCat(
      "event: error\ndata: ", ErrorJson(status.error_code(), status.error_message()), "\n\n");
}

}  // namespace

// Abandons the call when the last copy of a response that was never
// streamed goes (a HEAD, a 503 for too many streams, a client gone).
class EventStreamGuard {
 public:
  explicit EventStreamGuard(std::shared_ptr<EventStream> call) : call_(std::move(call)) {}
  ~EventStreamGuard() {
    if (!opened_) call_->Abandon();
  }
  EventStream& call() { return *call_; }
  void Opened() { opened_ = true; }

 private:
  std::shared_ptr<EventStream> call_;
  bool opened_ = false;  // set by the one handler thread that opens the stream
};

uint64_t ActiveEventStreams::Add(std::shared_ptr<grpc::ClientContext> context) {
  std::lock_guard<std::mutex> lock(mu_);
  contexts_[next_] = std::move(context);
  return next_++;
}

void ActiveEventStreams::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  contexts_.erase(id);
  ended_.notify_all();
}

void ActiveEventStreams::CancelAllAndWait(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  for (auto& [id, context] : contexts_) context->TryCancel();
  ended_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [this] { return contexts_.empty(); });
}

std::string FormatEvent(const v1::WorkloadEvent& event) {
  return absl::StrCat("id: ", event.revision(),
                      "\nevent: ", v1::WorkloadEvent::Type_Name(event.type()),
                      "\ndata: ", ToJson(event), "\n\n");
}

EventStream::EventStream(std::shared_ptr<grpc::ClientContext> context)
    : context_(std::move(context)) {}

observability::HttpServer::Response EventStream::Start(v1::WorkloadMap::Stub& stub,
                                                       std::shared_ptr<grpc::ClientContext> context,
                                                       const v1::WatchWorkloadsRequest& request,
                                                       absl::Duration first_event_wait,
                                                       ActiveEventStreams& active) {
  std::shared_ptr<EventStream> call(new EventStream(std::move(context)));
  call->request_ = request;
  call->self_ = call;
  call->active_ = &active;
  call->active_id_ = active.Add(call->context_);
  stub.async()->WatchWorkloads(call->context_.get(), &call->request_, call.get());
  call->AddHold();
  call->StartRead(&call->event_);
  call->StartCall();
  bool ended = false;
  {
    std::unique_lock<std::mutex> lock(call->mu_);
    call->changed_.wait_for(lock, absl::ToChronoMilliseconds(first_event_wait),
                            [&] { return call->has_held_ || call->ended_; });
    ended = !call->has_held_ && call->ended_;
  }
  if (ended) {
    // Refused or over before its first event: its status is the answer.
    call->ReleaseHold();
    std::unique_lock<std::mutex> lock(call->mu_);
    call->changed_.wait(lock, [&] { return call->done_; });
    if (!call->status_.ok()) {
      return ErrorResponse(call->status_.error_code(), call->status_.error_message());
    }
    return observability::HttpServer::Response{200, "text/event-stream; charset=utf-8", ""};
  }
  observability::HttpServer::Response response;
  response.content_type = "text/event-stream; charset=utf-8";
  // Not cached, and not buffered by proxies that would hold events back.
  response.headers = {"Cache-Control: no-store", "X-Accel-Buffering: no"};
  response.keepalive = ": keepalive\n\n";
  auto guard = std::make_shared<EventStreamGuard>(call);
  response.stream = [guard](std::shared_ptr<observability::ResponseStream> stream) {
    guard->Opened();
    guard->call().Attach(std::move(stream));
  };
  return response;
}

void EventStream::ReleaseHold() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (hold_released_) return;
    hold_released_ = true;
  }
  RemoveHold();
}

void EventStream::Abandon() {
  context_->TryCancel();
  ReleaseHold();
}

void EventStream::Attach(std::shared_ptr<observability::ResponseStream> stream) {
  // A client that leaves cancels the call (quick and non-blocking, as
  // SetOnClose requires).
  stream->SetOnClose([context = context_] { context->TryCancel(); });
  std::string held;
  bool has_held = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream_ = stream;
    has_held = has_held_;
    held = std::move(held_);
    has_held_ = false;
  }
  if (has_held) {
    // The hold keeps OnDone away until this read is started.
    if (stream->Write(held)) {
      StartRead(&event_);
    } else {
      context_->TryCancel();
    }
  }
  ReleaseHold();
}

void EventStream::OnReadDone(bool ok) {
  std::shared_ptr<observability::ResponseStream> stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ok) {  // the call is ending; OnDone follows (after the hold)
      ended_ = true;
      changed_.notify_all();
      return;
    }
    if (stream_ == nullptr) {
      held_ = FormatEvent(event_);
      has_held_ = true;
      changed_.notify_all();
      return;
    }
    stream = stream_;
  }
  if (!stream->Write(FormatEvent(event_))) {
    context_->TryCancel();
    return;
  }
  StartRead(&event_);
}

void EventStream::OnDone(const grpc::Status& status) {
  std::shared_ptr<observability::ResponseStream> stream;
  std::shared_ptr<EventStream> self;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    status_ = status;
    stream = stream_;
    self = std::move(self_);
    changed_.notify_all();
  }
  if (stream != nullptr) {
    if (!status.ok()) stream->Write(ErrorEvent(status));
    stream->Finish();
  }
  // The last touch of the API: it may go once every call has ended.
  active_->Remove(active_id_);
  // `self` goes here: the object lives on only while a response holds it.
}

}  // namespace wm::web
