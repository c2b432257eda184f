#include "server/index/workload_index.h"

#include <algorithm>
#include <condition_variable>
#include <random>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/common/cpus.h"
#include "server/common/json_path.h"
#include "server/resolution/resolver.h"

namespace wm::index {
namespace {

namespace v1 = workloadmap::v1;

bool SameView(const WorkloadView& a, const WorkloadView& b) {
  if (a.labels != b.labels || a.error != b.error) return false;
  if (!a.resolved || !b.resolved) return a.resolved == b.resolved;
  return google::protobuf::util::MessageDifferencer::Equals(*a.resolved, *b.resolved);
}

int64_t Gpus(const v1::ResourceList& resources) {
  int64_t gpus = 0;
  for (const auto& [resource, quantity] : resources.quantities()) {
    if (absl::EndsWith(resource, "/gpu")) gpus += quantity;
  }
  return gpus;
}

// One row per (component, instance) of every pod-bearing component below
// `component`, summed over the parent's instances, in tree order; one row
// with the error for each component that could not be resolved.
void CollectComponents(const v1::Component& component, v1::WorkloadSummary& row) {
  if (component.has_error()) {
    bool listed = std::any_of(row.components().begin(), row.components().end(),
                              [&](const v1::ComponentSummary& s) {
                                return s.name() == component.name() && !s.error().empty();
                              });
    if (listed) return;  // a copy under another instance of its parent
    v1::ComponentSummary* summary = row.add_components();
    summary->set_name(component.name());
    summary->mutable_replicas();
    summary->set_error(
        absl::StrCat(component.error().field_path(), ": ", component.error().message()));
    return;
  }
  for (const v1::ComponentInstance& instance : component.instances()) {
    if (component.has_pod_definition()) {
      v1::ComponentSummary* summary = nullptr;
      for (v1::ComponentSummary& existing : *row.mutable_components()) {
        if (existing.name() == component.name() && existing.instance_id() == instance.id()) {
          summary = &existing;
        }
      }
      if (summary == nullptr) {
        summary = row.add_components();
        summary->set_name(component.name());
        summary->set_instance_id(instance.id());
      }
      v1::ReplicaCounts* counts = summary->mutable_replicas();
      counts->set_desired(counts->desired() + instance.replicas().desired());
      counts->set_current(counts->current() + instance.replicas().current());
      counts->set_ready(counts->ready() + instance.replicas().ready());
      summary->set_gpus(summary->gpus() + Gpus(instance.resources()));
    }
    for (const v1::Component& child : instance.children()) CollectComponents(child, row);
  }
}

void TrimComponent(v1::Component* component, bool include_pods, int pod_limit) {
  for (v1::ComponentInstance& instance : *component->mutable_instances()) {
    if (!include_pods) {
      instance.clear_pods();
    } else if (pod_limit > 0 && instance.pods_size() > pod_limit) {
      // As the resolver's own limit: keep the unhealthy pods first, then
      // the others, and list the kept ones in their original order.
      const auto& pods = instance.pods();
      std::vector<int> order(pods.size());
      for (int i = 0; i < pods.size(); ++i) order[i] = i;
      std::stable_partition(order.begin(), order.end(), [&](int i) {
        return !pods[i].ready() && pods[i].phase() != "Succeeded";
      });
      order.resize(pod_limit);
      std::sort(order.begin(), order.end());
      google::protobuf::RepeatedPtrField<v1::Pod> kept(instance.GetArena());
      for (int i : order) *kept.Add() = pods[i];
      instance.mutable_pods()->Swap(&kept);
    }
    for (v1::Component& child : *instance.mutable_children()) {
      TrimComponent(&child, include_pods, pod_limit);
    }
  }
}

}  // namespace

v1::WorkloadSummary Summarize(const WorkloadView& view) {
  v1::WorkloadSummary row;
  if (view.resolved) {
    const v1::ResolvedWorkload& r = *view.resolved;
    *row.mutable_ref() = r.ref();
    row.set_definition(r.definition().name());
    row.set_phase(r.status().phase());
    *row.mutable_matched_statuses() = r.status().matched_statuses();
    CollectComponents(r.root(), row);
    row.set_gpus(Gpus(r.resources()));
  } else {
    v1::ObjectRef* ref = row.mutable_ref();
    ref->set_cluster(view.id.cluster);
    ref->set_namespace_(view.namespace_);
    ref->set_group(view.id.gvk.group);
    ref->set_version(view.id.gvk.version);
    ref->set_kind(view.id.gvk.kind);
    ref->set_name(view.name);
    ref->set_uid(view.uid);
    row.set_error(std::string(view.error.message()));
  }
  row.set_creation_timestamp(view.creation_timestamp);
  return row;
}

WorkloadIndex::WorkloadIndex(expressions::Engine& engine, Options options)
    : engine_(engine), options_(options), pod_trees_(options.pod_tree_cache_bytes) {
  // Revisions start at a random point of [2^62, 2^63), so a revision from
  // an earlier process, or from another replica behind the same Service,
  // falls outside this one's history (odds about 10^4 in 2^62) and the client
  // is told to start over, never given wrong events. A time-based start
  // would let two replicas started moments apart overlap.
  std::random_device random;
  revision_ = (uint64_t{1} << 62) |
              ((static_cast<uint64_t>(random()) << 32 | random()) & ((uint64_t{1} << 62) - 1));
  oldest_resumable_ = revision_;
}

WorkloadIndex::~WorkloadIndex() { Stop(); }

void WorkloadIndex::AddCluster(Cluster* cluster) { clusters_.push_back(cluster); }

void WorkloadIndex::Start() {
  int threads = options_.resolver_threads > 0 ? options_.resolver_threads
                                              : std::min(4, std::max(1, AvailableCpus()));
  helper_count_ = threads - 1;
  if (helper_count_ > 0) helpers_ = std::make_unique<WorkPool>(helper_count_);
  resolver_ = std::thread([this] { Run(); });
}

void WorkloadIndex::Stop() {
  {
    std::unique_lock lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (resolver_.joinable()) resolver_.join();
  helpers_.reset();
}

Cluster* WorkloadIndex::FindCluster(const std::string& name) const {
  for (Cluster* c : clusters_) {
    if (c->name() == name) return c;
  }
  return nullptr;
}

void WorkloadIndex::OnChange(const std::string& cluster, const Gvk& gvk,
                             const kube::Change& change) {
  std::unique_lock lock(queue_mu_);
  // The old object's chain matters when an owner reference changed.
  const bool moved = change.old_object && change.new_object &&
                     change.old_object->controller_uid() != change.new_object->controller_uid();
  if (moved) queue_.push_back({cluster, gvk, change.old_object});
  queue_.push_back({cluster, gvk, change.new_object ? change.new_object : change.old_object,
                    moved || !change.old_object || !change.new_object});
  queue_cv_.notify_all();
}

void WorkloadIndex::Resync(const std::string& cluster) {
  std::unique_lock lock(queue_mu_);
  resyncs_.push_back(cluster);
  queue_cv_.notify_all();
}

bool WorkloadIndex::Covered(const Cluster& cluster, const Gvk& gvk) const {
  auto registry = cluster.definitions();
  if (!registry) return false;
  auto def = registry->ForKind(gvk);
  // Ambiguous or uncompilable definitions still cover the kind: the
  // workload is shown with the error.
  return def.ok() || !absl::IsNotFound(def.status());
}

bool WorkloadIndex::InsideCoveredWorkload(const Cluster& cluster,
                                          const kube::CachedObject& object) const {
  bool inside = false;
  cluster.view().ForEachControllerOwner(object, [&](const kube::ClusterView::Found& owner) {
    inside = Covered(cluster, owner.gvk);
    return !inside;
  });
  return inside;
}

void WorkloadIndex::Affected(const Pending& change, std::vector<WorkloadKey>* out) const {
  const Cluster* cluster = FindCluster(change.cluster);
  if (cluster == nullptr || !change.object) return;
  if (Covered(*cluster, change.gvk))
    out->push_back({change.cluster, change.gvk, change.object->key()});
  // Whether the objects below are listed at the top depends on this one
  // (an owner that arrives after its children, or leaves before them).
  if (change.structural) {
    for (const auto& found : cluster->view().Descendants(change.object->uid())) {
      if (Covered(*cluster, found.gvk)) {
        out->push_back({change.cluster, found.gvk, found.object->key()});
      }
    }
  }
  cluster->view().ForEachControllerOwner(
      *change.object, [&](const kube::ClusterView::Found& owner) {
        if (Covered(*cluster, owner.gvk)) {
          out->push_back({change.cluster, owner.gvk, owner.object->key()});
        }
        return true;
      });
}

void WorkloadIndex::Run() {
  for (;;) {
    std::vector<Pending> batch;
    std::vector<std::string> resyncs;
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !resyncs_.empty(); });
      if (stopping_) return;
      batch.swap(queue_);
      resyncs.swap(resyncs_);
      busy_ = true;
    }
    // Every workload to resolve again, once each, in key order. (A sorted
    // vector: a start or relist brings hundreds of thousands of keys, which
    // a std::set would insert one tree node at a time.)
    std::vector<WorkloadKey> keys;
    for (const std::string& name : resyncs) {
      Cluster* cluster = FindCluster(name);
      if (cluster == nullptr) continue;
      {
        std::unique_lock lock(mu_);
        for (const auto& [key, view] : views_) {
          if (key.cluster == name) keys.push_back(key);
        }
      }
      for (const auto& [gvk, store] : cluster->view().Stores()) {
        if (!Covered(*cluster, gvk)) continue;
        for (const auto& object : store->List()) keys.push_back({name, gvk, object->key()});
      }
    }
    for (const Pending& change : batch) Affected(change, &keys);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::vector<std::shared_ptr<WorkloadView>> views = ResolveBatch(keys);
    for (size_t i = 0; i < keys.size(); ++i) Publish(keys[i], std::move(views[i]));
    {
      // Counted before going idle, so that WaitForIdle() sees the batch.
      std::unique_lock lock(mu_);
      counters_.changes += batch.size();
    }
    std::unique_lock lock(queue_mu_);
    busy_ = false;
    if (queue_.empty() && resyncs_.empty()) queue_cv_.notify_all();
  }
}

