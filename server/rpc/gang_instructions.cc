// GetGangInstructions: the gang of a pod or of a workload.
#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/resolution/resolver.h"
#include "server/rpc/internal/messages.h"
#include "server/rpc/internal/targets.h"
#include "server/rpc/service.h"

namespace wm::rpc {

namespace v1 = workloadmap::v1;
using internal::AttributesOf;
using internal::FindTarget;
using internal::ParseJsonField;
using internal::PickCluster;
using internal::PublishedViewOf;
using internal::ResolvedViewOf;
using internal::ResolveInline;
using internal::TopOwnerOf;
using ::wm::index::WorkloadView;

grpc::ServerUnaryReactor* WorkloadMapService::ServeGetGangInstructions(
    const UnaryCall& call, const v1::GetGangInstructionsRequest* request,
    v1::GetGangInstructionsResponse* response) {
  static constexpr char kMethod[] = "GetGangInstructions";
  if (request->has_inline_pod()) {
    // A pod and its top owner.
    const bool small = IsSmallInline(request->ByteSizeLong(), 2);
    return AuthorizedInline(call, kMethod, [this, call, request, response, small] {
      return RunHereOrOffload(
          call, kMethod, small,
          [this, request, response](expressions::Engine& engine) -> absl::Status {
            auto cluster = PickCluster(index_, "");
            if (!cluster.ok()) return cluster.status();
            auto pod = ParseJsonField(request->inline_pod().pod_json(), "inline_pod.pod_json");
            if (!pod.ok()) return pod.status();
            auto owner =
                ParseJsonField(request->inline_pod().top_owner_json(), "inline_pod.top_owner_json");
            if (!owner.ok()) return owner.status();
            // The caller vouches for the top owner: the pod is attached to it
            // directly, whatever lies between them.
            std::string owner_uid = FindString(*owner, {"metadata", "uid"});
            if (!owner_uid.empty()) {
              (*pod)["metadata"]["ownerReferences"] =
                  Json::array({{{"apiVersion", FindString(*owner, {"apiVersion"})},
                                {"kind", FindString(*owner, {"kind"})},
                                {"name", FindString(*owner, {"metadata", "name"})},
                                {"uid", owner_uid},
                                {"controller", true}}});
            }
            v1::InlineWorkload in;
            in.set_object_json(owner->dump());
            in.add_pod_json(pod->dump());
            v1::ResolvedWorkload resolved;
            absl::Status status =
                ResolveInline(engine, **cluster, in, true, options_.max_inline_objects, resolved);
            if (!status.ok()) return status;
            *response->mutable_gang() = resolved.gang();
            *response->mutable_top_owner() = resolved.ref();
            std::string name = FindString(*pod, {"metadata", "name"});
            for (const auto& a : resolved.gang().assignments()) {
              if (a.pod() == name) *response->mutable_assignment() = a;
            }
            if (response->assignment().pod().empty()) {
              return absl::InvalidArgumentError(
                  absl::StrCat("inline_pod.pod_json: pod ", name,
                               " belongs to no component of its top owner's definition"));
            }
            return absl::OkStatus();
          });
    });
  }
  bool for_pod = request->has_pod();
  if (!for_pod && !request->has_workload()) {
    return RunHere(call, kMethod, [] {
      return absl::InvalidArgumentError("pod, workload or inline_pod is required");
    });
  }
  v1::ObjectRef ref = for_pod ? request->pod() : request->workload();
  if (for_pod && ref.kind().empty() && ref.resource().empty()) ref.set_kind("Pod");
  auto target = FindTarget(index_, kind_names_, ref, for_pod ? "pod" : "workload");
  if (target.ok() && for_pod) target = TopOwnerOf(*target);
  auto respond = [for_pod, ref,
                  response](const std::shared_ptr<const WorkloadView>& view) -> absl::Status {
    const v1::ResolvedWorkload& resolved = *view->resolved;
    *response->mutable_gang() = resolved.gang();
    *response->mutable_top_owner() = resolved.ref();
    if (!for_pod) return absl::OkStatus();
    for (const auto& a : resolved.gang().assignments()) {
      if (a.pod() == ref.name()) *response->mutable_assignment() = a;
    }
    if (response->assignment().pod().empty()) {
      return absl::NotFoundError(absl::StrCat("pod ", ref.name(), " is not attributed to ",
                                              resolved.ref().kind(), " ", resolved.ref().name(),
                                              " yet"));
    }
    return absl::OkStatus();
  };
  if (!target.ok()) return RunHere(call, kMethod, [&] { return target.status(); });
  return Authorized(call, kMethod, target->cluster->name(), AttributesOf(*target, "get"),
                    [this, call, target = *target, respond] {
                      return AnswerWithView(
                          call, kMethod, PublishedViewOf(index_, target),
                          [this, target] { return ResolvedViewOf(index_, target); }, respond);
                    });
}

}  // namespace wm::rpc
