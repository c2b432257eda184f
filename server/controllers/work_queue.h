#ifndef WM_SERVER_CONTROLLERS_WORK_QUEUE_H_
#define WM_SERVER_CONTROLLERS_WORK_QUEUE_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "absl/time/time.h"

namespace wm::controllers {

// The keys of objects a controller must look at again, by client-go's
// workqueue rules: a key is queued at most once however often it is added;
// a key being processed is not handed to a second worker, and if it was
// added meanwhile it is queued again when its processing is Done (so the
// latest state is always looked at, once). AddAfter delays a key (retries
// with backoff). Thread-safe.
class WorkQueue {
 public:
  void Add(const std::string& key);
  // Adds `key` once `delay` has passed (at once when it is not positive).
  void AddAfter(const std::string& key, absl::Duration delay);

  // The next key to process, waiting for one until `deadline`; nothing at
  // the deadline or once shut down. REQUIRES: Done(key) after processing.
  std::optional<std::string> Get(absl::Time deadline = absl::InfiniteFuture());
  void Done(const std::string& key);

  // Wakes every Get; later ones return nothing at once.
  void ShutDown();
  bool shutting_down() const;
  // Keys queued and not being processed (delayed ones not counted).
  size_t size() const;

 private:
  // Moves delayed keys whose time has come to the queue. REQUIRES: mu_.
  void PromoteDelayedLocked(absl::Time now);
  void AddLocked(const std::string& key);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;       // queued, or to be queued when Done
  std::set<std::string> processing_;  // handed out by Get, not yet Done
  std::multimap<absl::Time, std::string> delayed_;
  bool shutting_down_ = false;
};

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_WORK_QUEUE_H_