std::shared_ptr<WorkloadView> WorkloadIndex::ResolveKey(const WorkloadKey& key) {
  Cluster* cluster = FindCluster(key.cluster);
  auto store = cluster->view().StoreFor(key.gvk);
  auto object = store ? store->Get(key.key) : nullptr;
  if (!object || !Covered(*cluster, key.gvk) || InsideCoveredWorkload(*cluster, *object)) {
    // Gone, not covered, or inside a covered workload (a JobSet's Jobs, a
    // Job's pods): only the workloads at the top are kept, the rest is
    // resolved on request (ResolveNow). Watches and lists carry the top
    // only, and a cluster's pods would otherwise each hold a view.
    return nullptr;
  }
  return Resolve(*cluster, key.gvk, std::move(object));
}

std::vector<std::shared_ptr<WorkloadView>> WorkloadIndex::ResolveBatch(
    const std::vector<WorkloadKey>& keys) {
  std::vector<std::shared_ptr<WorkloadView>> views(keys.size());
  // Helpers only for batches worth a hand-off (a start, a relist, a
  // definition change); a single change is resolved here.
  ForEachIndex(helpers_.get(), helper_count_, keys.size(), [&](size_t i) {
    views[i] = ResolveKey(keys[i]);
    return true;
  });
  return views;
}

