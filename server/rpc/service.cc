#include "server/rpc/service.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "server/common/heap.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"
#include "server/common/kube_names.h"
#include "server/common/user_text.h"
#include "server/common/yaml_json.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/kube/object.h"
#include "server/resolution/edit.h"
#include "server/resolution/mutation.h"
#include "server/resolution/pod_spec_validation.h"
#include "server/resolution/resolver.h"
#include "server/rpc/kind_names.h"
#include "server/rpc/label_selector.h"
#include "server/rpc/page_token.h"
#include "server/rpc/request_parsing.h"

namespace wm::rpc {
namespace {

using ::wm::index::Cluster;
using ::wm::index::CopyTrimmed;
using ::wm::index::WorkloadEvent;
using ::wm::index::WorkloadIndex;
using ::wm::index::WorkloadView;

namespace v1 = workloadmap::v1;
using kube::Gvk;

// ---- Targets ----------------------------------------------------------

absl::StatusOr<Cluster*> PickCluster(const WorkloadIndex& index, const std::string& name) {
  if (index.clusters().empty()) return absl::UnavailableError("the daemon serves no cluster");
  if (name.empty()) return index.clusters().front();
  if (Cluster* c = index.FindCluster(name)) return c;
  std::vector<std::string> names;
  for (const Cluster* c : index.clusters()) names.push_back(c->name());
  return absl::NotFoundError(absl::StrCat("cluster ", QuoteUserText(name),
                                          " is not served (clusters: ", absl::StrJoin(names, ", "),
                                          ")"));
}

std::string NamespaceOf(const v1::ObjectRef& ref) {
  return ref.namespace_().empty() ? "default" : ref.namespace_();
}

struct Target {
  Cluster* cluster = nullptr;
  Gvk gvk;
  std::string key;
};

// A referenced object of any watched kind, looked up in the cache.
absl::StatusOr<Target> FindTarget(const WorkloadIndex& index, KindNamesCache& kind_names,
                                  const v1::ObjectRef& ref, const std::string& field) {
  auto cluster = PickCluster(index, ref.cluster());
  if (!cluster.ok()) return cluster.status();
  if (ref.name().empty()) return absl::InvalidArgumentError(field + ": name is required");
  // Longer names and namespaces cannot exist; they are not echoed.
  if (ref.name().size() > kMaxDns1123SubdomainLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".name: ", ref.name().size(), " characters, more than the ",
                     kMaxDns1123SubdomainLength, " of a Kubernetes name"));
  }
  if (ref.namespace_().size() > kMaxDns1123LabelLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".namespace: ", ref.namespace_().size(), " characters, more than the ",
                     kMaxDns1123LabelLength, " of a Kubernetes namespace"));
  }
  auto gvk = kind_names.For(**cluster)->Resolve(ref, field);
  if (!gvk.ok()) return gvk.status();
  return Target{*cluster, *gvk, kube::ObjectKey(NamespaceOf(ref), ref.name())};
}

// The cached object of a target; UNAVAILABLE while its kind syncs.
absl::StatusOr<std::shared_ptr<const kube::CachedObject>> CachedObjectOf(const Target& t) {
  auto store = t.cluster->view().StoreFor(t.gvk);
  auto object = store ? store->Get(t.key) : nullptr;
  if (object) return object;
  std::string problem = t.cluster->KindProblem(t.gvk);
  if (absl::StrContains(problem, "not yet synced")) {
    return absl::UnavailableError(absl::StrCat(t.gvk.ToString(), " in cluster ", t.cluster->name(),
                                               ": ", problem, "; retry"));
  }
  return absl::NotFoundError(absl::StrCat(t.gvk.kind, " ", t.key, " not found in cluster ",
                                          t.cluster->name(),
                                          problem.empty() ? "" : " (" + problem + ")"));
}

// Moves a target to the top of its controller chain.
absl::StatusOr<Target> TopOwnerOf(const Target& t) {
  auto object = CachedObjectOf(t);
  if (!object.ok()) return object.status();
  auto top = t.cluster->view().TopOwner(t.gvk, *object);
  return Target{t.cluster, top.gvk, top.object->key()};
}

