// The service's plumbing: the work pool, how a call finishes, and the raw
// entry points that parse a request and hand it to its method (each method
// in a file of its own).
#include "server/rpc/service.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/common/user_text.h"
#include "server/rpc/caller_credentials.h"
#include "server/rpc/internal/messages.h"
#include "server/rpc/request_parsing.h"

namespace wm::rpc {

using internal::SerializeMessage;
using ::wm::index::WorkloadIndex;
using ::wm::index::WorkloadView;

grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

WorkloadMapService::WorkloadMapService(WorkloadIndex& index, expressions::Engine& engine,
                                       Options options, Observer observer)
    : index_(index),
      engine_(engine),
      options_(options),
      observer_(std::move(observer)),
      pool_(options.pool_threads, options.pool_nice) {}

void WorkloadMapService::Finish(const UnaryCall& call, const char* method, absl::Time start,
                                absl::Status status) {
  if (status.ok() && call.serialize_response) status = call.serialize_response();
  grpc::Status grpc_status = ToGrpcStatus(status);
  if (observer_) observer_(method, grpc_status.error_code(), absl::Now() - start);
  call.reactor->Finish(grpc_status);
}

grpc::ServerUnaryReactor* WorkloadMapService::Authenticated(
    UnaryCall call, const char* method,
    std::function<grpc::ServerUnaryReactor*(const UnaryCall&)> serve) {
  const access::Authenticator* authenticator = options_.authenticator;
  if (authenticator == nullptr) return serve(call);
  absl::StatusOr<access::CallerCredentials> credentials = ReadCallerCredentials(*call.context);
  if (!credentials.ok()) return RunHere(call, method, [&] { return credentials.status(); });
  if (std::optional<absl::StatusOr<access::Identity>> known =
          authenticator->AuthenticateWithoutBlocking(*credentials)) {
    if (!known->ok()) return RunHere(call, method, [&] { return known->status(); });
    call.caller = std::make_shared<const access::Identity>(**std::move(known));
    return serve(call);
  }
  absl::Time start = absl::Now();
  pool_.Post([this, call, method, start, authenticator, credentials = *std::move(credentials),
              serve = std::move(serve)]() mutable {
    absl::StatusOr<access::Identity> identity = authenticator->Authenticate(credentials);
    if (!identity.ok()) return Finish(call, method, start, identity.status());
    call.caller = std::make_shared<const access::Identity>(*std::move(identity));
    serve(call);
  });
  return call.reactor;
}

namespace {

absl::Status Denied(const access::Identity& who, const access::ResourceAttributes& what,
                    const access::Decision& decision) {
  std::string message =
      absl::StrCat("user ", QuoteUserText(who.user), " may not ", what.Describe());
  if (!decision.reason.empty()) absl::StrAppend(&message, ": ", QuoteUserText(decision.reason));
  return absl::PermissionDeniedError(message);
}

}  // namespace

grpc::ServerUnaryReactor* WorkloadMapService::Authorized(
    const UnaryCall& call, const char* method, const std::string& cluster,
    access::ResourceAttributes what, std::function<grpc::ServerUnaryReactor*()> serve) {
  auto it = options_.access_reviewers.find(cluster);
  if (call.caller == nullptr || it == options_.access_reviewers.end() || it->second == nullptr) {
    return serve();
  }
  access::AccessReviewer* reviewer = it->second;
  if (what.resource.empty()) {
    return RunHere(call, method, [&] {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot authorize ", what.verb, " in cluster ", cluster,
                       ": the cluster does not say which resource serves the kind"));
    });
  }
  if (std::optional<access::Decision> known = reviewer->Cached(*call.caller, what)) {
    if (!known->allowed)
      return RunHere(call, method, [&] { return Denied(*call.caller, what, *known); });
    return serve();
  }
  absl::Time start = absl::Now();
  pool_.Post(
      [this, call, method, start, reviewer, what = std::move(what), serve = std::move(serve)] {
        absl::StatusOr<access::Decision> decision = reviewer->Review(*call.caller, what);
        if (!decision.ok()) return Finish(call, method, start, decision.status());
        if (!decision->allowed)
          return Finish(call, method, start, Denied(*call.caller, what, *decision));
        serve();
      });
  return call.reactor;
}

