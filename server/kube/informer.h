#ifndef WM_SERVER_KUBE_INFORMER_H_
#define WM_SERVER_KUBE_INFORMER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/kube/reflector.h"
#include "server/kube/store.h"

namespace wm::kube {

// One resource kept in memory: a Store filled by a Reflector on its own
// thread, and handlers told of every change on a separate dispatch thread,
// so a slow handler never stalls the socket (the apiserver would drop a
// watcher that falls behind). Handlers see changes in the order the store
// applied them.
class Informer {
 public:
  using Handler = std::function<void(const Change&)>;

  Informer(const ApiClient& client, ApiResource resource, ReflectorOptions options);
  ~Informer();  // stops
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Handlers must be added before Start().
  void AddHandler(Handler handler);
  void Start();
  // Asks the reflector to stop without waiting (an open request ends within
  // about a second): to stop many informers in parallel, call this on all,
  // then Stop() on each.
  void RequestStop();
  // Stops the reflector and the dispatcher; changes not yet dispatched are
  // dropped. Idempotent.
  void Stop();

  const Store& store() const { return store_; }
  const ApiResource& resource() const { return reflector_.resource(); }
  ReflectorHealth Health() const { return reflector_.Health(); }
  bool HasSynced() const { return reflector_.Health().has_synced; }
  // Changes queued for handlers and not yet delivered.
  size_t PendingChanges() const;
  // Blocks until every change queued so far has been delivered (tests).
  void WaitForIdle() const;

 private:
  void Enqueue(std::vector<Change> changes);
  void Dispatch();

  Store store_;
  Reflector reflector_;
  std::vector<Handler> handlers_;
  std::thread reflector_thread_, dispatch_thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::deque<Change> queue_;
  bool delivering_ = false;
  bool stopping_ = false;
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_INFORMER_H_
