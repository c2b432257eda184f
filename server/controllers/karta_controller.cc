#include "server/controllers/karta_controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/common/json_path.h"
#include "server/controllers/api_writes.h"
#include "server/controllers/karta_status.h"
#include "server/sources/definition_set.h"

namespace wm::controllers {

KartaController::KartaController(const kube::ApiClient& client, const kube::ClusterCache& cache,
                                 expressions::Engine& engine, std::function<bool()> may_write,
                                 Options options)
    : client_(client),
      cache_(cache),
      engine_(engine),
      may_write_(std::move(may_write)),
      options_(std::move(options)),
      retries_(options_.min_backoff, options_.max_backoff),
      recorder_(client, {.component = "workloadmapd", .instance = options_.instance}) {}

KartaController::~KartaController() { Stop(); }

void KartaController::OnChange(const Gvk& gvk, const kube::Change& change) {
  if (!(gvk == sources::KartaGvk())) return;
  const auto& object = change.new_object != nullptr ? change.new_object : change.old_object;
  if (object != nullptr) queue_.Add(object->key());
}

void KartaController::ResyncAll() {
  auto store = cache_.StoreFor(sources::KartaGvk());
  if (store == nullptr) return;
  for (const auto& object : store->List()) queue_.Add(object->key());
}

void KartaController::Start() {
  worker_ = std::thread([this] { Run(); });
}

void KartaController::Stop() {
  queue_.ShutDown();
  if (worker_.joinable()) worker_.join();
}

KartaController::Counts KartaController::counts() const {
  return {label_writes_.load(), status_writes_.load(), events_.load(), failed_.load()};
}

void KartaController::Run() {
  absl::Time next_resync = absl::Now() + options_.resync;
  while (!queue_.shutting_down()) {
    std::optional<std::string> name = queue_.Get(next_resync);
    if (!name) {
      if (absl::Now() >= next_resync) {
        ResyncAll();
        next_resync = absl::Now() + options_.resync;
      }
      continue;
    }
    // A replica that does not lead drops the key: when it starts leading,
    // every Karta is queued again.
    absl::Status status = may_write_() ? Reconcile(*name) : absl::OkStatus();
    if (status.ok()) {
      retries_.Succeeded(*name);
    } else {
      ++failed_;
      Retries::Retry retry = retries_.Failed(*name, status);
      queue_.AddAfter(*name, retry.after);
      if (options_.on_error && retry.new_error) options_.on_error(*name, status);
    }
    queue_.Done(*name);
  }
}

const definitions::CheckedDefinition& KartaController::Check(const std::string& name,
                                                             const std::string& uid,
                                                             int64_t generation,
                                                             const Json& object) {
  auto it = checked_.find(name);
  if (it == checked_.end() || it->second.uid != uid || it->second.generation != generation) {
    Checked checked{uid, generation,
                    definitions::CheckDefinition(object, definitions::Origin::kCluster,
                                                 absl::StrCat("cluster:karta/", name), engine_)};
    it = checked_.insert_or_assign(name, std::move(checked)).first;
  }
  return it->second.result;
}

absl::Status KartaController::Reconcile(const std::string& name) {
  auto store = cache_.StoreFor(sources::KartaGvk());
  auto resource = cache_.ResourceFor(sources::KartaGvk());
  if (store == nullptr || !resource) {
    checked_.clear();
    return absl::OkStatus();  // Kartas are not served: nothing to keep
  }
  std::shared_ptr<const kube::CachedObject> cached = store->Get(name);
  if (cached == nullptr) {
    checked_.erase(name);
    return absl::OkStatus();
  }
  Json object = *cached->Document();
  if (Find(object, {"metadata", "deletionTimestamp"}) != nullptr) return absl::OkStatus();
  const Json* generation_field = Find(object, {"metadata", "generation"});
  int64_t generation = generation_field != nullptr && generation_field->is_number_integer()
                           ? generation_field->get<int64_t>()
                           : 0;

  const definitions::CheckedDefinition& checked = Check(name, cached->uid(), generation, object);
  std::string root_problem = checked.root_kind ? cache_.WhyNotWatchable(*checked.root_kind) : "";
  DesiredKarta desired = Desire(generation, checked, root_problem);

  const std::string path = absl::StrCat(resource->CollectionPath(), "/", name);
  auto absorb = [](const absl::Status& s) {
    return absl::IsNotFound(s) ? absl::OkStatus() : s;  // deleted meanwhile
  };
  if (std::optional<Json> patch = LabelsPatch(object, desired)) {
    if (!may_write_()) return absl::OkStatus();
    absl::StatusOr<Json> written = MergePatch(client_, path, *patch, options_.field_manager);
    if (!written.ok()) return absorb(written.status());
    ++label_writes_;
    object = *std::move(written);  // its resourceVersion guards the status write
  }
  // Read before the status lists them: the findings reported for the first
  // time, once the status that lists them is written.
  std::vector<Finding> fresh = NewFindings(object, desired);
  if (std::optional<Json> patch = StatusPatch(object, desired, absl::Now())) {
    if (!may_write_()) return absl::OkStatus();
    absl::StatusOr<Json> written =
        MergePatch(client_, path + "/status", *patch, options_.field_manager);
    if (!written.ok()) return absorb(written.status());
    ++status_writes_;
    object = *std::move(written);
  } else {
    fresh.clear();  // the status lists them already
  }
  ObjectReference reference{"run.ai/v1alpha1",
                            "Karta",
                            "",
                            name,
                            cached->uid(),
                            FindString(object, {"metadata", "resourceVersion"})};
  for (const Finding& finding : fresh) {
    if (!may_write_()) break;
    // An event that cannot be written is not retried: the status, which
    // lists the finding, is the record; events are the notice.
    absl::Status s =
        recorder_.Warning(reference, finding.is_error() ? "ValidationFailed" : "ValidationWarning",
                          definitions::FindingLine(finding));
    if (!s.ok()) {
      if (options_.on_error) options_.on_error(name, s);
      continue;
    }
    ++events_;
  }
  return absl::OkStatus();
}

}  // namespace wm::controllers
