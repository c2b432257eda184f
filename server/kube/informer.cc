#include "server/kube/informer.h"

namespace wm::kube {

Informer::Informer(const ApiClient& client, ApiResource resource, ReflectorOptions options)
    : reflector_(client, std::move(resource), std::move(options), &store_,
                 [this](std::vector<Change> changes) { Enqueue(std::move(changes)); }) {}

Informer::~Informer() { Stop(); }

void Informer::AddHandler(Handler handler) { handlers_.push_back(std::move(handler)); }

void Informer::Start() {
  dispatch_thread_ = std::thread([this] { Dispatch(); });
  reflector_thread_ = std::thread([this] { reflector_.Run(); });
}

void Informer::RequestStop() { reflector_.Stop(); }

void Informer::Stop() {
  reflector_.Stop();
  if (reflector_thread_.joinable()) reflector_thread_.join();
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (dispatch_thread_.joinable()) dispatch_thread_.join();
}

void Informer::Enqueue(std::vector<Change> changes) {
  std::unique_lock lock(mu_);
  for (Change& change : changes) queue_.push_back(std::move(change));
  changed_.notify_all();
}

size_t Informer::PendingChanges() const {
  std::unique_lock lock(mu_);
  return queue_.size();
}

void Informer::WaitForIdle() const {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return queue_.empty() && !delivering_; });
}

void Informer::Dispatch() {
  for (;;) {
    Change change;
    {
      std::unique_lock lock(mu_);
      delivering_ = false;
      changed_.notify_all();
      changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      change = std::move(queue_.front());
      queue_.pop_front();
      delivering_ = true;
    }
    for (const Handler& handler : handlers_) handler(change);
  }
}

}  // namespace wm::kube
