#include "server/kube/cluster_cache.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace wm::kube {

namespace {

const ApiResource& CrdResource() {
  static const ApiResource kCrds{"apiextensions.k8s.io",      "v1",  "CustomResourceDefinition",
                                 "customresourcedefinitions", false, {"list", "watch"}};
  return kCrds;
}

std::vector<Gvk> WithPods(std::vector<Gvk> kinds) {
  kinds.push_back(PodGvk());
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  return kinds;
}

}  // namespace

ClusterCache::ClusterCache(const ApiClient& client, Options options)
    : client_(client), options_(std::move(options)) {}

ClusterCache::~ClusterCache() { Stop(); }

void ClusterCache::AddHandler(Handler handler) { handlers_.push_back(std::move(handler)); }

void ClusterCache::AddDiscoveryHandler(std::function<void()> handler) {
  discovery_handlers_.push_back(std::move(handler));
}

absl::Status ClusterCache::Start(std::vector<Gvk> kinds) {
  {
    std::unique_lock lock(mu_);
    wanted_ = WithPods(std::move(kinds));
  }
  absl::StatusOr<Discovery> discovery = Discovery::Fetch(client_);
  if (!discovery.ok()) return discovery.status();
  ReflectorOptions crd_options = options_.reflector;
  crd_options.namespace_.clear();
  crd_options.label_selector.clear();
  crd_options.shape = ObjectShape::kMetadata;
  crds_ = std::make_unique<Informer>(client_, CrdResource(), crd_options);
  crds_->AddHandler([this](const Change&) { RequestReconcile(); });
  crds_->Start();
  Reconcile();
  manager_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void ClusterCache::SetKinds(std::vector<Gvk> kinds) {
  {
    std::unique_lock lock(mu_);
    wanted_ = WithPods(std::move(kinds));
  }
  RequestReconcile();
}

void ClusterCache::Stop() {
  {
    std::unique_lock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    wake_.notify_all();
  }
  if (manager_.joinable()) manager_.join();
  if (crds_ != nullptr) crds_->RequestStop();
  std::map<Gvk, Entry> informers;
  {
    std::unique_lock lock(mu_);
    informers.swap(informers_);
    ++kinds_generation_;
  }
  for (auto& [gvk, entry] : informers) entry.informer->RequestStop();
  for (auto& [gvk, entry] : informers) entry.informer->Stop();
  if (crds_ != nullptr) crds_->Stop();
}

void ClusterCache::RequestReconcile() {
  std::unique_lock lock(mu_);
  dirty_ = true;
  wake_.notify_all();
}

void ClusterCache::Run() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, absl::ToChronoNanoseconds(options_.rediscovery_interval),
                     [this] { return dirty_ || stopping_; });
      if (stopping_) return;
      dirty_ = false;
    }
    // CRD changes come in bursts (one apply of many files): let the burst
    // settle, then reconcile once.
    absl::SleepFor(absl::Milliseconds(200));
    Reconcile();
  }
}

void ClusterCache::Reconcile() {
  std::unique_lock reconcile_lock(reconcile_mu_);
  absl::StatusOr<Discovery> discovery = Discovery::Fetch(client_);
  if (!discovery.ok()) return;  // keep what runs; the next reconcile retries
  auto discovered = std::make_shared<const Discovery>(*std::move(discovery));
  std::vector<std::shared_ptr<Informer>> stopped;
  {
    std::unique_lock lock(mu_);
    discovery_ = discovered;
    for (const Gvk& gvk : wanted_) {
      std::string problem = discovered->WhyNotWatchable(gvk.group, gvk.version, gvk.kind);
      if (problem.empty()) {
        not_served_.erase(gvk);
        if (!informers_.contains(gvk)) {
          StartInformer(gvk, *discovered->Find(gvk.group, gvk.version, gvk.kind));
        }
        continue;
      }
      not_served_[gvk] = std::move(problem);
      if (auto it = informers_.find(gvk); it != informers_.end()) {
        stopped.push_back(std::move(it->second.informer));
        informers_.erase(it);
        ++kinds_generation_;
      }
    }
    for (auto it = informers_.begin(); it != informers_.end();) {
      if (std::find(wanted_.begin(), wanted_.end(), it->first) == wanted_.end()) {
        stopped.push_back(std::move(it->second.informer));
        it = informers_.erase(it);
        ++kinds_generation_;
      } else {
        ++it;
      }
    }
  }
  // Outside the lock: stopping joins the dispatch thread, whose handlers
  // may read the cache.
  for (std::shared_ptr<Informer>& informer : stopped) informer->RequestStop();
  for (std::shared_ptr<Informer>& informer : stopped) {
    informer->Stop();
    const ApiResource& r = informer->resource();
    Gvk gvk{r.group, r.version, r.kind};
    for (auto& object : informer->store().List()) {
      Change change{EventType::kDeleted, std::move(object), nullptr};
      for (const Handler& handler : handlers_) handler(gvk, change);
    }
  }
  for (const auto& handler : discovery_handlers_) handler();
}

