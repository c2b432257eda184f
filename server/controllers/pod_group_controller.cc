#include "server/controllers/pod_group_controller.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "server/common/json_path.h"
#include "server/common/json_reader.h"
#include "server/controllers/api_writes.h"

namespace wm::controllers {
namespace {

// Queue keys: "group|version|kind|namespace/name" (none of them holds '|').
std::string QueueKey(const index::WorkloadKey& key) {
  return absl::StrCat(key.gvk.group, "|", key.gvk.version, "|", key.gvk.kind, "|", key.key);
}

index::WorkloadKey FromQueueKey(const std::string& cluster, const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, absl::MaxSplits('|', 3));
  parts.resize(4);
  return {cluster, {parts[0], parts[1], parts[2]}, parts[3]};
}

// The CRD of a PodGroup kind, by its conventional name.
std::string CrdPath(const Gvk& gvk) {
  return absl::StrCat("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.",
                      gvk.group);
}

bool TrueAnnotation(const Json& object, const char* key) {
  return FindString(object, {"metadata", "annotations", key}) == "true";
}

}  // namespace

std::vector<Gvk> PodGroupController::KindsToWatch(const Options& options) {
  std::set<Gvk> kinds;
  for (const auto& [name, scheduler] : options.scheduler_names) {
    kinds.insert(PodGroupGvk(scheduler));
  }
  return {kinds.begin(), kinds.end()};
}

PodGroupController::PodGroupController(const kube::ApiClient& client,
                                       const kube::ClusterCache& cache, index::WorkloadIndex& index,
                                       std::string cluster, std::function<bool()> may_write,
                                       Options options)
    : client_(client),
      cache_(cache),
      index_(index),
      cluster_(std::move(cluster)),
      may_write_(std::move(may_write)),
      options_(std::move(options)),
      pod_group_kinds_(KindsToWatch(options_)),
      retries_(options_.min_backoff, options_.max_backoff) {}

PodGroupController::~PodGroupController() { Stop(); }

void PodGroupController::Queue(const index::WorkloadKey& key) { queue_.Add(QueueKey(key)); }

void PodGroupController::OnChange(const Gvk& gvk, const kube::Change& change) {
  // Called for every change of every watched kind (pods included): a
  // lookup in the few kinds computed once.
  if (std::find(pod_group_kinds_.begin(), pod_group_kinds_.end(), gvk) == pod_group_kinds_.end()) {
    return;
  }
  const auto& object = change.new_object != nullptr ? change.new_object : change.old_object;
  if (object == nullptr) return;
  std::shared_ptr<const Json> document = object->Document();
  const Json* owners = Find(*document, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->is_array()) return;
  std::string namespace_ = FindString(*document, {"metadata", "namespace"});
  for (const Json& owner : *owners) {
    Queue({cluster_,
           GvkFromApiVersion(FindString(owner, {"apiVersion"}), FindString(owner, {"kind"})),
           kube::ObjectKey(namespace_, FindString(owner, {"name"}))});
  }
}

void PodGroupController::OnDiscovery() {
  schemas_stale_ = true;
  ResyncAll();
}

void PodGroupController::ResyncAll() {
  for (const auto& view : index_.List()) {
    if (view->id.cluster == cluster_) Queue(view->id);
  }
}

