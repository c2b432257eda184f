#ifndef WM_SERVER_ACCESS_EXPIRING_CACHE_H_
#define WM_SERVER_ACCESS_EXPIRING_CACHE_H_

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace wm::access {

// The time source of the access caches. Null means absl::Now; tests inject
// a fake so that expiry needs no sleeping.
using Clock = std::function<absl::Time()>;

// A bounded map from string keys to values that expire: the memory of
// authentication and authorization decisions. Each entry has its own time to
// live (allowed and denied decisions live for different times); at capacity
// the least recently used entry makes room. Thread-safe; a lookup is one
// hash probe under a mutex.
template <typename Value>
class ExpiringCache {
 public:
  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0;
    size_t size = 0;
  };

  // REQUIRES: capacity > 0.
  explicit ExpiringCache(size_t capacity, Clock clock = nullptr)
      : capacity_(capacity), clock_(std::move(clock)) {}

  // The value under `key` unless it expired (then it is dropped).
  std::optional<Value> Get(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      ++stats_.misses;
      return std::nullopt;
    }
    if (Now() >= it->second.expires) {
      order_.erase(it->second.position);
      entries_.erase(it);
      ++stats_.misses;
      return std::nullopt;
    }
    order_.splice(order_.begin(), order_, it->second.position);
    ++stats_.hits;
    return it->second.value;
  }

  // Keeps `value` under `key` for `ttl` (replacing what was there).
  void Put(const std::string& key, Value value, absl::Duration ttl) {
    std::lock_guard lock(mu_);
    absl::Time expires = Now() + ttl;
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      it->second.value = std::move(value);
      it->second.expires = expires;
      order_.splice(order_.begin(), order_, it->second.position);
      return;
    }
    if (entries_.size() >= capacity_) {
      entries_.erase(order_.back());
      order_.pop_back();
      ++stats_.evictions;
    }
    order_.push_front(key);
    entries_.emplace(key, Entry{std::move(value), expires, order_.begin()});
  }

  Stats stats() const {
    std::lock_guard lock(mu_);
    Stats stats = stats_;
    stats.size = entries_.size();
    return stats;
  }

 private:
  struct Entry {
    Value value;
    absl::Time expires;
    std::list<std::string>::iterator position;  // in order_
  };

  absl::Time Now() const { return clock_ ? clock_() : absl::Now(); }

  const size_t capacity_;
  const Clock clock_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_;
  std::list<std::string> order_;  // most recently used first
  Stats stats_;
};

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_EXPIRING_CACHE_H_
