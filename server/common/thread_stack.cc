#include "server/common/thread_stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace wm {
namespace {

// The calling thread's stack as [low, high), or {0, 0} when the system
// does not say. Read once per thread: for the main thread glibc reads
// /proc/self/maps to answer.
struct StackBounds {
  uintptr_t low = 0;
  uintptr_t high = 0;
};

StackBounds ReadStackBounds() {
  StackBounds bounds;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return bounds;
  void* address = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &address, &size) == 0) {
    bounds.low = reinterpret_cast<uintptr_t>(address);
    bounds.high = bounds.low + size;
  }
  pthread_attr_destroy(&attr);
  return bounds;
}

const StackBounds& ThisThreadsStack() {
  thread_local const StackBounds bounds = ReadStackBounds();
  return bounds;
}

}  // namespace

void ReleaseStackBelow(const void* deepest) {
  const StackBounds& stack = ThisThreadsStack();
  const uintptr_t frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const uintptr_t low = reinterpret_cast<uintptr_t>(deepest);
  if (frame < stack.low || frame >= stack.high || low < stack.low || low >= frame) return;
  if (frame - low <= kStackReleaseThreshold) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = low & ~(page - 1);
  const uintptr_t to = (frame - kStackReleaseMargin) & ~(page - 1);
  if (to <= from) return;
  madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

}  // namespace wm
