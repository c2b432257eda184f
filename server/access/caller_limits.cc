#include "server/access/caller_limits.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/common/user_text.h"

namespace wm::access {

CallerLimits::CallerLimits(Options options)
    : options_(std::move(options)), forget_at_(options_.max_callers) {}

CallerLimits::Bucket& CallerLimits::RefilledLocked(const std::string& caller, absl::Time now) {
  auto [it, added] = buckets_.try_emplace(caller);
  Bucket& bucket = it->second;
  if (added) {
    bucket.tokens = options_.burst;
  } else if (options_.calls_per_second > 0) {
    double earned = absl::ToDoubleSeconds(now - bucket.refilled) * options_.calls_per_second;
    bucket.tokens = std::min(options_.burst, bucket.tokens + std::max(0.0, earned));
  }
  bucket.refilled = now;
  return bucket;
}

void CallerLimits::ForgetIdleLocked(absl::Time now) {
  if (buckets_.size() < forget_at_) return;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const Bucket& b = it->second;
    double tokens = b.tokens + absl::ToDoubleSeconds(now - b.refilled) * options_.calls_per_second;
    bool idle = b.streams == 0 && (options_.calls_per_second <= 0 || tokens >= options_.burst);
    if (idle) {
      buckets_.erase(it++);
    } else {
      ++it;
    }
  }
  forget_at_ = std::max(options_.max_callers, 2 * buckets_.size());
}

absl::Status CallerLimits::AdmitCall(const std::string& caller, absl::Duration* retry_after) {
  if (options_.calls_per_second <= 0 || options_.exempt.contains(caller)) {
    return absl::OkStatus();
  }
  absl::Time now = Now();
  std::lock_guard lock(mu_);
  ForgetIdleLocked(now);
  Bucket& bucket = RefilledLocked(caller, now);
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return absl::OkStatus();
  }
  ++refused_;
  absl::Duration wait = absl::Seconds((1 - bucket.tokens) / options_.calls_per_second);
  wait = absl::Ceil(wait, absl::Milliseconds(1));
  if (retry_after != nullptr) *retry_after = wait;
  return absl::ResourceExhaustedError(absl::StrCat(
      QuoteUserText(caller), " is over its limit of ", options_.calls_per_second,
      " calls per second (burst ", options_.burst, "); retry in ", absl::FormatDuration(wait)));
}

absl::Status CallerLimits::OpenStream(const std::string& caller) {
  if (options_.max_streams <= 0 || options_.exempt.contains(caller)) return absl::OkStatus();
  absl::Time now = Now();
  std::lock_guard lock(mu_);
  ForgetIdleLocked(now);
  Bucket& bucket = RefilledLocked(caller, now);
  if (bucket.streams < options_.max_streams) {
    ++bucket.streams;
    return absl::OkStatus();
  }
  ++refused_;
  return absl::ResourceExhaustedError(
      absl::StrCat(QuoteUserText(caller), " already holds ", bucket.streams,
                   " watches, its limit; end one before opening another"));
}

void CallerLimits::CloseStream(const std::string& caller) {
  if (options_.max_streams <= 0 || options_.exempt.contains(caller)) return;
  std::lock_guard lock(mu_);
  auto it = buckets_.find(caller);
  if (it != buckets_.end() && it->second.streams > 0) --it->second.streams;
}

size_t CallerLimits::callers() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

uint64_t CallerLimits::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

}  // namespace wm::access