void ClusterCache::StartInformer(const Gvk& gvk, const ApiResource& resource) {
  ReflectorOptions options = options_.reflector;
  options.shape = CachedShapeFor(gvk);
  if (resource.namespaced) {
    options.namespace_ = options_.namespace_;
  }
  options.label_selector = options_.label_selector;
  auto informer = std::make_shared<Informer>(client_, resource, options);
  informer->AddHandler([this, gvk](const Change& change) {
    for (const Handler& handler : handlers_) handler(gvk, change);
  });
  informer->Start();
  informers_[gvk] = Entry{resource, std::move(informer)};
  ++kinds_generation_;
}

std::shared_ptr<const Store> ClusterCache::StoreFor(const Gvk& gvk) const {
  std::unique_lock lock(mu_);
  auto it = informers_.find(gvk);
  if (it == informers_.end()) return nullptr;
  const std::shared_ptr<Informer>& informer = it->second.informer;
  return std::shared_ptr<const Store>(informer, &informer->store());
}

bool ClusterCache::HasSynced(const Gvk& gvk) const {
  std::unique_lock lock(mu_);
  auto it = informers_.find(gvk);
  return it != informers_.end() && it->second.informer->HasSynced();
}

std::vector<KindStatus> ClusterCache::Status() const {
  std::vector<KindStatus> out;
  std::unique_lock lock(mu_);
  for (const Gvk& gvk : wanted_) {
    KindStatus status;
    status.gvk = gvk;
    if (auto it = informers_.find(gvk); it != informers_.end()) {
      status.served = true;
      status.resource = it->second.resource.Name();
      status.health = it->second.informer->Health();
      status.objects = it->second.informer->store().size();
      status.message = status.health.message;
    } else if (auto missing = not_served_.find(gvk); missing != not_served_.end()) {
      status.message = missing->second;
    }
    out.push_back(std::move(status));
  }
  return out;
}

std::optional<ApiResource> ClusterCache::ResourceFor(const Gvk& gvk) const {
  std::unique_lock lock(mu_);
  auto it = informers_.find(gvk);
  if (it == informers_.end()) return std::nullopt;
  return it->second.resource;
}

std::string ClusterCache::PluralFor(const Gvk& gvk) const {
  std::unique_lock lock(mu_);
  auto it = informers_.find(gvk);
  return it == informers_.end() ? "" : it->second.resource.plural;
}

std::optional<ReflectorHealth> ClusterCache::HealthOf(const Gvk& gvk) const {
  std::unique_lock lock(mu_);
  auto it = informers_.find(gvk);
  if (it == informers_.end()) return std::nullopt;
  return it->second.informer->Health();
}

std::string ClusterCache::WhyNotWatchable(const Gvk& gvk) const {
  std::shared_ptr<const Discovery> discovery;
  {
    std::unique_lock lock(mu_);
    discovery = discovery_;
  }
  if (discovery == nullptr) return "not yet discovered";
  return discovery->WhyNotWatchable(gvk.group, gvk.version, gvk.kind);
}

std::vector<std::pair<Gvk, std::shared_ptr<const Store>>> ClusterCache::Stores() const {
  std::vector<std::pair<Gvk, std::shared_ptr<const Store>>> stores;
  std::unique_lock lock(mu_);
  for (const auto& [gvk, entry] : informers_) {
    stores.emplace_back(gvk,
                        std::shared_ptr<const Store>(entry.informer, &entry.informer->store()));
  }
  return stores;
}

void ClusterCache::WaitForIdle() const {
  std::vector<std::shared_ptr<const Informer>> informers;
  {
    std::unique_lock lock(mu_);
    for (const auto& [gvk, entry] : informers_) informers.push_back(entry.informer);
  }
  for (const auto& informer : informers) informer->WaitForIdle();
}

}  // namespace wm::kube
