#ifndef WM_SERVER_CONTROLLERS_RETRIES_H_
#define WM_SERVER_CONTROLLERS_RETRIES_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace wm::controllers {

// A controller's memory of its failing keys: the backoff before each retry
// (client-go's per-item exponential rule: min_backoff doubled per failure
// in a row, at most max_backoff) and the last error told of each key, so
// that a key failing the same way at every retry (a missing RBAC grant) is
// logged once. Not thread-safe: a controller's worker owns it.
class Retries {
 public:
  Retries(absl::Duration min_backoff, absl::Duration max_backoff)
      : min_backoff_(min_backoff), max_backoff_(max_backoff) {}

  // The key succeeded: its count and last error are forgotten.
  void Succeeded(const std::string& key);

  struct Retry {
    absl::Duration after;  // queue the key again after this long
    bool new_error;        // the error differs from the last one told
  };
  // The key failed with `status`; remembers it as told.
  Retry Failed(const std::string& key, const absl::Status& status);

 private:
  const absl::Duration min_backoff_, max_backoff_;
  std::map<std::string, int> failures_;
  std::map<std::string, std::string> last_errors_;
};

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_RETRIES_H_
