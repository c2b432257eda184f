#include "server/web/http_api.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "grpcpp/client_context.h"
#include "server/web/event_stream.h"
#include "server/web/http_status.h"
#include "server/web/proto_json.h"
#include "server/web/query.h"
#include "server/web/workload_path.h"

namespace wm::web {
namespace {

namespace v1 = workloadmap::v1;
using Request = observability::HttpServer::Request;
using Response = observability::HttpServer::Response;

constexpr absl::string_view kRoot = "/api/v1/";

// A context carrying the caller's credentials to the service.
void Prepare(grpc::ClientContext& context, const Request& request, absl::Duration deadline) {
  if (!request.authorization.empty()) context.AddMetadata("authorization", request.authorization);
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
}

Response JsonResponse(const google::protobuf::Message& message) {
  Response response;
  response.content_type = "application/json";
  response.body = ToJson(message) + "\n";
  // Answers depend on who asks: never kept by a shared cache.
  response.headers = {"Cache-Control: no-store"};
  return response;
}

Response InvalidArgument(const absl::Status& status) {
  return ErrorResponse(grpc::StatusCode::INVALID_ARGUMENT, status.message());
}

// Calls `method` with `call` for `request` and answers with its response.
template <typename CallRequest, typename CallResponse, typename Method>
Response Unary(v1::WorkloadMap::Stub& stub, Method method, const Request& request,
               const CallRequest& call, absl::Duration deadline) {
  grpc::ClientContext context;
  Prepare(context, request, deadline);
  CallResponse answer;
  grpc::Status status = (stub.*method)(&context, call, &answer);
  if (!status.ok()) return ErrorResponse(status.error_code(), status.error_message());
  return JsonResponse(answer);
}

}  // namespace

HttpApi::HttpApi(std::shared_ptr<grpc::Channel> channel, Options options)
    : options_(options), channel_(std::move(channel)), stub_(v1::WorkloadMap::NewStub(channel_)) {}

HttpApi::~HttpApi() { streams_.CancelAllAndWait(absl::Seconds(10)); }

void HttpApi::Register(observability::HttpServer& server) {
  server.Handle("/api/v1/workloads", [this](const Request& r) { return ListWorkloads(r); });
  server.Handle("/api/v1/definitions", [this](const Request& r) { return ListDefinitions(r); });
  server.Handle("/api/v1/events", [this](const Request& r) { return Events(r); });
  // Workload URLs, and a JSON 404 for any other path under the API.
  server.HandlePrefix(std::string(kRoot), [this](const Request& r) { return Workload(r); });
}

Response HttpApi::ListWorkloads(const Request& request) {
  auto query = Query::Parse(request.query, {"cluster", "namespace", "kind", "status",
                                            "labelSelector", "pageSize", "pageToken"});
  if (!query.ok()) return InvalidArgument(query.status());
  auto page_size = query->GetInt("pageSize", 1 << 30);
  if (!page_size.ok()) return InvalidArgument(page_size.status());
  v1::ListWorkloadsRequest call;
  call.set_cluster(query->Get("cluster"));
  call.set_namespace_(query->Get("namespace"));
  for (std::string& kind : query->GetAll("kind")) call.add_kinds(std::move(kind));
  for (std::string& status : query->GetAll("status")) call.add_statuses(std::move(status));
  call.set_label_selector(query->Get("labelSelector"));
  call.set_page_size(static_cast<int32_t>(*page_size));
  call.set_page_token(query->Get("pageToken"));
  return Unary<v1::ListWorkloadsRequest, v1::ListWorkloadsResponse>(
      *stub_, &v1::WorkloadMap::Stub::ListWorkloads, request, call, options_.call_deadline);
}

Response HttpApi::Workload(const Request& request) {
  auto path = ParseWorkloadPath(absl::string_view(request.path).substr(kRoot.size()));
  if (!path.ok()) {
    return ErrorResponse(static_cast<grpc::StatusCode>(path.status().code()),
                         path.status().message());
  }
  if (path->gang) {
    auto query = Query::Parse(request.query, {"cluster", "group"});
    if (!query.ok()) return InvalidArgument(query.status());
    v1::GetGangInstructionsRequest call;
    *call.mutable_workload() = path->ref;
    call.mutable_workload()->set_cluster(query->Get("cluster"));
    call.mutable_workload()->set_group(query->Get("group"));
    return Unary<v1::GetGangInstructionsRequest, v1::GetGangInstructionsResponse>(
        *stub_, &v1::WorkloadMap::Stub::GetGangInstructions, request, call, options_.call_deadline);
  }
  auto query =
      Query::Parse(request.query, {"cluster", "group", "includePods", "podLimit", "topOwner"});
  if (!query.ok()) return InvalidArgument(query.status());
  auto include_pods = query->GetBool("includePods");
  if (!include_pods.ok()) return InvalidArgument(include_pods.status());
  auto top_owner = query->GetBool("topOwner");
  if (!top_owner.ok()) return InvalidArgument(top_owner.status());
  auto pod_limit = query->GetInt("podLimit", 1 << 30);
  if (!pod_limit.ok()) return InvalidArgument(pod_limit.status());
  v1::ResolveWorkloadRequest call;
  *call.mutable_ref() = path->ref;
  call.mutable_ref()->set_cluster(query->Get("cluster"));
  call.mutable_ref()->set_group(query->Get("group"));
  call.set_include_pods(*include_pods);
  call.set_pod_limit(static_cast<int32_t>(*pod_limit));
  call.set_top_owner(*top_owner);
  return Unary<v1::ResolveWorkloadRequest, v1::ResolveWorkloadResponse>(
      *stub_, &v1::WorkloadMap::Stub::ResolveWorkload, request, call, options_.call_deadline);
}

Response HttpApi::ListDefinitions(const Request& request) {
  auto query = Query::Parse(request.query, {});
  if (!query.ok()) return InvalidArgument(query.status());
  return Unary<v1::ListDefinitionsRequest, v1::ListDefinitionsResponse>(
      *stub_, &v1::WorkloadMap::Stub::ListDefinitions, request, v1::ListDefinitionsRequest(),
      options_.call_deadline);
}

Response HttpApi::Events(const Request& request) {
  auto query = Query::Parse(request.query, {"cluster", "namespace", "kind", "labelSelector",
                                            "includePods", "resumeRevision"});
  if (!query.ok()) return InvalidArgument(query.status());
  auto include_pods = query->GetBool("includePods");
  if (!include_pods.ok()) return InvalidArgument(include_pods.status());
  v1::WatchWorkloadsRequest call;
  call.set_cluster(query->Get("cluster"));
  call.set_namespace_(query->Get("namespace"));
  for (std::string& kind : query->GetAll("kind")) call.add_kinds(std::move(kind));
  call.set_label_selector(query->Get("labelSelector"));
  call.set_include_pods(*include_pods);
  // A reconnecting EventSource says where it was; that wins over the URL's
  // revision, which is where the page first started.
  std::string resume =
      request.last_event_id.empty() ? query->Get("resumeRevision") : request.last_event_id;
  if (!resume.empty()) {
    uint64_t revision = 0;
    if (!absl::SimpleAtoi(resume, &revision)) {
      return ErrorResponse(grpc::StatusCode::INVALID_ARGUMENT,
                           "Last-Event-ID or resumeRevision: want a revision (an unsigned "
                           "integer)");
    }
    call.set_resume_revision(revision);
  }
  auto context = std::make_shared<grpc::ClientContext>();
  if (!request.authorization.empty()) {
    context->AddMetadata("authorization", request.authorization);
  }
  return EventStream::Start(*stub_, std::move(context), call, options_.first_event_wait, streams_);
}

}  // namespace wm::web