// The definition of a kind, or why there is none to use.
absl::StatusOr<std::shared_ptr<const definitions::CompiledDefinition>> DefinitionFor(
    const Cluster& cluster, const Gvk& gvk) {
  auto registry = cluster.definitions();
  if (!registry) return absl::FailedPreconditionError("no definitions are loaded");
  auto def = registry->ForKind({gvk.group, gvk.version, gvk.kind});
  if (def.ok()) return def;
  if (absl::IsNotFound(def.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat("no definition covers ", gvk.ToString(), ": ", def.status().message()));
  }
  return def.status();
}

// The view the index has published for a target, or null when it has none:
// an object inside a workload (a JobSet's Job, a Job's pod), which the index
// does not keep, or one the resolver has not reached yet. Runs no expression.
absl::StatusOr<std::shared_ptr<const WorkloadView>> PublishedViewOf(const WorkloadIndex& index,
                                                                    const Target& t) {
  if (absl::Status s = DefinitionFor(*t.cluster, t.gvk).status(); !s.ok()) return s;
  std::shared_ptr<const WorkloadView> view = index.Get({t.cluster->name(), t.gvk, t.key});
  if (view && !view->error.ok()) return view->error;
  return view;
}

// A target resolved now, outside the index: for targets without a
// published view. Evaluates expressions, so it runs on the work pool.
absl::StatusOr<std::shared_ptr<const WorkloadView>> ResolvedViewOf(WorkloadIndex& index,
                                                                   const Target& t) {
  auto object = CachedObjectOf(t);
  if (!object.ok()) return object.status();
  auto view = index.ResolveNow({t.cluster->name(), t.gvk, t.key});
  if (!view.ok()) return view.status();
  if (!(*view)->error.ok()) return (*view)->error;
  return view;
}

// ---- JSON in and out ----------------------------------------------------

