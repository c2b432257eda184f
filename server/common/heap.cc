#include "server/common/heap.h"

#include <malloc.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/common/internal/mallctl.h"

namespace wm {
namespace {

// "arena.<MALLCTL_ARENAS_ALL>": every arena at once.
constexpr char kAllArenas[] = "4096";

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
  const std::string dirty = absl::StrCat("stats.arenas.", kAllArenas, ".pdirty");
  const std::string thread_cached = absl::StrCat("stats.arenas.", kAllArenas, ".tcache_bytes");
  if (!ReadMallctl("stats.allocated", &stats.allocated) ||
      !ReadMallctl("stats.active", &stats.active) ||
      !ReadMallctl("stats.metadata", &stats.metadata) ||
      !ReadMallctl("stats.resident", &stats.resident) || !ReadMallctl("arenas.page", &page) ||
      !ReadMallctl(dirty.c_str(), &dirty_pages) ||
      !ReadMallctl(thread_cached.c_str(), &stats.thread_cached)) {
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
    const std::string purge = absl::StrCat("arena.", kAllArenas, ".purge");
    mallctl(purge.c_str(), nullptr, nullptr, nullptr, 0);
  }
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace wm
