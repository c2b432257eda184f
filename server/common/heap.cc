#include "server/common/heap.h"

#include <malloc.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "server/common/internal/mallctl.h"

namespace wm {
namespace {

// 4096 in a name is MALLCTL_ARENAS_ALL: every arena at once.
constexpr char kDirtyPagesOfAllArenas[] = "stats.arenas.4096.pdirty";
constexpr char kThreadCachedOfAllArenas[] = "stats.arenas.4096.tcache_bytes";
constexpr char kPurgeAllArenas[] = "arena.4096.purge";

// A purge of an arena that jemalloc's background thread is purging at that
// moment returns at once and purges nothing (pac_decay_to_limit sees the
// arena's decay "purging" and leaves it to that thread, which purges only
// the pages old enough for the decay curve). So a purge that leaves more
// than kDirtyLeftAfterPurgeBytes is repeated a little later, at most
// kPurgeAttempts times: a few milliseconds spent only after large work.
constexpr size_t kDirtyLeftAfterPurgeBytes = size_t{1} << 20;
constexpr int kPurgeAttempts = 5;
constexpr std::chrono::milliseconds kPurgeRetryDelay{1};

template <typename T>
bool ReadMallctl(const char* name, T* value) {
  size_t length = sizeof(*value);
  return mallctl(name, value, &length, nullptr, 0) == 0;
}

}  // namespace

std::optional<HeapStats> ReadHeapStats() {
  if (mallctl == nullptr) return std::nullopt;
  // Writing "epoch" refreshes the statistics the reads below return.
  uint64_t epoch = 1;
  size_t length = sizeof(epoch);
  mallctl("epoch", &epoch, &length, &epoch, length);
  HeapStats stats;
  size_t page = 0, dirty_pages = 0;
  if (!ReadMallctl("stats.allocated", &stats.allocated) ||
      !ReadMallctl("stats.active", &stats.active) ||
      !ReadMallctl("stats.metadata", &stats.metadata) ||
      !ReadMallctl("stats.resident", &stats.resident) || !ReadMallctl("arenas.page", &page) ||
      !ReadMallctl(kDirtyPagesOfAllArenas, &dirty_pages) ||
      !ReadMallctl(kThreadCachedOfAllArenas, &stats.thread_cached)) {
    return std::nullopt;  // a jemalloc built without statistics
  }
  stats.dirty = dirty_pages * page;
  return stats;
}

void ReturnFreeHeapToSystem() {
  if (mallctl != nullptr) {
    // This thread's cache of freed objects goes back to its arena (other
    // threads' caches only shrink as they allocate again), and every
    // arena's unused dirty pages go back to the system now rather than
    // after their decay time.
    mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
    for (int attempt = 1;; ++attempt) {
      mallctl(kPurgeAllArenas, nullptr, nullptr, nullptr, 0);
      const std::optional<HeapStats> stats = ReadHeapStats();
      if (!stats || stats->dirty <= kDirtyLeftAfterPurgeBytes || attempt == kPurgeAttempts) break;
      std::this_thread::sleep_for(kPurgeRetryDelay);
    }
  }
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace wm