void CopyTrimmed(const v1::ResolvedWorkload& from, bool include_pods, int pod_limit,
                 v1::ResolvedWorkload* to) {
  *to = from;
  TrimPods(include_pods, pod_limit, to);
}

void TrimPods(bool include_pods, int pod_limit, v1::ResolvedWorkload* workload) {
  TrimComponent(workload->mutable_root(), include_pods, pod_limit);
}

std::shared_ptr<WorkloadView> WorkloadIndex::Resolve(
    const Cluster& cluster, const Gvk& gvk, std::shared_ptr<const kube::CachedObject> object) {
  auto view = std::make_shared<WorkloadView>();
  view->id = {cluster.name(), gvk, object->key()};
  std::shared_ptr<const Json> document = object->Document();
  view->namespace_ = FindString(*document, {"metadata", "namespace"});
  view->name = FindString(*document, {"metadata", "name"});
  view->uid = object->uid();
  view->creation_timestamp = FindString(*document, {"metadata", "creationTimestamp"});
  if (const Json* labels = Find(*document, {"metadata", "labels"}); labels && labels->is_object()) {
    for (const auto& [k, v] : labels->items()) {
      if (v.is_string()) view->labels[k] = v.get<std::string>();
    }
  }

  auto def = cluster.definitions()->ForKind(gvk);
  if (!def.ok()) {
    view->error = def.status();
  } else {
    std::vector<std::shared_ptr<const Json>> held;
    resolution::WorkloadInput input;
    input.object = document.get();
    std::vector<kube::ClusterView::Found> descendants = cluster.view().Descendants(object->uid());
    const bool keep_trees = descendants.size() >= kPodTreeCacheMinObjects;
    for (const auto& found : descendants) {
      held.push_back(keep_trees ? pod_trees_.Document(found.object) : found.object->Document());
      (found.gvk == PodGvk() ? input.pods : input.owners).push_back(held.back().get());
    }
    resolution::ResolveOptions options;
    options.cluster = cluster.name();
    auto resolved = resolution::ResolveWorkload(**def, engine_, input, options);
    if (resolved.ok()) {
      view->resolved = std::make_shared<const v1::ResolvedWorkload>(*std::move(resolved));
      v1::ResolveWorkloadResponse without_pods;
      CopyTrimmed(*view->resolved, false, 0, without_pods.mutable_workload());
      view->resolve_response_without_pods = without_pods.SerializeAsString();
    } else {
      view->error = resolved.status();
    }
  }
  view->summary = Summarize(*view);
  // A workload its definition failed on still names the definition.
  if (def.ok() && !view->resolved) view->summary.set_definition((*def)->definition->name);
  std::unique_lock lock(mu_);
  ++counters_.resolutions;
  if (!view->error.ok()) ++counters_.resolution_errors;
  return view;
}

