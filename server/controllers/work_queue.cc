#include "server/controllers/work_queue.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace wm::controllers {

void WorkQueue::Add(const std::string& key) {
  std::unique_lock lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_ || dirty_.contains(key)) return;
  dirty_.insert(key);
  if (processing_.contains(key)) return;  // queued again by Done
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::AddAfter(const std::string& key, absl::Duration delay) {
  std::unique_lock lock(mu_);
  if (delay <= absl::ZeroDuration()) {
    AddLocked(key);
    return;
  }
  if (shutting_down_) return;
  delayed_.emplace(absl::Now() + delay, key);
  // A waiting Get may need to wake earlier than it planned.
  cv_.notify_all();
}

void WorkQueue::PromoteDelayedLocked(absl::Time now) {
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    std::string key = std::move(delayed_.begin()->second);
    delayed_.erase(delayed_.begin());
    AddLocked(key);
  }
}

std::optional<std::string> WorkQueue::Get(absl::Time deadline) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (shutting_down_) return std::nullopt;
    absl::Time now = absl::Now();
    PromoteDelayedLocked(now);
    if (!queue_.empty()) {
      std::string key = std::move(queue_.front());
      queue_.pop_front();
      dirty_.erase(key);
      processing_.insert(key);
      return key;
    }
    if (now >= deadline) return std::nullopt;
    absl::Time wake = deadline;
    if (!delayed_.empty()) wake = std::min(wake, delayed_.begin()->first);
    if (wake == absl::InfiniteFuture()) {
      cv_.wait(lock);
    } else {
      cv_.wait_for(lock, absl::ToChronoNanoseconds(std::max(wake - now, absl::Milliseconds(1))));
    }
  }
}

void WorkQueue::Done(const std::string& key) {
  std::unique_lock lock(mu_);
  processing_.erase(key);
  if (dirty_.contains(key) && !shutting_down_) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::unique_lock lock(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::shutting_down() const {
  std::unique_lock lock(mu_);
  return shutting_down_;
}

size_t WorkQueue::size() const {
  std::unique_lock lock(mu_);
  return queue_.size();
}

}  // namespace wm::controllers
