#include "server/common/thread_stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace wm {
namespace {

ThreadStack ReadThreadStack() {
  ThreadStack stack;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return stack;
  void* address = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &address, &size) == 0) {
    stack.low = reinterpret_cast<uintptr_t>(address);
    stack.high = stack.low + size;
  }
  pthread_attr_destroy(&attr);
  return stack;
}

}  // namespace

const ThreadStack& ThisThreadsStack() {
  thread_local const ThreadStack stack = ReadThreadStack();
  return stack;
}

void ReleaseStackBelow(const void* deepest) {
  const ThreadStack& stack = ThisThreadsStack();
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
