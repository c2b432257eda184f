#ifndef WM_SERVER_COMMON_THREAD_STACK_H_
#define WM_SERVER_COMMON_THREAD_STACK_H_

#include <cstddef>
#include <cstdint>

namespace wm {

// The calling thread's stack as [low, high), both 0 when the system does
// not say. Read once per thread (for the main thread glibc reads
// /proc/self/maps to answer).
struct ThreadStack {
  uintptr_t low = 0;
  uintptr_t high = 0;
};
const ThreadStack& ThisThreadsStack();

// A thread's stack keeps every page it ever touched: after one deep
// recursion (a hostile expression evaluated up to its 1 MiB stack bound)
// the pages stay resident for as long as the thread lives, and each of a
// server's threads that met such a request keeps its own high-water mark.
// ReleaseStackBelow gives them back once the recursion has returned.

// Below the caller's frame, what ReleaseStackBelow leaves alone: room for
// the frames of the calls it makes and of a signal handler, which may run
// on this stack at any moment and must not have its frame discarded.
inline constexpr size_t kStackReleaseMargin = size_t{64} << 10;

// Recursions that went less deep than this below the caller's frame keep
// their pages: a definition's evaluation or parse stays far above it, and
// a release costs a system call, and a page fault per page when the stack
// grows there again.
inline constexpr size_t kStackReleaseThreshold = size_t{256} << 10;

// Returns to the system the pages of the calling thread's stack from
// `deepest` up to kStackReleaseMargin below the caller's frame; they read
// as zeros when the stack grows there again. Does nothing when `deepest`
// is less than kStackReleaseThreshold below the caller's frame, or not in
// this thread's stack (an address of another thread's, or a sanitizer's
// fake frame on the heap).
//
// REQUIRES: `deepest` is an address a computation that has returned
// reached on this thread; nothing below the caller's frame is in use.
void ReleaseStackBelow(const void* deepest);

}  // namespace wm

#endif  // WM_SERVER_COMMON_THREAD_STACK_H_
