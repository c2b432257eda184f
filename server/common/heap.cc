#include "server/common/heap.h"

#include <malloc.h>

#include <cstddef>

// jemalloc's control interface, present when the program links jemalloc
// (the daemon does: wm_allocator in CMakeLists.txt); weak, so that programs
// on glibc's malloc link too and see null.
extern "C" int mallctl(const char* name, void* old_value, size_t* old_length, void* new_value,
                       size_t new_length) __attribute__((weak));

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
