#include "server/common/heap.h"

#include <malloc.h>

#include "server/common/internal/mallctl.h"

namespace wm {

void ReturnFreeHeapToSystem() {
  if (mallctl != nullptr) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge": every arena's unused dirty pages
    // go back to the system now rather than after their decay time.
    constexpr char kPurgeAllArenas[] = "arena.4096.purge";
    mallctl(kPurgeAllArenas, nullptr, nullptr, nullptr, 0);
  }
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace wm
