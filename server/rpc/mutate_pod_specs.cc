// MutatePodSpecs: pod-template changes checked as the apiserver would, as a patch, a dry run or an
// apply.
#include <optional>

#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"
#include "server/common/user_text.h"
#include "server/resolution/edit.h"
#include "server/resolution/mutation.h"
#include "server/resolution/pod_spec_validation.h"
#include "server/rpc/internal/messages.h"
#include "server/rpc/internal/targets.h"
#include "server/rpc/service.h"

namespace wm::rpc {

namespace v1 = workloadmap::v1;
using internal::AttributesOf;
using internal::CachedObjectOf;
using internal::DefinitionFor;
using internal::FindTarget;
using internal::GvkOf;
using internal::JsonToMessage;
using internal::MessageToJson;
using internal::ParseJsonField;
using internal::PickCluster;
using internal::Target;

namespace {

constexpr char kMutatePodSpecs[] = "MutatePodSpecs";

absl::StatusOr<resolution::WorkloadEdit> ToEdit(const v1::MutatePodSpecsRequest& request) {
  resolution::WorkloadEdit edit;
  for (int i = 0; i < request.changes_size(); ++i) {
    const v1::PodTemplateChange& c = request.changes(i);
    resolution::PodTemplateEdit e;
    e.component = c.component();
    e.instance_id = c.instance_id();
    e.field = absl::StrCat("changes[", i, "]");
    // Every value is checked as the apiserver would check it before it
    // goes into the patch, so that a dry run refuses what an apply would.
    auto field = [&](absl::string_view name) { return absl::StrCat(e.field, ".", name); };
    Json patch = Json::object();
    if (!c.scheduler_name().empty()) {
      absl::Status s =
          resolution::ValidateDnsSubdomainName(c.scheduler_name(), field("scheduler_name"));
      if (!s.ok()) return s;
      patch["spec"]["schedulerName"] = c.scheduler_name();
    }
    if (!c.priority_class_name().empty()) {
      absl::Status s = resolution::ValidateDnsSubdomainName(c.priority_class_name(),
                                                            field("priority_class_name"));
      if (!s.ok()) return s;
      patch["spec"]["priorityClassName"] = c.priority_class_name();
    }
    // protobuf's maps iterate in no order: each object is sorted once.
    const auto object_of = [](const auto& map) {
      Json::object_t::Container members;
      members.reserve(map.size());
      for (const auto& [k, v] : map) members.emplace_back(k, v);
      return ObjectOf(std::move(members));
    };
    Json labels = object_of(c.labels());
    Json annotations = object_of(c.annotations());
    Json node_selector = object_of(c.node_selector());
    if (absl::Status s = resolution::ValidateLabels(labels, field("labels")); !s.ok()) return s;
    if (absl::Status s = resolution::ValidateAnnotations(annotations, field("annotations"));
        !s.ok()) {
      return s;
    }
    if (absl::Status s = resolution::ValidateLabels(node_selector, field("node_selector"));
        !s.ok()) {
      return s;
    }
    if (!labels.empty()) patch["metadata"]["labels"] = std::move(labels);
    if (!annotations.empty()) patch["metadata"]["annotations"] = std::move(annotations);
    if (!node_selector.empty()) patch["spec"]["nodeSelector"] = std::move(node_selector);
    if (c.has_tolerations()) {
      Json tolerations = MessageToJson(c.tolerations());
      if (absl::Status s = resolution::ValidateTolerations(tolerations, field("tolerations"));
          !s.ok()) {
        return s;
      }
      patch["spec"]["tolerations"] = std::move(tolerations);
    }
    if (c.has_affinity()) {
      Json affinity = MessageToJson(c.affinity());
      if (absl::Status s = resolution::ValidateAffinity(affinity, field("affinity")); !s.ok()) {
        return s;
      }
      patch["spec"]["affinity"] = std::move(affinity);
    }
    for (const auto& [container, resources] : c.container_resources()) {
      Json value = MessageToJson(resources);
      absl::Status s = resolution::ValidateResourceValues(
          value, field(absl::StrCat("container_resources[", QuoteUserText(container), "]")));
      if (!s.ok()) return s;
      e.container_resources[container] = std::move(value);
    }
    if (c.has_pod_template()) {
      e.replacement = MessageToJson(c.pod_template());
      absl::Status s = resolution::ValidatePodTemplate(e.replacement, field("pod_template"));
      if (!s.ok()) return s;
    }
    if (patch.empty() && e.container_resources.empty() && e.replacement.is_null()) {
      return absl::InvalidArgumentError(absl::StrCat("changes[", i, "]: changes nothing"));
    }
    if (!patch.empty()) e.merge_patch = std::move(patch);
    edit.templates.push_back(std::move(e));
  }
  if (request.suspend() == v1::MutatePodSpecsRequest::SUSPEND) edit.suspend = true;
  if (request.suspend() == v1::MutatePodSpecsRequest::RESUME) edit.suspend = false;
  if (edit.templates.empty() && !edit.suspend) {
    return absl::InvalidArgumentError("changes: nothing to change (no changes and no suspend)");
  }
  return edit;
}

// Computes `edit` of `ref` (or of the request's inline object) and, for an
// apply, patches it as `caller`.
absl::Status Mutate(index::WorkloadIndex& index, expressions::Engine& engine,
                    const WorkloadMapService::Options& options, const access::Identity* caller,
                    const v1::MutatePodSpecsRequest& request, const resolution::WorkloadEdit& edit,
                    std::optional<Target> ref, v1::MutatePodSpecsResponse* response) {
  Json object;
  Target target;
  if (ref) {
    target = *ref;
    auto cached = CachedObjectOf(target);
    if (!cached.ok()) return cached.status();
    object = *(*cached)->Document();
  } else {
    if (request.apply())
      return absl::InvalidArgumentError("apply: only a ref target can be applied");
    auto parsed = ParseJsonField(request.inline_().object_json(), "inline.object_json");
    if (!parsed.ok()) return parsed.status();
    object = *std::move(parsed);
    auto cluster = PickCluster(index, "");
    if (!cluster.ok()) return cluster.status();
    auto gvk = GvkOf(object, "inline.object_json");
    if (!gvk.ok()) return gvk.status();
    target.cluster = *cluster;
    target.gvk = *gvk;
  }
  auto def = DefinitionFor(*target.cluster, target.gvk);
  if (!def.ok()) return def.status();
  auto mutated = resolution::EditWorkload(**def, engine, object, edit);
  if (!mutated.ok()) return mutated.status();
  Json patch = resolution::JsonPatch(object, *mutated);
  if (absl::Status s =
          JsonToMessage(*mutated, "result.object", response->mutable_result()->mutable_object());
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          JsonToMessage(patch, "result.patch", response->mutable_result()->mutable_patch());
      !s.ok()) {
    return s;
  }
  // An answer gRPC would refuse to send is refused here, and before the
  // patch is applied: a client must not get an error for an apply that
  // happened.
  if (size_t bytes = response->ByteSizeLong();
      bytes > static_cast<size_t>(options.max_message_bytes)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the answer (the mutated object and its patch) would be ", bytes,
                     " bytes, more than the ", options.max_message_bytes,
                     " a message may have (--max-message-bytes); nothing was applied"));
  }
  if (!request.apply()) return absl::OkStatus();
  // Guard against a concurrent change: the patch applies only to the
  // version it was computed from.
  Json guarded = Json::array();
  guarded.push_back({{"op", "test"},
                     {"path", "/metadata/resourceVersion"},
                     {"value", FindString(object, {"metadata", "resourceVersion"})}});
  for (const Json& op : patch) guarded.push_back(op);
  // As the caller, when one authenticated: the apiserver's RBAC and
  // admission then judge the caller, not the daemon.
  std::optional<kube::Impersonation> as;
  // Extra fields are left out: RBAC does not read them, and impersonating
  // each needs a grant of its own (deploy/overlays/access-control).
  if (caller != nullptr) {
    as = kube::Impersonation{.user = caller->user, .groups = caller->groups, .uid = caller->uid};
  }
  absl::Time start = absl::Now();
  auto rv =
      target.cluster->Patch(target.gvk, FindString(object, {"metadata", "namespace"}),
                            FindString(object, {"metadata", "name"}), guarded, as ? &*as : nullptr);
  if (options.audit) {
    access::ResourceAttributes what = AttributesOf(target, "patch");
    options.audit({.kind = AuditEvent::Kind::kApply,
                   .method = kMutatePodSpecs,
                   .who = caller,
                   .what = &what,
                   .status = rv.status(),
                   .latency = absl::Now() - start});
  }
  if (!rv.ok()) return rv.status();
  response->set_applied(true);
  response->set_resource_version(*rv);
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* WorkloadMapService::ServeMutatePodSpecs(
    const UnaryCall& call, const v1::MutatePodSpecsRequest* request,
    v1::MutatePodSpecsResponse* response) {
  // The request's own errors first: they need no target and no access.
  absl::StatusOr<resolution::WorkloadEdit> edit = ToEdit(*request);
  if (!edit.ok()) return RunHere(call, kMutatePodSpecs, [&] { return edit.status(); });
  // An inline request is a dry run: a small one is served here. One by
  // reference reads an object of any size, and an apply waits on the
  // apiserver.
  const bool small =
      request->has_inline_() &&
      IsSmallInline(request->ByteSizeLong(),
                    request->inline_().pod_json_size() + request->inline_().owner_json_size());
  auto mutate = [this, call, request, response, small,
                 edit = *std::move(edit)](std::optional<Target> ref) {
    return RunHereOrOffload(
        call, kMutatePodSpecs, small,
        [this, call, request, response, edit, ref](expressions::Engine& engine) -> absl::Status {
          return Mutate(index_, engine, options_, call.caller.get(), *request, edit, ref, response);
        });
  };
  if (request->has_ref()) {
    // The answer holds the object: the caller needs get on it, as kubectl
    // get would. An apply is then judged by the apiserver, as the caller.
    auto found = FindTarget(index_, kind_names_, request->ref(), "ref");
    if (!found.ok()) return RunHere(call, kMutatePodSpecs, [&] { return found.status(); });
    return Authorized(call, kMutatePodSpecs, found->cluster->name(), AttributesOf(*found, "get"),
                      [mutate, target = *found] { return mutate(target); });
  }
  if (request->has_inline_()) {
    return AuthorizedInline(call, kMutatePodSpecs, [mutate] { return mutate(std::nullopt); });
  }
  return RunHere(call, kMutatePodSpecs,
                 [] { return absl::InvalidArgumentError("ref or inline is required"); });
}

}  // namespace wm::rpc
