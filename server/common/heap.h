#ifndef WM_SERVER_COMMON_HEAP_H_
#define WM_SERVER_COMMON_HEAP_H_

#include <cstddef>
#include <optional>

namespace wm {

// Work on inputs at least this large is followed by a heap trim: a 1 MiB
// request (a few thousand inline objects) leaves tens of MB of freed heap
// behind, while the trim itself costs about a millisecond.
inline constexpr size_t kHeapTrimThresholdBytes = size_t{1} << 20;

// Hands the free pages of every malloc arena back to the system: jemalloc's
// arenas when the program links it (the daemon), after emptying the calling
// thread's cache of freed objects into them, glibc's (malloc_trim)
// otherwise. glibc keeps memory freed in the middle of its heaps, and
// jemalloc keeps freed pages for seconds before it returns them: after one
// large request the process would stay that much larger for good (glibc)
// or for a while (jemalloc), and large requests on several threads would
// each grow a different arena. Takes a few milliseconds more when
// jemalloc's background thread is purging an arena at the same moment
// (heap.cc: the purge is repeated).
void ReturnFreeHeapToSystem();

// Calls ReturnFreeHeapToSystem when it goes out of scope if the work it
// spans handled at least kHeapTrimThresholdBytes of input; declared before
// the work's own objects, it runs after they are freed.
class HeapTrimAfterLargeWork {
 public:
  explicit HeapTrimAfterLargeWork(size_t input_bytes)
      : trim_(input_bytes >= kHeapTrimThresholdBytes) {}
  ~HeapTrimAfterLargeWork() {
    if (trim_) ReturnFreeHeapToSystem();
  }
  HeapTrimAfterLargeWork(const HeapTrimAfterLargeWork&) = delete;
  HeapTrimAfterLargeWork& operator=(const HeapTrimAfterLargeWork&) = delete;

 private:
  const bool trim_;
};

// The allocator's own account of its memory, in bytes (jemalloc's
// "stats.*"). Beside the process's resident set it tells memory in use
// from memory freed but not yet returned, and both from what is not heap
// at all (thread stacks, code, gRPC's own mappings).
struct HeapStats {
  // In live allocations.
  size_t allocated = 0;
  // Of `allocated`, freed objects each thread keeps in its own cache to
  // reuse (jemalloc's tcache); a thread's cache shrinks as that thread
  // allocates again, not with time.
  size_t thread_cached = 0;
  // In the pages that hold live allocations: `allocated` and the free
  // space between them (fragmentation).
  size_t active = 0;
  // In freed pages not returned yet: jemalloc returns them after its decay
  // time (dirty_decay_ms, jemalloc_options.cc), or at a trim.
  size_t dirty = 0;
  // The allocator's bookkeeping (not all of it resident).
  size_t metadata = 0;
  // The allocator's pages resident in memory: active, dirty and the
  // resident part of its metadata.
  size_t resident = 0;
};

// The figures as of now, or nullopt when the program does not link
// jemalloc (the sanitizer builds run on their own allocators).
std::optional<HeapStats> ReadHeapStats();

}  // namespace wm

#endif  // WM_SERVER_COMMON_HEAP_H_