// The metadata fields resolution reads have the types Kubernetes gives
// them, so a malformed object is refused as the apiserver would refuse it
// rather than resolved as if the field were absent.
absl::Status CheckObjectMeta(const Json& object, const std::string& field) {
  auto it = object.find("metadata");
  if (it == object.end()) return absl::OkStatus();
  if (!it->is_object()) return absl::InvalidArgumentError(field + ": metadata must be an object");
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    auto v = it->find(key);
    if (v != it->end() && !v->is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": metadata.", key, " must be a string"));
    }
  }
  for (const char* key : {"labels", "annotations"}) {
    auto map = it->find(key);
    if (map == it->end() || map->is_null()) continue;
    if (!map->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": metadata.", key, " must be an object of strings"));
    }
    for (const auto& [name, v] : map->items()) {
      if (!v.is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(field, ": metadata.", key, "[",
                                                       QuoteUserText(name), "] must be a string"));
      }
    }
  }
  auto owners = it->find("ownerReferences");
  if (owners != it->end() && !owners->is_null() && !owners->is_array()) {
    return absl::InvalidArgumentError(field + ": metadata.ownerReferences must be an array");
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> ParseJsonField(const std::string& text, const std::string& field) {
  if (text.empty()) return absl::InvalidArgumentError(field + " is empty");
  auto value = ParseJson(text);
  if (!value.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", value.status().message()));
  }
  if (!value->is_object()) return absl::InvalidArgumentError(field + " is not a JSON object");
  if (absl::Status s = CheckObjectMeta(*value, field); !s.ok()) return s;
  return value;
}

template <typename Message>
absl::Status SerializeMessage(const Message& message, grpc::ByteBuffer* out) {
  bool own_buffer = false;
  grpc::Status status = grpc::SerializationTraits<Message>::Serialize(message, out, &own_buffer);
  if (!status.ok()) return absl::InternalError(status.error_message());
  return absl::OkStatus();
}

absl::StatusOr<Gvk> GvkOf(const Json& object, const std::string& field) {
  std::string api_version = FindString(object, {"apiVersion"});
  std::string kind = FindString(object, {"kind"});
  if (api_version.empty() || kind.empty()) {
    return absl::InvalidArgumentError(field + ": apiVersion and kind are required");
  }
  return kube::GvkFromApiVersion(api_version, kind);
}

template <typename Message>
absl::Status JsonToMessage(const Json& json, const std::string& field, Message* out) {
  auto status = google::protobuf::util::JsonStringToMessage(json.dump(), out);
  if (!status.ok()) {
    // The only way a parsed document fails here is depth: protobuf nests
    // at most 100 messages, and a JSON object level costs a Struct three.
    return absl::InvalidArgumentError(absl::StrCat(
        field,
        ": nests too deeply to be returned as a google.protobuf.Struct (protobuf allows 100 "
        "nested messages, about 33 levels of objects): ",
        std::string(status.message())));
  }
  return absl::OkStatus();
}

template <typename Message>
Json MessageToJson(const Message& message) {
  std::string text;
  (void)google::protobuf::util::MessageToJsonString(message, &text);
  return Json::parse(text, nullptr, false);
}

// Resolves an object the caller sent, with the definitions of `cluster`,
// if it comes with at most `max_objects` pods and owners.
absl::StatusOr<v1::ResolvedWorkload> ResolveInline(expressions::Engine& engine,
                                                   const Cluster& cluster,
                                                   const v1::InlineWorkload& in, bool gang,
                                                   int max_objects) {
  if (in.pod_json_size() + in.owner_json_size() > max_objects) {
    return absl::InvalidArgumentError(
        absl::StrCat("inline.pod_json and inline.owner_json: ", in.pod_json_size(), " pods and ",
                     in.owner_json_size(), " owners, more than the ", max_objects,
                     " objects one call may send inline"));
  }
  auto object = ParseJsonField(in.object_json(), "inline.object_json");
  if (!object.ok()) return object.status();
  auto gvk = GvkOf(*object, "inline.object_json");
  if (!gvk.ok()) return gvk.status();
  auto def = DefinitionFor(cluster, *gvk);
  if (!def.ok()) return def.status();
  std::vector<Json> pods, owners;
  for (int i = 0; i < in.pod_json_size(); ++i) {
    auto pod = ParseJsonField(in.pod_json(i), absl::StrCat("inline.pod_json[", i, "]"));
    if (!pod.ok()) return pod.status();
    pods.push_back(*std::move(pod));
  }
  for (int i = 0; i < in.owner_json_size(); ++i) {
    auto owner = ParseJsonField(in.owner_json(i), absl::StrCat("inline.owner_json[", i, "]"));
    if (!owner.ok()) return owner.status();
    owners.push_back(*std::move(owner));
  }
  resolution::WorkloadInput input;
  input.object = &*object;
  for (const Json& p : pods) input.pods.push_back(&p);
  for (const Json& o : owners) input.owners.push_back(&o);
  resolution::ResolveOptions options;
  options.cluster = cluster.name();
  options.include_gang = gang;
  auto resolved = resolution::ResolveWorkload(**def, engine, input, options);
  if (!resolved.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("inline.object_json: ", resolved.status().message()));
  }
  return resolved;
}

// ---- Listing ------------------------------------------------------------

absl::Status NotReadyError() {
  return absl::UnavailableError(
      "the daemon is still syncing its caches and resolving workloads; retry (its gRPC health "
      "status turns SERVING when it is done)");
}

// Newest first; ties by cluster, namespace, kind and name.
std::string SortKey(const WorkloadView& v) {
  return absl::StrCat(v.creation_timestamp, "\x1f", v.id.cluster, "\x1f", v.namespace_, "\x1f",
                      v.id.gvk.group, "/", v.id.gvk.kind, "\x1f", v.name);
}

bool Newer(const std::string& a, const std::string& b) {
  // Timestamps are RFC 3339 in UTC with a fixed width, so they sort as text;
  // the rest of the key breaks ties in ascending order.
  std::string ta = a.substr(0, a.find('\x1f')), tb = b.substr(0, b.find('\x1f'));
  if (ta != tb) return ta > tb;
  return a < b;
}

