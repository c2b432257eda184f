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

void Informer::Stop() {
  reflector_.Stop();
  if (reflector_thread_.joinable()) reflector_thread_.join();
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (dispatch_thread_.joinable()) dispatch_thread_.join();
}

void Informer::Enqueue(std::vector<Change> changes) {
  absl::MutexLock lock(&mu_);
  for (Change& change : changes) queue_.push_back(std::move(change));
}

size_t Informer::PendingChanges() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void Informer::WaitForIdle() const {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](const Informer* self)
           ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->queue_.empty() && !self->delivering_; },
      this));
}

void Informer::Dispatch() {
  for (;;) {
    Change change;
    {
      absl::MutexLock lock(&mu_);
      delivering_ = false;
      mu_.Await(absl::Condition(
          +[](Informer* self)
               ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->stopping_ || !self->queue_.empty(); },
          this));
      if (stopping_) return;
      change = std::move(queue_.front());
      queue_.pop_front();
      delivering_ = true;
    }
    for (const Handler& handler : handlers_) handler(change);
  }
}

}  // namespace wm::kube
