#ifndef WM_SERVER_ACCESS_CALLER_LIMITS_H_
#define WM_SERVER_ACCESS_CALLER_LIMITS_H_

#include <cstddef>
#include <mutex>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/access/expiring_cache.h"

namespace wm::access {

// Bounds what one caller may ask, so that a misbehaving client cannot starve
// the others (a scheduler among them): each caller (an authenticated user,
// or a peer address when calls are not authenticated) has a token bucket of
// `calls_per_second` refilled continuously up to `burst`, and may hold at
// most `max_streams` watches open. Exempt users are never limited. Over a
// limit, a call gets RESOURCE_EXHAUSTED saying which limit and when to retry.
// Thread-safe.
class CallerLimits {
 public:
  struct Options {
    // 0: calls are not limited by rate.
    double calls_per_second = 0;
    // Calls a caller may make at once after being idle. REQUIRES: >= 1 when
    // calls_per_second > 0.
    double burst = 1;
    // 0: streams are not limited.
    int max_streams = 0;
    // Users never limited (the scheduler's ServiceAccount).
    std::set<std::string> exempt;
    // Callers remembered before those whose bucket is full and that hold no
    // stream are forgotten (they lose nothing by it).
    size_t max_callers = 10000;
    Clock clock;  // null: absl::Now
  };

  explicit CallerLimits(Options options);

  // Takes one call from `caller`'s bucket; ResourceExhausted with a retry
  // hint (*retry_after, when not null) when it is empty.
  absl::Status AdmitCall(const std::string& caller, absl::Duration* retry_after = nullptr);
  // Takes one of `caller`'s stream slots (ResourceExhausted when none is
  // left); each admitted stream is given back with CloseStream.
  absl::Status OpenStream(const std::string& caller);
  void CloseStream(const std::string& caller);

  bool limits_anything() const { return options_.calls_per_second > 0 || options_.max_streams > 0; }
  // Calls and streams refused so far.
  uint64_t refused() const;
  // Callers remembered now.
  size_t callers() const;

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time refilled;
    int streams = 0;
  };
  absl::Time Now() const { return options_.clock ? options_.clock() : absl::Now(); }
  // The caller's bucket, refilled up to now. REQUIRES: mu_ held.
  Bucket& RefilledLocked(const std::string& caller, absl::Time now);
  void ForgetIdleLocked(absl::Time now);

  const Options options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_;
  // Callers remembered when the next look for idle ones is due: when a look
  // finds too few, not before their number doubles, so that many busy
  // callers do not cost a look per call.
  size_t forget_at_;
  uint64_t refused_ = 0;
};

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_CALLER_LIMITS_H_
