#ifndef WM_SERVER_COMMON_TESTING_PROCESS_MEMORY_H_
#define WM_SERVER_COMMON_TESTING_PROCESS_MEMORY_H_

// For tests that measure this process's memory. Header-only (besides
// wm_common, which every layer links): any layer's tests may include it.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/common/thread_stack.h"

namespace wm::testing {

// True in builds with AddressSanitizer or ThreadSanitizer. Their allocators
// keep freed memory in quarantine (so resident memory says nothing about
// leaks or trimming), and their runtimes reserve terabytes of address space
// (so jq workers run without an address-space limit, jq_worker_main.cc).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// How many pages of [from, to) are resident (mincore), or -1 when part of
// the range is not mapped.
inline int ResidentPagesIn(uintptr_t from, uintptr_t to) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  from &= ~(page - 1);
  if (to <= from) return 0;
  std::vector<unsigned char> resident((to - from + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(from), to - from, resident.data()) != 0) return -1;
  int count = 0;
  for (unsigned char r : resident) count += r & 1;
  return count;
}

// How many pages of the calling thread's stack are resident more than
// `margin` bytes below this function's frame (above that are the caller's
// frames, in use); -1 when the stack's bounds are unknown.
__attribute__((noinline)) inline int ResidentStackPagesBelow(size_t margin) {
  const ThreadStack& stack = ThisThreadsStack();
  const uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (here < stack.low + margin || here >= stack.high) return -1;
  return ResidentPagesIn(stack.low, here - margin);
}

}  // namespace wm::testing

#endif  // WM_SERVER_COMMON_TESTING_PROCESS_MEMORY_H_
