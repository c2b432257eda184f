#ifndef WM_SERVER_COMMON_HEAP_H_
#define WM_SERVER_COMMON_HEAP_H_

#include <cstddef>

namespace wm {

// Work on inputs at least this large is followed by a heap trim: a 1 MiB
// request (a few thousand inline objects) leaves tens of MB of freed heap
// behind, while the trim itself costs about a millisecond.
inline constexpr size_t kHeapTrimThresholdBytes = size_t{1} << 20;

// Hands the free pages of every malloc arena back to the system: jemalloc's
// arenas when the program links it (the daemon), glibc's (malloc_trim)
// otherwise. glibc keeps memory freed in the middle of its heaps, and
// jemalloc keeps freed pages for seconds before it returns them: after one
// large request the process would stay that much larger for good (glibc)
// or for a while (jemalloc), and large requests on several threads would
// each grow a different arena.
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

}  // namespace wm

#endif  // WM_SERVER_COMMON_HEAP_H_
