#ifndef WM_SERVER_WEB_HTTP_API_H_
#define WM_SERVER_WEB_HTTP_API_H_

#include <memory>

#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "server/observability/http_server.h"
#include "server/web/event_stream.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::web {

// The HTTP/JSON API (docs/http-api.md): each request becomes a call to the
// workloadmap.v1.WorkloadMap service over `channel` (the daemon's in-process
// channel) with the request's Authorization header as the call's
// `authorization` metadata, so the service authenticates, authorizes,
// limits and audits it exactly as a gRPC call. Answers are the responses in
// protobuf's JSON mapping (ToJson); failures ErrorResponse with the HTTP
// status of their gRPC code.
//
//   GET /api/v1/workloads                        ListWorkloads
//   GET /api/v1/namespaces/{ns}/workloads/{kind}/{name}    ResolveWorkload
//   GET .../{name}/gang                          GetGangInstructions
//   GET /api/v1/workloads/{kind}/{name}[/gang]   (cluster-scoped)
//   GET /api/v1/definitions                      ListDefinitions
//   GET /api/v1/events                           WatchWorkloads as server-sent events
//
// Unary calls block a handler thread of the HTTP server for their length
// (bounded by `call_deadline`); the event stream does not (EventStream).
class HttpApi {
 public:
  struct Options {
    // Of each unary call; the service's own default deadline may be shorter.
    absl::Duration call_deadline = absl::Seconds(30);
    // How long an event stream waits for its call's first event or failure
    // before answering 200: a refused watch gets its own HTTP status (401,
    // 403, ...), not an error event inside a 200.
    absl::Duration first_event_wait = absl::Seconds(10);
  };

  // `channel` must outlive every call, streams included (the daemon stops
  // the HTTP server before its gRPC server).
  HttpApi(std::shared_ptr<grpc::Channel> channel, Options options);
  // Cancels the event streams' calls and waits for their ends (at most
  // 10 s). REQUIRES: the HTTP server serving this API has stopped.
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Serves the paths above on `server`.
  void Register(observability::HttpServer& server);

 private:
  using Request = observability::HttpServer::Request;
  using Response = observability::HttpServer::Response;

  Response ListWorkloads(const Request& request);
  Response Workload(const Request& request);
  Response ListDefinitions(const Request& request);
  Response Events(const Request& request);

  const Options options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<workloadmap::v1::WorkloadMap::Stub> stub_;
  ActiveEventStreams streams_;
};

}  // namespace wm::web

#endif  // WM_SERVER_WEB_HTTP_API_H_
