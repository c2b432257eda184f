#include "server/controllers/retries.h"

#include <algorithm>

namespace wm::controllers {

void Retries::Succeeded(const std::string& key) {
  failures_.erase(key);
  last_errors_.erase(key);
}

Retries::Retry Retries::Failed(const std::string& key, const absl::Status& status) {
  int failures = ++failures_[key];
  absl::Duration backoff = min_backoff_ * (1 << std::min(failures - 1, 16));
  std::string& last = last_errors_[key];
  bool new_error = last != status.message();
  last = std::string(status.message());
  return {std::min(backoff, max_backoff_), new_error};
}

}  // namespace wm::controllers