void WorkloadIndex::Publish(const WorkloadKey& key, std::shared_ptr<WorkloadView> view) {
  std::unique_lock lock(mu_);
  auto it = views_.find(key);
  WorkloadEvent event;
  if (!view) {
    if (it == views_.end()) return;
    event = {v1::WorkloadEvent::DELETED, ++revision_, it->second};
    views_.erase(it);
    deletions_.push_back(event);
    if (deletions_.size() > options_.history) {
      oldest_resumable_ = deletions_.front().revision;
      deletions_.pop_front();
    }
  } else {
    if (it != views_.end() && SameView(*it->second, *view)) return;
    view->revision = ++revision_;
    view->added_revision = it == views_.end() ? revision_ : it->second->added_revision;
    view->changed = absl::Now();
    event = {it == views_.end() ? v1::WorkloadEvent::ADDED : v1::WorkloadEvent::MODIFIED, revision_,
             view};
    views_[key] = std::move(view);
  }
  for (const auto& [id, listener] : listeners_) listener(event);
}

std::shared_ptr<const WorkloadView> WorkloadIndex::Get(const WorkloadKey& key) const {
  std::unique_lock lock(mu_);
  auto it = views_.find(key);
  return it == views_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const WorkloadView>> WorkloadIndex::List() const {
  std::unique_lock lock(mu_);
  std::vector<std::shared_ptr<const WorkloadView>> out;
  out.reserve(views_.size());
  for (const auto& [key, view] : views_) out.push_back(view);
  return out;
}

uint64_t WorkloadIndex::revision() const {
  std::unique_lock lock(mu_);
  return revision_;
}

bool WorkloadIndex::Idle() const {
  std::unique_lock lock(queue_mu_);
  return !busy_ && queue_.empty() && resyncs_.empty();
}

void WorkloadIndex::WaitForIdle() const {
  std::unique_lock lock(queue_mu_);
  queue_cv_.wait(lock, [&] { return stopping_ || (!busy_ && queue_.empty() && resyncs_.empty()); });
}

absl::StatusOr<std::shared_ptr<const WorkloadView>> WorkloadIndex::ResolveNow(
    const WorkloadKey& key) {
  Cluster* cluster = FindCluster(key.cluster);
  if (cluster == nullptr) return absl::NotFoundError("no such cluster: " + key.cluster);
  auto store = cluster->view().StoreFor(key.gvk);
  auto object = store ? store->Get(key.key) : nullptr;
  if (!object) return absl::NotFoundError(key.gvk.kind + " " + key.key + " not found");
  return Resolve(*cluster, key.gvk, std::move(object));
}

absl::StatusOr<WorkloadIndex::Subscription> WorkloadIndex::Subscribe(Listener listener,
                                                                     uint64_t resume_after) {
  std::unique_lock lock(mu_);
  Subscription s;
  s.revision = revision_;
  if (resume_after != 0) {
    if (resume_after > revision_) {
      return absl::OutOfRangeError(absl::StrCat(
          "revision ", resume_after, " is ahead of the daemon's current revision ", revision_,
          " (a revision of an earlier daemon process, or not one this daemon issued); watch "
          "again without resume_revision"));
    }
    if (resume_after < oldest_resumable_) {
      return absl::OutOfRangeError(absl::StrCat(
          "revision ", resume_after, " is no longer in the daemon's history (", oldest_resumable_,
          "..", revision_, "); watch again without resume_revision"));
    }
    for (const WorkloadEvent& e : deletions_) {
      if (e.revision > resume_after && e.view->added_revision <= resume_after) {
        s.backlog.push_back(e);
      }
    }
    for (const auto& [key, view] : views_) {
      if (view->revision <= resume_after) continue;
      s.backlog.push_back({view->added_revision > resume_after ? v1::WorkloadEvent::ADDED
                                                               : v1::WorkloadEvent::MODIFIED,
                           view->revision, view});
    }
    std::sort(
        s.backlog.begin(), s.backlog.end(),
        [](const WorkloadEvent& a, const WorkloadEvent& b) { return a.revision < b.revision; });
  } else {
    for (const auto& [key, view] : views_) s.views.push_back(view);
  }
  s.id = next_listener_++;
  listeners_[s.id] = std::move(listener);
  return s;
}

void WorkloadIndex::Unsubscribe(int id) {
  std::unique_lock lock(mu_);
  listeners_.erase(id);
}

WorkloadIndex::Counters WorkloadIndex::counters() const {
  std::unique_lock lock(mu_);
  return counters_;
}

}  // namespace wm::index
