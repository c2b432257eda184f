// The service's plumbing: the work pool, how a call finishes, and the raw
// entry points that parse a request and hand it to its method (each method
// in a file of its own).
#include "server/rpc/service.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/expressions/yielding_engine.h"
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

std::string WorkloadMapService::LimitKey(const grpc::CallbackServerContext& context,
                                         const access::Identity* caller) {
  if (caller != nullptr) return caller->user;
  // "ipv4:10.0.0.1:50123", "ipv6:[::1]:50123": the address without the
  // port, which each connection changes.
  std::string peer = context.peer();
  if (absl::StartsWith(peer, "ipv4:") || absl::StartsWith(peer, "ipv6:")) {
    peer = peer.substr(0, peer.rfind(':'));
  }
  return "peer " + peer;
}

absl::Status WorkloadMapService::AdmitCall(grpc::CallbackServerContext& context,
                                           const access::Identity* caller) {
  if (options_.limits == nullptr) return absl::OkStatus();
  absl::Duration retry_after;
  absl::Status admitted = options_.limits->AdmitCall(LimitKey(context, caller), &retry_after);
  if (!admitted.ok()) {
    context.AddTrailingMetadata("wm-retry-after-ms",
                                std::to_string(absl::ToInt64Milliseconds(retry_after)));
  }
  return admitted;
}

grpc::ServerUnaryReactor* WorkloadMapService::Authenticated(
    UnaryCall call, const char* method,
    std::function<grpc::ServerUnaryReactor*(const UnaryCall&)> serve) {
  const access::Authenticator* authenticator = options_.authenticator;
  if (authenticator == nullptr) {
    if (absl::Status admitted = AdmitCall(*call.context, nullptr); !admitted.ok()) {
      return RunHere(call, method, [&] { return admitted; });
    }
    return serve(call);
  }
  absl::Time start = absl::Now();
  absl::StatusOr<access::CallerCredentials> credentials =
      ReadCallerCredentials(*call.context, options_.unix_peers);
  if (!credentials.ok()) {
    Audit({.kind = AuditEvent::Kind::kAuthentication,
           .method = method,
           .status = credentials.status(),
           .cached = true,
           .latency = absl::Now() - start});
    return RunHere(call, method, [&] { return credentials.status(); });
  }
  if (std::optional<absl::StatusOr<access::SharedIdentity>> known =
          authenticator->AuthenticateWithoutBlocking(*credentials)) {
    Audit({.kind = AuditEvent::Kind::kAuthentication,
           .method = method,
           .who = known->ok() ? (*known)->get() : nullptr,
           .status = known->status(),
           .cached = true,
           .latency = absl::Now() - start});
    if (!known->ok()) return RunHere(call, method, [&] { return known->status(); });
    if (absl::Status admitted = AdmitCall(*call.context, (*known)->get()); !admitted.ok()) {
      return RunHere(call, method, [&] { return admitted; });
    }
    call.caller = **std::move(known);
    return serve(call);
  }
  pool_.Post([this, call, method, start, authenticator, credentials = *std::move(credentials),
              serve = std::move(serve)]() mutable {
    absl::StatusOr<access::SharedIdentity> identity = authenticator->Authenticate(credentials);
    Audit({.kind = AuditEvent::Kind::kAuthentication,
           .method = method,
           .who = identity.ok() ? identity->get() : nullptr,
           .status = identity.status(),
           .latency = absl::Now() - start});
    if (!identity.ok()) return Finish(call, method, start, identity.status());
    if (absl::Status admitted = AdmitCall(*call.context, identity->get()); !admitted.ok()) {
      return Finish(call, method, start, admitted);
    }
    call.caller = *std::move(identity);
    serve(call);
  });
  return call.reactor;
}

grpc::ServerUnaryReactor* WorkloadMapService::Authorized(
    const UnaryCall& call, const char* method, const std::string& cluster,
    access::ResourceAttributes what, std::function<grpc::ServerUnaryReactor*()> serve) {
  auto it = options_.access_reviewers.find(cluster);
  if (call.caller == nullptr || it == options_.access_reviewers.end() || it->second == nullptr) {
    return serve();
  }
  access::AccessReviewer* reviewer = it->second;
  absl::Time start = absl::Now();
  auto audit = [&](const absl::Status& status, bool cached) {
    Audit({.kind = AuditEvent::Kind::kAuthorization,
           .method = method,
           .who = call.caller.get(),
           .what = &what,
           .status = status,
           .cached = cached,
           .latency = absl::Now() - start});
  };
  if (what.resource.empty()) {
    absl::Status unknown = absl::PermissionDeniedError(
        absl::StrCat("cannot authorize ", what.verb, " in cluster ", cluster,
                     ": the cluster does not say which resource serves the kind"));
    audit(unknown, true);
    return RunHere(call, method, [&] { return unknown; });
  }
  if (std::optional<absl::Status> decided = reviewer->CheckCached(*call.caller, what)) {
    audit(*decided, true);
    if (!decided->ok()) return RunHere(call, method, [&] { return *decided; });
    return serve();
  }
  pool_.Post(
      [this, call, method, start, reviewer, what = std::move(what), serve = std::move(serve)] {
        absl::Status decided = reviewer->Check(*call.caller, what);
        Audit({.kind = AuditEvent::Kind::kAuthorization,
               .method = method,
               .who = call.caller.get(),
               .what = &what,
               .status = decided,
               .latency = absl::Now() - start});
        if (!decided.ok()) return Finish(call, method, start, decided);
        serve();
      });
  return call.reactor;
}

grpc::ServerUnaryReactor* WorkloadMapService::AuthorizedInline(
    const UnaryCall& call, const char* method, std::function<grpc::ServerUnaryReactor*()> serve) {
  if (!options_.inline_permission || index_.clusters().empty()) return serve();
  return Authorized(call, method, index_.clusters().front()->name(), *options_.inline_permission,
                    std::move(serve));
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

grpc::ServerUnaryReactor* WorkloadMapService::RunHereOrOffload(const UnaryCall& call,
                                                               const char* method, bool here,
                                                               EngineWork work) {
  if (here) {
    absl::Time start = absl::Now();
    expressions::YieldingEngine slice(engine_,
                                      {.yield_at = start + options_.here_slice,
                                       .yield_above_built_bytes = options_.here_built_bytes});
    absl::Status status = work(slice);
    if (!slice.yielded()) {
      Finish(call, method, start, status);
      return call.reactor;
    }
  }
  return Offload(call, method, [this, work = std::move(work)] { return work(engine_); });
}

grpc::ServerUnaryReactor* WorkloadMapService::AnswerWithView(
    const UnaryCall& call, const char* method, ViewOrError published,
    std::function<ViewOrError()> resolve,
    std::function<absl::Status(const std::shared_ptr<const WorkloadView>&)> respond) {
  if (!published.ok() || *published) {
    return RunHere(call, method, [&]() -> absl::Status {
      if (!published.ok()) return published.status();
      return respond(*published);
    });
  }
  return Offload(call, method, [resolve, respond]() -> absl::Status {
    ViewOrError view = resolve();
    if (!view.ok()) return view.status();
    return respond(*view);
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
