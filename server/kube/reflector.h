#ifndef WM_SERVER_KUBE_REFLECTOR_H_
#define WM_SERVER_KUBE_REFLECTOR_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/time/time.h"
#include "server/kube/api_client.h"
#include "server/kube/api_resource.h"
#include "server/kube/store.h"

namespace wm::kube {

// Exponential backoff with jitter, as client-go's reflector: the n-th
// consecutive failure waits initial*factor^n capped at `cap`, stretched by a
// random factor in [1, 1+jitter]; after `reset_after` without failure it
// starts from `initial` again.
struct BackoffPolicy {
  absl::Duration initial = absl::Milliseconds(800);
  absl::Duration cap = absl::Seconds(30);
  double factor = 2.0;
  double jitter = 1.0;
  absl::Duration reset_after = absl::Minutes(2);
};

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy) : policy_(policy) {}
  // The wait before the next attempt after a failure at `now`.
  absl::Duration Next(absl::Time now);
  void Reset() { failures_ = 0; }

 private:
  BackoffPolicy policy_;
  int failures_ = 0;
  absl::Time last_failure_ = absl::InfinitePast();
  absl::BitGen random_;
};

struct ReflectorOptions {
  std::string namespace_;      // empty: all namespaces
  std::string label_selector;  // empty: everything
  ObjectShape shape = ObjectShape::kFull;
  int page_size = 500;
  // Start with a WatchList request (sendInitialEvents); fall back to a
  // paginated list when the server refuses it.
  bool use_watch_list = true;
  // Server-side watch timeout, picked uniformly in [min, max] per watch.
  absl::Duration min_watch_timeout = absl::Minutes(5);
  absl::Duration max_watch_timeout = absl::Minutes(10);
  // No byte (not even a bookmark, sent about every minute) for this long
  // means the connection is dead.
  absl::Duration idle_timeout = absl::Minutes(3);
  BackoffPolicy backoff;
  // A watch that ends within this time having delivered nothing counts as a
  // failure (client-go's "very short watch").
  absl::Duration very_short_watch = absl::Seconds(1);
};

// Where a reflector stands, for health reports and metrics.
struct ReflectorHealth {
  enum class State {
    kSyncing,    // listing or waiting for the initial events
    kSynced,     // the store holds a complete list and follows the watch
    kForbidden,  // 403: the credentials may not list or watch this resource
    kNotFound,   // 404: the resource is not served (CRD deleted?)
    kFailing,    // other errors; retrying with backoff
  };
  State state = State::kSyncing;
  bool has_synced = false;  // a complete list was received at least once
  std::string message;      // the last error
  std::string resource_version;
  int64_t lists = 0;           // complete lists and relists
  int64_t watch_restarts = 0;  // watches opened after the first
  int64_t events = 0;          // ADDED/MODIFIED/DELETED applied
  int64_t decode_errors = 0;   // invalid event lines (each forces a relist)
  int64_t relists_410 = 0;     // relists because the resourceVersion expired
};

const char* StateName(ReflectorHealth::State state);

// Keeps a Store equal to the server's collection of one resource: list (or
// WatchList), then watch from the list's resourceVersion, re-watching from
// the last seen version when a watch ends and relisting only when the
// version expired (410) or the stream could not be trusted. The rules are
// client-go's (docs/kube-client.md lists them). Changes go to `on_change`
// on the reflector's thread; the Informer queues them for handlers.
class Reflector {
 public:
  using ChangeSink = std::function<void(std::vector<Change>)>;

  Reflector(const ApiClient& client, ApiResource resource, ReflectorOptions options, Store* store,
            ChangeSink on_change);

  // Runs until Stop(); call on a thread of its own.
  void Run();
  // Ends Run() promptly: open requests are cancelled, waits interrupted.
  void Stop();

  ReflectorHealth Health() const;
  const ApiResource& resource() const { return resource_; }

 private:
  enum class Outcome { kRewatch, kRelist, kBackoff, kStopped };

  Outcome List();
  // Opens a watch (or a WatchList when `initial` is set) from `resource_version_`.
  Outcome Watch(bool initial);
  Outcome OnHttpError(const HttpResponse& response, const char* what);
  Outcome OnTransportError(const absl::Status& status, const char* what);
  void SetState(ReflectorHealth::State state, std::string message);
  void MarkSynced();
  bool Sleep(absl::Duration duration);  // false when stopped
  std::string QuerySuffix() const;

  const ApiClient& client_;
  const ApiResource resource_;
  const ReflectorOptions options_;
  Store* const store_;
  const ChangeSink on_change_;

  std::atomic<bool> cancel_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopped_ = false;
  Backoff backoff_;
  absl::BitGen random_;
  bool watch_list_supported_;
  // Set until a complete list (or WatchList initial state) is applied.
  bool need_list_ = true;
  std::string resource_version_;
  int retry_after_seconds_ = 0;

  mutable std::mutex mu_;
  ReflectorHealth health_;
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_REFLECTOR_H_
