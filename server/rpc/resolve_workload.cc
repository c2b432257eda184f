// ResolveWorkload: a workload by reference (from the index) or inline.
#include <memory>

#include "google/protobuf/arena.h"
#include "grpcpp/support/slice.h"
#include "server/common/heap.h"
#include "server/rpc/internal/messages.h"
#include "server/rpc/internal/targets.h"
#include "server/rpc/request_parsing.h"
#include "server/rpc/service.h"

namespace wm::rpc {

namespace v1 = workloadmap::v1;
using internal::AttributesOf;
using internal::FindTarget;
using internal::PickCluster;
using internal::PublishedViewOf;
using internal::ResolvedViewOf;
using internal::ResolveInline;
using internal::SerializeMessage;
using internal::TopOwnerOf;
using ::wm::index::CopyTrimmed;
using ::wm::index::TrimPods;
using ::wm::index::WorkloadView;

namespace {

constexpr char kResolveWorkload[] = "ResolveWorkload";

// `bytes`, held by `view`, as a slice that shares them instead of a copy:
// the view stays alive until gRPC has sent them.
grpc::Slice SliceOfView(const std::shared_ptr<const WorkloadView>& view, const std::string& bytes) {
  auto* holder = new std::shared_ptr<const WorkloadView>(view);
  return grpc::Slice(
      const_cast<char*>(bytes.data()), bytes.size(),
      [](void* held) { delete static_cast<std::shared_ptr<const WorkloadView>*>(held); }, holder);
}

}  // namespace

grpc::ServerUnaryReactor* WorkloadMapService::ResolveWorkload(grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* request_bytes,
                                                              grpc::ByteBuffer* response_bytes) {
  return Authenticated({context, context->DefaultReactor(), nullptr, nullptr}, kResolveWorkload,
                       [this, request_bytes, response_bytes](const UnaryCall& call) {
                         return ServeResolveWorkload(call, request_bytes, response_bytes);
                       });
}

grpc::ServerUnaryReactor* WorkloadMapService::ServeResolveWorkload(
    const UnaryCall& call, const grpc::ByteBuffer* request_bytes,
    grpc::ByteBuffer* response_bytes) {
  auto request = std::make_shared<v1::ResolveWorkloadRequest>();
  if (absl::Status parsed = ParseRequest(*request_bytes, request.get()); !parsed.ok()) {
    return RunHere(call, kResolveWorkload, [&] { return parsed; });
  }
  if (request->pod_limit() < 0) {
    return RunHere(call, kResolveWorkload,
                   [] { return absl::InvalidArgumentError("pod_limit is negative"); });
  }
  if (request->has_inline_()) {
    const bool small =
        IsSmallInline(request_bytes->Length(),
                      request->inline_().pod_json_size() + request->inline_().owner_json_size());
    return AuthorizedInline(call, kResolveWorkload, [this, call, request, response_bytes, small] {
      return RunHereOrOffload(
          call, kResolveWorkload, small,
          [this, request, response_bytes, small](expressions::Engine& engine) -> absl::Status {
            // Declared first, so it runs after the rest is freed: a large request's
            // parsed objects would otherwise stay in the heap for good.
            HeapTrimAfterLargeWork trim(request->ByteSizeLong());
            auto cluster = PickCluster(index_, "");
            if (!cluster.ok()) return cluster.status();
            // The answer is built in the response, on an arena: its many small
            // parts are allocated by bumping a pointer and freed at once.
            google::protobuf::Arena arena;
            auto* response =
                google::protobuf::Arena::CreateMessage<v1::ResolveWorkloadResponse>(&arena);
            absl::Status resolved =
                ResolveInline(engine, **cluster, request->inline_(), true,
                              options_.max_inline_objects, *response->mutable_workload());
            // Its JSON texts, before the trim; a small request is kept, as
            // it may be resolved again (RunHereOrOffload).
            if (!small) request->clear_inline_();
            if (!resolved.ok()) return resolved;
            TrimPods(request->include_pods(), request->pod_limit(), response->mutable_workload());
            return SerializeMessage(*response, response_bytes);
          });
    });
  }
  if (!request->has_ref()) {
    return RunHere(call, kResolveWorkload,
                   [] { return absl::InvalidArgumentError("ref or inline is required"); });
  }
  auto target = FindTarget(index_, kind_names_, request->ref(), "ref");
  if (target.ok() && request->top_owner()) target = TopOwnerOf(*target);
  auto respond = [this, request,
                  response_bytes](const std::shared_ptr<const WorkloadView>& view) -> absl::Status {
    v1::ResolveWorkloadResponse response;
    // A view resolved on request was computed at the current revision.
    response.set_revision(view->revision != 0 ? view->revision : index_.revision());
    if (!request->include_pods()) {
      // The cached bytes, then the revision: fields of a message may come
      // in any order and concatenated serializations merge.
      std::string revision = response.SerializeAsString();
      grpc::Slice slices[] = {SliceOfView(view, view->resolve_response_without_pods),
                              grpc::Slice(revision)};
      *response_bytes = grpc::ByteBuffer(slices, 2);
      return absl::OkStatus();
    }
    CopyTrimmed(*view->resolved, true, request->pod_limit(), response.mutable_workload());
    return SerializeMessage(response, response_bytes);
  };
  if (!target.ok()) return RunHere(call, kResolveWorkload, [&] { return target.status(); });
  return Authorized(call, kResolveWorkload, target->cluster->name(), AttributesOf(*target, "get"),
                    [this, call, target = *target, respond] {
                      return AnswerWithView(
                          call, kResolveWorkload, PublishedViewOf(index_, target),
                          [this, target] { return ResolvedViewOf(index_, target); }, respond);
                    });
}

}  // namespace wm::rpc