grpc::ServerUnaryReactor* WorkloadMapService::Offload(const UnaryCall& call, const char* method,
                                                      std::function<absl::Status()> work) {
  absl::Time start = absl::Now();
  pool_.Post([this, call, method, start, work = std::move(work)] {
    if (call.context->IsCancelled()) {
      Finish(call, method, start, absl::CancelledError("the call was cancelled"));
    } else if (std::chrono::system_clock::now() > call.context->deadline() ||
               absl::Now() - start > options_.default_deadline) {
      Finish(call, method, start,
             absl::DeadlineExceededError("the deadline passed before the work started"));
    } else {
      Finish(call, method, start, work());
    }
  });
  return call.reactor;
}

grpc::ServerUnaryReactor* WorkloadMapService::RunHere(const UnaryCall& call, const char* method,
                                                      absl::FunctionRef<absl::Status()> work) {
  absl::Time start = absl::Now();
  Finish(call, method, start, work());
  return call.reactor;
}

grpc::ServerUnaryReactor* WorkloadMapService::AnswerWithView(
    const UnaryCall& call, const char* method, ViewOrError published,
    std::function<ViewOrError()> resolve,
    std::function<absl::Status(const WorkloadView&)> respond) {
  if (!published.ok() || *published) {
    return RunHere(call, method, [&]() -> absl::Status {
      if (!published.ok()) return published.status();
      return respond(**published);
    });
  }
  return Offload(call, method, [resolve, respond]() -> absl::Status {
    ViewOrError view = resolve();
    if (!view.ok()) return view.status();
    return respond(**view);
  });
}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* WorkloadMapService::ServeParsed(
    grpc::CallbackServerContext* context, const char* method, const grpc::ByteBuffer* request_bytes,
    grpc::ByteBuffer* response_bytes,
    grpc::ServerUnaryReactor* (WorkloadMapService::*serve)(const UnaryCall&, const Request*,
                                                           Response*)) {
  auto messages = std::make_shared<std::pair<Request, Response>>();
  UnaryCall call{
      context, context->DefaultReactor(),
      [messages, response_bytes] { return SerializeMessage(messages->second, response_bytes); },
      nullptr};
  return Authenticated(std::move(call), method,
                       [this, method, messages, request_bytes, serve](const UnaryCall& call) {
                         if (absl::Status parsed = ParseRequest(*request_bytes, &messages->first);
                             !parsed.ok()) {
                           return RunHere(call, method, [&] { return parsed; });
                         }
                         return (this->*serve)(call, &messages->first, &messages->second);
                       });
}

grpc::ServerUnaryReactor* WorkloadMapService::ListWorkloads(grpc::CallbackServerContext* context,
                                                            const grpc::ByteBuffer* request,
                                                            grpc::ByteBuffer* response) {
  return ServeParsed(context, "ListWorkloads", request, response,
                     &WorkloadMapService::ServeListWorkloads);
}

grpc::ServerUnaryReactor* WorkloadMapService::MutatePodSpecs(grpc::CallbackServerContext* context,
                                                             const grpc::ByteBuffer* request,
                                                             grpc::ByteBuffer* response) {
  return ServeParsed(context, "MutatePodSpecs", request, response,
                     &WorkloadMapService::ServeMutatePodSpecs);
}

grpc::ServerUnaryReactor* WorkloadMapService::GetGangInstructions(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return ServeParsed(context, "GetGangInstructions", request, response,
                     &WorkloadMapService::ServeGetGangInstructions);
}

grpc::ServerUnaryReactor* WorkloadMapService::ListDefinitions(grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* request,
                                                              grpc::ByteBuffer* response) {
  return ServeParsed(context, "ListDefinitions", request, response,
                     &WorkloadMapService::ServeListDefinitions);
}

grpc::ServerUnaryReactor* WorkloadMapService::ValidateDefinition(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return ServeParsed(context, "ValidateDefinition", request, response,
                     &WorkloadMapService::ServeValidateDefinition);
}

}  // namespace wm::rpc