struct ListFilter {
  std::string cluster, namespace_;
  std::vector<std::string> kinds;
  std::set<std::string> statuses;
  LabelSelector selector;

  bool Matches(const WorkloadIndex& index, KindNamesCache& kind_names,
               const WorkloadView& v) const {
    if (!cluster.empty() && v.id.cluster != cluster) return false;
    if (!namespace_.empty() && v.namespace_ != namespace_) return false;
    if (!kinds.empty()) {
      const Cluster* c = index.FindCluster(v.id.cluster);
      if (c == nullptr) return false;
      std::shared_ptr<const KindNames> names = kind_names.For(*c);
      bool any = false;
      for (const std::string& k : kinds) any = any || names->Matches(v.id.gvk, k);
      if (!any) return false;
    }
    if (!statuses.empty()) {
      bool any = false;
      for (const std::string& s : v.summary.matched_statuses()) any = any || statuses.count(s);
      if (!any) return false;
    }
    return selector.Matches(v.labels);
  }
};

// A filter from a request's fields. A kind that no served cluster knows by
// that name is refused, as kubectl refuses `get nosuchkind`: it is a typo,
// not a filter that happens to match nothing.
absl::StatusOr<ListFilter> MakeFilter(
    const WorkloadIndex& index, KindNamesCache& kind_names, const std::string& cluster,
    const std::string& namespace_, const google::protobuf::RepeatedPtrField<std::string>& kinds,
    const google::protobuf::RepeatedPtrField<std::string>& statuses, const std::string& selector) {
  ListFilter f;
  if (!cluster.empty()) {
    auto c = PickCluster(index, cluster);
    if (!c.ok()) return c.status();
  }
  f.cluster = cluster;
  f.namespace_ = namespace_;
  for (int i = 0; i < kinds.size(); ++i) {
    bool known = false;
    for (const Cluster* c : index.clusters()) {
      if (!cluster.empty() && c->name() != cluster) continue;
      known = known || kind_names.For(*c)->Names(kinds[i]);
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("kinds[", i, "]: ", QuoteUserText(kinds[i]),
                       " names no kind the daemon serves (a kind, group/Kind, plural or singular "
                       "resource name, as kubectl takes them)"));
    }
  }
  f.kinds.assign(kinds.begin(), kinds.end());
  static const std::set<std::string> kKnown = {"Resuming",     "Suspending", "Suspended",
                                               "Running",      "Failed",     "Completed",
                                               "Initializing", "Degraded",   "Undefined"};
  for (const std::string& s : statuses) {
    if (!kKnown.count(s)) {
      return absl::InvalidArgumentError(absl::StrCat("statuses: unknown status ", QuoteUserText(s),
                                                     " (one of ", absl::StrJoin(kKnown, ", "),
                                                     ")"));
    }
    f.statuses.insert(s);
  }
  auto parsed = LabelSelector::Parse(selector);
  if (!parsed.ok()) return parsed.status();
  f.selector = *std::move(parsed);
  return f;
}

int64_t AgeSeconds(const std::string& timestamp, absl::Time now) {
  absl::Time created;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, timestamp, &created, &error)) return 0;
  return absl::ToInt64Seconds(now - created);
}

// ---- Definitions ----------------------------------------------------------

void AddFinding(const Finding& f, google::protobuf::RepeatedPtrField<v1::Finding>* out) {
  v1::Finding* finding = out->Add();
  finding->set_severity(f.is_error() ? "error" : "warning");
  finding->set_path(f.path);
  finding->set_message(f.message);
}

// ---- Mutation -------------------------------------------------------------

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
    Json labels = Json::object(), annotations = Json::object(), node_selector = Json::object();
    for (const auto& [k, v] : c.labels()) labels[k] = v;
    for (const auto& [k, v] : c.annotations()) annotations[k] = v;
    for (const auto& [k, v] : c.node_selector()) node_selector[k] = v;
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

}  // namespace

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

