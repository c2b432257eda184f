#ifndef WM_SERVER_WEB_EVENT_STREAM_H_
#define WM_SERVER_WEB_EVENT_STREAM_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"
#include "server/observability/http_server.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::web {

class EventStreamGuard;

// The event streams of one HttpApi whose calls have not ended: the API (its
// channel and stub) must outlive each, so its destructor cancels them all
// and waits for their ends. Thread-safe.
class ActiveEventStreams {
 public:
  ActiveEventStreams() = default;
  ActiveEventStreams(const ActiveEventStreams&) = delete;
  ActiveEventStreams& operator=(const ActiveEventStreams&) = delete;

  uint64_t Add(std::shared_ptr<grpc::ClientContext> context);
  // The call's end (OnDone); after it the stream touches nothing of the API.
  void Remove(uint64_t id);
  // Cancels every call and waits (at most `timeout`) until all have ended.
  void CancelAllAndWait(absl::Duration timeout);

 private:
  std::mutex mu_;
  std::condition_variable ended_;
  uint64_t next_ = 0;
  std::map<uint64_t, std::shared_ptr<grpc::ClientContext>> contexts_;
};

// One WatchWorkloads call relayed to an HTTP client as server-sent events:
//
//   id: <revision>
//   event: ADDED | MODIFIED | DELETED | SYNCED
//   data: <the WorkloadEvent in protobuf's JSON mapping, one line>
//
// and, when the call fails after the stream began, `event: error` with the
// ErrorJson of its status, then the end of the stream. A call refused at
// once (UNAUTHENTICATED, PERMISSION_DENIED, a bad request, a revision too
// old) is answered with its own HTTP status instead, because Start waits for
// the first event or the call's end before answering.
//
// Flow: the next event is read only once the previous one is queued on the
// HTTP connection (ResponseStream::Write), so a slow client slows its call,
// which the service ends (RESOURCE_EXHAUSTED) when its own queue fills; a
// client that leaves, or falls more than the server's stream bound behind,
// cancels the call. The object owns itself from Start to the call's end.
class EventStream final : public grpc::ClientReadReactor<workloadmap::v1::WorkloadEvent> {
 public:
  // Starts the call with `context` (carrying the caller's credentials) and
  // returns the HTTP answer: an error, or a streaming response. If the
  // response's stream is never opened (a HEAD, too many streams), the call
  // is cancelled.
  // The call counts among `active` until it ends.
  static observability::HttpServer::Response Start(
      workloadmap::v1::WorkloadMap::Stub& stub, std::shared_ptr<grpc::ClientContext> context,
      const workloadmap::v1::WatchWorkloadsRequest& request, absl::Duration first_event_wait,
      ActiveEventStreams& active);

  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  friend class EventStreamGuard;
  explicit EventStream(std::shared_ptr<grpc::ClientContext> context);
  // Hands the HTTP connection's stream to the call.
  void Attach(std::shared_ptr<observability::ResponseStream> stream);
  // The response was never streamed: cancels the call.
  void Abandon();
  // Removes the hold taken at Start (once), after which OnDone may run.
  void ReleaseHold();

  const std::shared_ptr<grpc::ClientContext> context_;
  ActiveEventStreams* active_ = nullptr;
  uint64_t active_id_ = 0;
  workloadmap::v1::WatchWorkloadsRequest request_;
  workloadmap::v1::WorkloadEvent event_;
  // Itself, until OnDone.
  std::shared_ptr<EventStream> self_;

  std::mutex mu_;
  std::condition_variable changed_;
  // An event read before the connection's stream was attached; the next
  // read starts at Attach.
  std::string held_;
  bool has_held_ = false;
  // A read failed: the call is ending.
  bool ended_ = false;
  // From Start to Attach or Abandon the call holds itself open (AddHold),
  // so that OnDone cannot run between a held event and the next read.
  bool hold_released_ = false;
  bool done_ = false;
  grpc::Status status_;
  std::shared_ptr<observability::ResponseStream> stream_;
};

// `event` as one server-sent event (its trailing blank line included).
std::string FormatEvent(const workloadmap::v1::WorkloadEvent& event);

}  // namespace wm::web

#endif  // WM_SERVER_WEB_EVENT_STREAM_H_