absl::Status PodGroupController::Start() {
  auto subscription = index_.Subscribe(
      [this](const index::WorkloadEvent& event) {
        if (event.view != nullptr && event.view->id.cluster == cluster_) Queue(event.view->id);
      },
      0);
  if (!subscription.ok()) return subscription.status();
  subscription_ = subscription->id;
  for (const auto& view : subscription->views) {
    if (view->id.cluster == cluster_) Queue(view->id);
  }
  worker_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void PodGroupController::Stop() {
  if (subscription_ != 0) index_.Unsubscribe(subscription_);
  subscription_ = 0;
  queue_.ShutDown();
  if (worker_.joinable()) worker_.join();
}

PodGroupController::Counts PodGroupController::counts() const {
  return {creates_.load(), updates_.load(), pod_patches_.load(), failed_.load()};
}

void PodGroupController::Run() {
  absl::Time next_resync = absl::Now() + options_.resync;
  while (!queue_.shutting_down()) {
    std::optional<std::string> item = queue_.Get(next_resync);
    if (!item) {
      if (absl::Now() >= next_resync) {
        ResyncAll();
        next_resync = absl::Now() + options_.resync;
      }
      continue;
    }
    index::WorkloadKey key = FromQueueKey(cluster_, *item);
    if (may_write_() && !Synced()) {
      queue_.AddAfter(*item, absl::Milliseconds(500));
      queue_.Done(*item);
      continue;
    }
    // A replica that does not lead drops the key: when it starts leading,
    // every workload is queued again.
    absl::Status status = may_write_() ? Reconcile(key) : absl::OkStatus();
    if (status.ok()) {
      retries_.Succeeded(*item);
    } else {
      ++failed_;
      Retries::Retry retry = retries_.Failed(*item, status);
      queue_.AddAfter(*item, retry.after);
      if (options_.on_error && retry.new_error) {
        options_.on_error(absl::StrCat(key.gvk.kind, " ", key.key), status);
      }
    }
    queue_.Done(*item);
  }
}

bool PodGroupController::Synced() {
  if (initial_sync_seen_) return true;
  // Every kind listed (or refused: that is said at the write that needs
  // it), then every change of those lists resolved: the daemon's readiness.
  const index::Cluster* cluster = index_.FindCluster(cluster_);
  initial_sync_seen_ = cluster != nullptr && cluster->InitialSyncDone() && index_.Idle();
  return initial_sync_seen_;
}

PodGroupSchema PodGroupController::SchemaOf(GangScheduler scheduler) {
  if (schemas_stale_.exchange(false)) schemas_.clear();
  auto it = schemas_.find(scheduler);
  if (it != schemas_.end()) return it->second;
  PodGroupSchema schema;
  if (scheduler == GangScheduler::kKai) {
    // minSubGroup where the served version's schema has it. A CRD that
    // cannot be read now is taken to be the newest and read again at the
    // next reconcile: a write it refuses (writes are strict) fails and is
    // retried meanwhile, nothing is dropped in silence.
    Gvk gvk = PodGroupGvk(scheduler);
    kube::HttpRequest request;
    request.path = CrdPath(gvk);
    auto response = client_.Do(request);
    absl::StatusOr<Json> crd = response.ok() && response->status == 200
                                   ? ParseJson(response->body)
                                   : absl::UnavailableError("the CRD cannot be read");
    const Json* versions = crd.ok() ? Find(*crd, {"spec", "versions"}) : nullptr;
    if (versions == nullptr || !versions->is_array()) return schema;
    for (const Json& version : *versions) {
      if (FindString(version, {"name"}) != gvk.version) continue;
      schema.min_sub_group = Find(version, {"schema", "openAPIV3Schema", "properties", "spec",
                                            "properties", "minSubGroup"}) != nullptr;
    }
  }
  schemas_[scheduler] = schema;
  return schema;
}

std::string PodGroupController::KaiPriorityClass(const std::string& labelled) {
  // As KAI: the labelled class when it exists, else its default for
  // training ("train"; KAI's per-kind ConfigMap defaults are not read).
  if (!labelled.empty()) {
    kube::HttpRequest request;
    request.path =
        absl::StrCat("/apis/scheduling.k8s.io/v1/priorityclasses/", kube::QueryEscape(labelled));
    auto response = client_.Do(request);
    if (response.ok() && response->status == 200) return labelled;
  }
  return "train";
}

bool PodGroupController::Handles(GangScheduler scheduler, const Gvk& owner_kind,
                                 const Json& top_owner, const Json& pod) const {
  if (scheduler != GangScheduler::kKai) return true;
  if (!options_.kai_native_kinds && KaiHasNativeGrouper(owner_kind)) return false;
  return !TrueAnnotation(top_owner, kKaiSkipAnnotation) && !TrueAnnotation(pod, kKaiSkipAnnotation);
}

std::optional<PodGroupMembership> PodGroupController::MembershipOfNewPod(
    const Json& pod, const std::string& namespace_) const {
  auto scheduler = options_.scheduler_names.find(FindString(pod, {"spec", "schedulerName"}));
  if (scheduler == options_.scheduler_names.end()) return std::nullopt;
  // A controller creates a pod right after its own object, often before the
  // daemon's watch has brought that object: wait for it a little.
  absl::Time deadline = absl::Now() + options_.admission_wait;
  while (true) {
    bool behind = false;
    std::optional<PodGroupMembership> membership =
        TryMembership(pod, namespace_, scheduler->second, &behind);
    if (membership || !behind || absl::Now() >= deadline) return membership;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

std::optional<PodGroupMembership> PodGroupController::TryMembership(const Json& pod,
                                                                    const std::string& namespace_,
                                                                    GangScheduler scheduler,
                                                                    bool* behind) const {
  // Up the controller chain, through the objects the cache holds: the last
  // one found is the top owner (a few levels: Pod, Job, JobSet, and rarely
  // more; a loop of references ends at the bound).
  auto controller_of = [](const Json& object) -> const Json* {
    const Json* owners = Find(object, {"metadata", "ownerReferences"});
    if (owners == nullptr || !owners->is_array()) return nullptr;
    for (const Json& owner : *owners) {
      const Json* controller = Find(owner, {"controller"});
      if (controller != nullptr && controller->is_boolean() && controller->get<bool>()) {
        return &owner;
      }
    }
    return nullptr;
  };
  std::optional<index::WorkloadKey> top;
  std::shared_ptr<const Json> top_owner;
  const Json* reference = controller_of(pod);
  for (int depth = 0; depth < 8 && reference != nullptr; ++depth) {
    Gvk gvk =
        GvkFromApiVersion(FindString(*reference, {"apiVersion"}), FindString(*reference, {"kind"}));
    std::string key = kube::ObjectKey(namespace_, FindString(*reference, {"name"}));
    auto store = cache_.StoreFor(gvk);
    if (store == nullptr) break;  // a kind no definition covers: the chain ends here
    std::shared_ptr<const kube::CachedObject> owner = store->Get(key);
    if (owner == nullptr || owner->uid() != FindString(*reference, {"uid"})) {
      *behind = true;  // not seen yet (or an older object of that name)
      return std::nullopt;
    }
    top = index::WorkloadKey{cluster_, gvk, key};
    top_owner = owner->Document();
    reference = controller_of(*top_owner);
  }
  if (!top) return std::nullopt;
  std::shared_ptr<const index::WorkloadView> view = index_.Get(*top);
  if (view == nullptr) {
    *behind = true;  // not resolved yet
    return std::nullopt;
  }
  if (view->resolved == nullptr) return std::nullopt;
  const auto& groups = view->resolved->gang().pod_groups();
  if (groups.size() != 1 || groups[0].form() != "podGroup") return std::nullopt;
  if (!Handles(scheduler, top->gvk, *top_owner, pod)) return std::nullopt;
  return PodGroupMembership{scheduler, groups[0].name(), ""};
}

absl::Status PodGroupController::EnsurePodGroup(GangScheduler scheduler, const Json& desired) {
  Gvk gvk = PodGroupGvk(scheduler);
  auto resource = cache_.ResourceFor(gvk);
  auto store = cache_.StoreFor(gvk);
  if (!resource || store == nullptr) {
    std::string why = cache_.WhyNotWatchable(gvk);
    return absl::FailedPreconditionError(
        absl::StrCat(GangSchedulerName(scheduler), " PodGroups (", gvk.group, "/", gvk.version,
                     ") cannot be written: ", why.empty() ? "not watched yet" : why));
  }
  if (std::optional<kube::ReflectorHealth> health = cache_.HealthOf(gvk);
      health && !health->has_synced) {
    return absl::FailedPreconditionError(
        absl::StrCat(GangSchedulerName(scheduler), " PodGroups (", gvk.group, "/", gvk.version,
                     ") cannot be written: they cannot be listed: ", health->message));
  }
  std::string namespace_ = FindString(desired, {"metadata", "namespace"});
  std::string name = FindString(desired, {"metadata", "name"});
  std::shared_ptr<const kube::CachedObject> cached = store->Get(kube::ObjectKey(namespace_, name));
  if (!may_write_()) return absl::OkStatus();
  if (cached == nullptr) {
    absl::StatusOr<Json> created =
        Create(client_, resource->CollectionPath(namespace_), desired, options_.field_manager);
    if (absl::IsAlreadyExists(created.status())) {
      // Created by an earlier pass the cache has not seen yet: it exists,
      // and its event queues this workload again, to compare it then.
      return absl::OkStatus();
    }
    if (!created.ok()) return created.status();
    ++creates_;
    return absl::OkStatus();
  }
  std::optional<Json> patch = PodGroupPatch(*cached->Document(), desired);
  if (!patch) return absl::OkStatus();
  absl::StatusOr<Json> patched =
      MergePatch(client_, absl::StrCat(resource->CollectionPath(namespace_), "/", name), *patch,
                 options_.field_manager);
  if (!patched.ok()) return patched.status();
  ++updates_;
  return absl::OkStatus();
}

absl::Status PodGroupController::Reconcile(const index::WorkloadKey& key) {
  std::shared_ptr<const index::WorkloadView> view = index_.Get(key);
  if (view == nullptr || view->resolved == nullptr) return absl::OkStatus();
  const workloadmap::v1::GangInstructions& gang = view->resolved->gang();
  if (gang.pod_groups().empty()) return absl::OkStatus();
  auto owners = cache_.StoreFor(key.gvk);
  auto pods = cache_.StoreFor(PodGvk());
  if (owners == nullptr || pods == nullptr) return absl::OkStatus();
  std::shared_ptr<const kube::CachedObject> owner = owners->Get(key.key);
  if (owner == nullptr) return absl::OkStatus();
  std::shared_ptr<const Json> top_owner = owner->Document();
  if (Find(*top_owner, {"metadata", "deletionTimestamp"}) != nullptr) return absl::OkStatus();
  const std::string namespace_ = FindString(*top_owner, {"metadata", "namespace"});

  // The members of each (scheduler, pod group), by pod.
  std::map<std::pair<GangScheduler, std::string>, std::vector<Member>> groups;
  for (const auto& assignment : gang.assignments()) {
    if (!assignment.error().empty() || assignment.pod_group().empty()) continue;
    std::shared_ptr<const kube::CachedObject> cached =
        pods->Get(kube::ObjectKey(namespace_, assignment.pod()));
    if (cached == nullptr) continue;
    std::shared_ptr<const Json> pod = cached->Document();
    if (Find(*pod, {"metadata", "deletionTimestamp"}) != nullptr) continue;
    auto scheduler = options_.scheduler_names.find(FindString(*pod, {"spec", "schedulerName"}));
    if (scheduler == options_.scheduler_names.end()) continue;
    if (!Handles(scheduler->second, key.gvk, *top_owner, *pod)) continue;
    groups[{scheduler->second, assignment.pod_group()}].push_back({pod, assignment.sub_group()});
  }

  absl::Status first_error;
  for (const auto& [target, members] : groups) {
    const auto& [scheduler, group_name] = target;
    // A lambda may not capture a structured binding before C++20 (clang
    // 14, the fuzz build's compiler, refuses it).
    const std::string& wanted = group_name;
    auto group = std::find_if(gang.pod_groups().begin(), gang.pod_groups().end(),
                              [&wanted](const auto& g) { return g.name() == wanted; });
    if (group == gang.pod_groups().end()) continue;
    PodGroupContext context{.schema = SchemaOf(scheduler)};
    if (scheduler == GangScheduler::kKai) {
      context.kai_priority_class = KaiPriorityClass(group->priority_class_name());
    }
    Json desired = DesiredPodGroup(scheduler, *group, *top_owner, context);
    if (absl::Status s = EnsurePodGroup(scheduler, desired); !s.ok()) {
      if (first_error.ok()) first_error = s;
      continue;  // its pods join once it exists
    }
    for (const Member& member : members) {
      std::optional<Json> patch =
          PodMembershipPatch(scheduler, *member.pod, group_name, member.sub_group);
      if (!patch) continue;
      if (!may_write_()) return absl::OkStatus();
      absl::StatusOr<Json> patched =
          MergePatch(client_,
                     absl::StrCat("/api/v1/namespaces/", namespace_, "/pods/",
                                  FindString(*member.pod, {"metadata", "name"})),
                     *patch, options_.field_manager);
      if (patched.ok()) {
        ++pod_patches_;
      } else if (!absl::IsNotFound(patched.status()) && first_error.ok()) {
        first_error = patched.status();
      }
    }
  }
  return first_error;
}

}  // namespace wm::controllers
