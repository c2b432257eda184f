#include "server/controllers/catalog_publication.h"

#include <algorithm>

namespace wm::controllers {

CatalogPublication::CatalogPublication(const kube::ApiClient& client,
                                       std::vector<std::pair<std::string, std::string>> documents,
                                       std::function<bool()> may_write, Report report)
    : client_(client),
      documents_(std::move(documents)),
      may_write_(std::move(may_write)),
      report_(std::move(report)) {}

CatalogPublication::~CatalogPublication() { Stop(); }

void CatalogPublication::StartedLeading() {
  std::unique_lock lock(mu_);
  due_ = true;
  wake_.notify_all();
}

void CatalogPublication::Start() {
  thread_ = std::thread([this] { Run(); });
}

void CatalogPublication::Stop() {
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void CatalogPublication::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return due_ || stopping_; });
    if (stopping_) return;
    due_ = false;
    absl::Duration backoff = absl::Seconds(2);
    for (;;) {
      lock.unlock();
      bool done = true;
      if (may_write_()) {
        PublishOptions options;
        options.may_write = may_write_;
        auto results = PublishKartas(client_, documents_, options);
        done = results.ok() &&
               std::none_of(results->begin(), results->end(), [](const PublishedKarta& k) {
                 return k.outcome == PublishedKarta::Outcome::kFailed;
               });
        report_(results);
      }
      lock.lock();
      if (done || stopping_) break;
      // Until the next try, or a Stop.
      wake_.wait_for(lock, absl::ToChronoNanoseconds(backoff), [this] { return stopping_; });
      if (stopping_) return;
      backoff = std::min(backoff * 2, absl::Seconds(60));
    }
  }
}

}  // namespace wm::controllers