void WorkloadMapService::Finish(const UnaryCall& call, grpc::ServerUnaryReactor* reactor,
                                const char* method, absl::Time start, absl::Status status) {
  if (status.ok() && call.serialize_response) status = call.serialize_response();
  grpc::Status grpc_status = ToGrpcStatus(status);
  if (observer_) observer_(method, grpc_status.error_code(), absl::Now() - start);
  reactor->Finish(grpc_status);
}

grpc::ServerUnaryReactor* WorkloadMapService::Offload(const UnaryCall& call, const char* method,
                                                      std::function<absl::Status()> work) {
  grpc::ServerUnaryReactor* reactor = call.context->DefaultReactor();
  absl::Time start = absl::Now();
  pool_.Post([this, call, reactor, method, start, work = std::move(work)] {
    if (call.context->IsCancelled()) {
      Finish(call, reactor, method, start, absl::CancelledError("the call was cancelled"));
    } else if (std::chrono::system_clock::now() > call.context->deadline() ||
               absl::Now() - start > options_.default_deadline) {
      Finish(call, reactor, method, start,
             absl::DeadlineExceededError("the deadline passed before the work started"));
    } else {
      Finish(call, reactor, method, start, work());
    }
  });
  return reactor;
}

grpc::ServerUnaryReactor* WorkloadMapService::RunHere(const UnaryCall& call, const char* method,
                                                      absl::FunctionRef<absl::Status()> work) {
  grpc::ServerUnaryReactor* reactor = call.context->DefaultReactor();
  absl::Time start = absl::Now();
  Finish(call, reactor, method, start, work());
  return reactor;
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
  const UnaryCall call{context, [messages, response_bytes] {
                         return SerializeMessage(messages->second, response_bytes);
                       }};
  if (absl::Status parsed = ParseRequest(*request_bytes, &messages->first); !parsed.ok()) {
    return RunHere(call, method, [&] { return parsed; });
  }
  return (this->*serve)(call, &messages->first, &messages->second);
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

grpc::ServerUnaryReactor* WorkloadMapService::ResolveWorkload(grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* request_bytes,
                                                              grpc::ByteBuffer* response_bytes) {
  const char* kMethod = "ResolveWorkload";
  const UnaryCall call{context, nullptr};
  auto request = std::make_shared<v1::ResolveWorkloadRequest>();
  if (absl::Status parsed = ParseRequest(*request_bytes, request.get()); !parsed.ok()) {
    return RunHere(call, kMethod, [&] { return parsed; });
  }
  if (request->pod_limit() < 0) {
    return RunHere(call, kMethod,
                   [] { return absl::InvalidArgumentError("pod_limit is negative"); });
  }
  if (request->has_inline_()) {
    return Offload(call, kMethod, [this, request, response_bytes]() -> absl::Status {
      // Declared first, so it runs after the rest is freed: a large request's
      // parsed objects would otherwise stay in the heap for good.
      HeapTrimAfterLargeWork trim(request->ByteSizeLong());
      auto cluster = PickCluster(index_, "");
      if (!cluster.ok()) return cluster.status();
      auto resolved =
          ResolveInline(engine_, **cluster, request->inline_(), true, options_.max_inline_objects);
      request->clear_inline_();  // its JSON texts, before the trim
      if (!resolved.ok()) return resolved.status();
      v1::ResolveWorkloadResponse response;
      CopyTrimmed(*resolved, request->include_pods(), request->pod_limit(),
                  response.mutable_workload());
      return SerializeMessage(response, response_bytes);
    });
  }
  if (!request->has_ref()) {
    return RunHere(call, kMethod,
                   [] { return absl::InvalidArgumentError("ref or inline is required"); });
  }
  auto target = FindTarget(index_, kind_names_, request->ref(), "ref");
  if (target.ok() && request->top_owner()) target = TopOwnerOf(*target);
  auto respond = [this, request, response_bytes](const WorkloadView& view) -> absl::Status {
    v1::ResolveWorkloadResponse response;
    // A view resolved on request was computed at the current revision.
    response.set_revision(view.revision != 0 ? view.revision : index_.revision());
    if (!request->include_pods()) {
      // The cached bytes, then the revision: fields of a message may come
      // in any order and concatenated serializations merge.
      std::string revision = response.SerializeAsString();
      grpc::Slice slices[] = {grpc::Slice(view.resolve_response_without_pods),
                              grpc::Slice(revision)};
      *response_bytes = grpc::ByteBuffer(slices, 2);
      return absl::OkStatus();
    }
    CopyTrimmed(*view.resolved, true, request->pod_limit(), response.mutable_workload());
    return SerializeMessage(response, response_bytes);
  };
  if (!target.ok()) return RunHere(call, kMethod, [&] { return target.status(); });
  return AnswerWithView(
      call, kMethod, PublishedViewOf(index_, *target),
      [this, target = *target] { return ResolvedViewOf(index_, target); }, respond);
}

grpc::ServerUnaryReactor* WorkloadMapService::ServeListWorkloads(
    const UnaryCall& call, const v1::ListWorkloadsRequest* request,
    v1::ListWorkloadsResponse* response) {
  return RunHere(call, "ListWorkloads", [&]() -> absl::Status {
    if (!ready_) return NotReadyError();
    if (request->page_size() < 0) return absl::InvalidArgumentError("page_size is negative");
    int page_size = request->page_size() == 0 ? 100 : request->page_size();
    page_size = std::min(page_size, options_.max_page_size);
    auto filter = MakeFilter(index_, kind_names_, request->cluster(), request->namespace_(),
                             request->kinds(), request->statuses(), request->label_selector());
    if (!filter.ok()) return filter.status();
    std::string after;
    if (!request->page_token().empty()) {
      auto key = DecodePageToken(request->page_token());
      if (!key.ok()) return key.status();
      after = *std::move(key);
    }
    uint64_t revision = index_.revision();
    std::vector<std::pair<std::string, std::shared_ptr<const WorkloadView>>> rows;
    for (auto& view : index_.List()) {
      if (!filter->Matches(index_, kind_names_, *view)) continue;
      std::string key = SortKey(*view);
      if (!after.empty() && !Newer(after, key)) continue;
      rows.emplace_back(std::move(key), std::move(view));
    }
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return Newer(a.first, b.first); });
    absl::Time now = absl::Now();
    for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(page_size); ++i) {
      v1::WorkloadSummary* row = response->add_workloads();
      *row = rows[i].second->summary;
      row->set_age_seconds(AgeSeconds(row->creation_timestamp(), now));
    }
    if (rows.size() > static_cast<size_t>(page_size)) {
      response->set_next_page_token(EncodePageToken(rows[page_size - 1].first));
    }
    response->set_revision(revision);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* WorkloadMapService::ServeMutatePodSpecs(
    const UnaryCall& call, const v1::MutatePodSpecsRequest* request,
    v1::MutatePodSpecsResponse* response) {
  return Offload(call, "MutatePodSpecs", [this, request, response]() -> absl::Status {
    auto edit = ToEdit(*request);
    if (!edit.ok()) return edit.status();
    Json object;
    Target target;
    if (request->has_ref()) {
      auto found = FindTarget(index_, kind_names_, request->ref(), "ref");
      if (!found.ok()) return found.status();
      target = *found;
      auto cached = CachedObjectOf(target);
      if (!cached.ok()) return cached.status();
      object = *(*cached)->Document();
    } else if (request->has_inline_()) {
      if (request->apply()) {
        return absl::InvalidArgumentError("apply: only a ref target can be applied");
      }
      auto parsed = ParseJsonField(request->inline_().object_json(), "inline.object_json");
      if (!parsed.ok()) return parsed.status();
      object = *std::move(parsed);
      auto cluster = PickCluster(index_, "");
      if (!cluster.ok()) return cluster.status();
      auto gvk = GvkOf(object, "inline.object_json");
      if (!gvk.ok()) return gvk.status();
      target.cluster = *cluster;
      target.gvk = *gvk;
    } else {
      return absl::InvalidArgumentError("ref or inline is required");
    }
    auto def = DefinitionFor(*target.cluster, target.gvk);
    if (!def.ok()) return def.status();
    auto mutated = resolution::EditWorkload(**def, engine_, object, *edit);
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
        bytes > static_cast<size_t>(options_.max_message_bytes)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the answer (the mutated object and its patch) would be ", bytes,
                       " bytes, more than the ", options_.max_message_bytes,
                       " a message may have (--max-message-bytes); nothing was applied"));
    }
    if (!request->apply()) return absl::OkStatus();
    // Guard against a concurrent change: the patch applies only to the
    // version it was computed from.
    Json guarded = Json::array();
    guarded.push_back({{"op", "test"},
                       {"path", "/metadata/resourceVersion"},
                       {"value", FindString(object, {"metadata", "resourceVersion"})}});
    for (const Json& op : patch) guarded.push_back(op);
    auto rv = target.cluster->Patch(target.gvk, FindString(object, {"metadata", "namespace"}),
                                    FindString(object, {"metadata", "name"}), guarded);
    if (!rv.ok()) return rv.status();
    response->set_applied(true);
    response->set_resource_version(*rv);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* WorkloadMapService::ServeGetGangInstructions(
    const UnaryCall& call, const v1::GetGangInstructionsRequest* request,
    v1::GetGangInstructionsResponse* response) {
  const char* kMethod = "GetGangInstructions";
  if (request->has_inline_pod()) {
    return Offload(call, kMethod, [this, request, response]() -> absl::Status {
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
      auto resolved = ResolveInline(engine_, **cluster, in, true, options_.max_inline_objects);
      if (!resolved.ok()) return resolved.status();
      *response->mutable_gang() = resolved->gang();
      *response->mutable_top_owner() = resolved->ref();
      std::string name = FindString(*pod, {"metadata", "name"});
      for (const auto& a : resolved->gang().assignments()) {
        if (a.pod() == name) *response->mutable_assignment() = a;
      }
      if (response->assignment().pod().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("inline_pod.pod_json: pod ", name,
                         " belongs to no component of its top owner's definition"));
      }
      return absl::OkStatus();
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
  auto respond = [for_pod, ref, response](const WorkloadView& view) -> absl::Status {
    const v1::ResolvedWorkload& resolved = *view.resolved;
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
  return AnswerWithView(
      call, kMethod, PublishedViewOf(index_, *target),
      [this, target = *target] { return ResolvedViewOf(index_, target); }, respond);
}

grpc::ServerUnaryReactor* WorkloadMapService::ServeListDefinitions(
    const UnaryCall& call, const v1::ListDefinitionsRequest* request,
    v1::ListDefinitionsResponse* response) {
  return RunHere(call, "ListDefinitions", [&]() -> absl::Status {
    auto cluster = PickCluster(index_, "");
    if (!cluster.ok()) return cluster.status();
    auto registry = (*cluster)->definitions();
    if (!registry) return absl::UnavailableError("definitions are not loaded yet");
    for (const auto& def : registry->All()) {
      v1::DefinitionInfo* info = response->add_definitions();
      info->set_name(def->name);
      info->set_origin(definitions::OriginName(def->origin));
      info->set_source(def->source);
      if (def->root.kind) {
        info->mutable_root_kind()->set_group(def->root.kind->group);
        info->mutable_root_kind()->set_version(def->root.kind->version);
        info->mutable_root_kind()->set_kind(def->root.kind->kind);
        info->set_synced((*cluster)
                             ->KindProblem({def->root.kind->group, def->root.kind->version,
                                            def->root.kind->kind})
                             .empty());
      }
      info->add_components(def->root.name);
      for (const auto& child : def->children) info->add_components(child.name);
      info->set_gang_scheduling(!def->gang.empty());
    }
    auto add_rejected = [&](const definitions::Registry::Rejected& r) {
      v1::RejectedDefinition* out = response->add_rejected();
      out->set_name(r.name);
      out->set_source(r.source);
      for (const Finding& f : r.findings) AddFinding(f, out->mutable_findings());
    };
    for (const auto& r : registry->rejected()) add_rejected(r);
    for (const auto& r : (*cluster)->rejected_definitions()) add_rejected(r);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* WorkloadMapService::ServeValidateDefinition(
    const UnaryCall& call, const v1::ValidateDefinitionRequest* request,
    v1::ValidateDefinitionResponse* response) {
  return Offload(call, "ValidateDefinition", [this, request, response]() -> absl::Status {
    if (request->definition_yaml().empty()) {
      return absl::InvalidArgumentError("definition_yaml is empty");
    }
    auto add = [&](const Finding& f) { AddFinding(f, response->mutable_findings()); };
    auto docs = ParseYamlDocuments(request->definition_yaml());
    if (!docs.ok()) {
      add({Finding::Severity::kError, "", std::string(docs.status().message())});
      return absl::OkStatus();
    }
    if (docs->empty()) add({Finding::Severity::kError, "", "no document"});
    for (size_t i = 0; i < docs->size(); ++i) {
      auto parsed = definitions::ParseDefinition((*docs)[i], definitions::Origin::kFile,
                                                 absl::StrCat("document ", i + 1));
      std::vector<Finding> findings = parsed.findings;
      if (parsed.definition) {
        response->add_names(parsed.definition->name);
        std::vector<Finding> compile_findings;
        (void)definitions::CompileDefinition(*parsed.definition, engine_, &compile_findings);
        findings.insert(findings.end(), compile_findings.begin(), compile_findings.end());
      }
      for (Finding& f : findings) {
        if (docs->size() > 1) f.path = absl::StrCat("[", i, "].", f.path);
        add(f);
      }
    }
    bool valid = true;
    for (const auto& f : response->findings()) valid = valid && f.severity() != "error";
    response->set_valid(valid);
    return absl::OkStatus();
  });
}

// ---- WatchWorkloads -------------------------------------------------------

// Writes serialized events: the method is registered raw so that it parses
// its request itself.
class WorkloadMapService::WatchReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  WatchReactor(WorkloadMapService& service, grpc::CallbackServerContext* context,
               const grpc::ByteBuffer& request_bytes)
      : service_(service), context_(context) {
    v1::WatchWorkloadsRequest request;
    if (absl::Status parsed = ParseRequest(request_bytes, &request); !parsed.ok()) {
      finished_ = true;
      Finish(ToGrpcStatus(parsed));
      return;
    }
    include_pods_ = request.include_pods();
    if (!service.ready_) {
      finished_ = true;
      Finish(ToGrpcStatus(NotReadyError()));
      return;
    }
    auto filter = MakeFilter(service.index_, service.kind_names_, request.cluster(),
                             request.namespace_(), request.kinds(), {}, request.label_selector());
    if (!filter.ok()) {
      finished_ = true;
      Finish(ToGrpcStatus(filter.status()));
      return;
    }
    filter_ = *std::move(filter);
    std::unique_lock lock(mu_);
    auto subscription = service.index_.Subscribe(
        [this](const WorkloadEvent& event) { OnEvent(event); }, request.resume_revision());
    if (!subscription.ok()) {
      finished_ = true;
      Finish(ToGrpcStatus(subscription.status()));
      return;
    }
    subscription_ = subscription->id;
    for (const auto& view : subscription->views) {
      if (filter_.Matches(service.index_, service.kind_names_, *view)) {
        queue_.push_back(Event(v1::WorkloadEvent::ADDED, view->revision, *view));
      }
    }
    for (const WorkloadEvent& event : subscription->backlog) {
      if (filter_.Matches(service.index_, service.kind_names_, *event.view)) {
        queue_.push_back(Event(event.type, event.revision, *event.view));
      }
    }
    v1::WorkloadEvent synced;
    synced.set_type(v1::WorkloadEvent::SYNCED);
    synced.set_revision(subscription->revision);
    queue_.push_back(std::move(synced));
    WriteNextLocked();
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
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client"));
  }

  void OnDone() override {
    if (subscription_ != 0) service_.index_.Unsubscribe(subscription_);
    delete this;
  }

 private:
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
};

grpc::ServerWriteReactor<grpc::ByteBuffer>* WorkloadMapService::WatchWorkloads(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return new WatchReactor(*this, context, *request);
}

}  // namespace wm::rpc
