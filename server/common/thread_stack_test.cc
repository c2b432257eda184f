#include "server/common/thread_stack.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/common/testing/process_memory.h"

namespace wm {
namespace {

using ::wm::testing::ResidentPagesIn;

constexpr int kFrameBytes = 4096;
// About 2 MiB of stack: well past the release margin, well inside 8 MiB.
constexpr int kDepth = 512;

// Recurses `depth` frames of kFrameBytes each, touching every frame, and
// returns the deepest frame's address.
__attribute__((noinline)) const void* Recurse(int depth) {
  volatile char frame[kFrameBytes];
  std::memset(const_cast<char*>(frame), depth & 0xff, sizeof(frame));
  const void* deepest = depth == 0 ? __builtin_frame_address(0) : Recurse(depth - 1);
  asm volatile("" : : "r"(frame) : "memory");  // the frame outlives the call: no tail call
  return deepest;
}

TEST(ReleaseStackBelowTest, GivesBackThePagesADeepRecursionTouched) {
  // On a thread of its own: a fresh 8 MiB stack, none of it touched yet.
  std::thread([] {
    const uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    const uintptr_t deepest = reinterpret_cast<uintptr_t>(Recurse(kDepth));
    ASSERT_NE(deepest, 0u);
    ASSERT_LT(deepest, here - kStackReleaseMargin - (size_t{1} << 20));
    const uintptr_t deep_end = here - 2 * kStackReleaseMargin;
    const int touched = ResidentPagesIn(deepest, deep_end);
    ASSERT_GT(touched, 200) << "the recursion did not leave its pages resident";

    ReleaseStackBelow(reinterpret_cast<const void*>(deepest));
    EXPECT_LT(ResidentPagesIn(deepest, deep_end), touched / 10);

    // The stack still works there: the pages come back, zero-filled.
    EXPECT_NE(Recurse(kDepth), nullptr);
    EXPECT_GT(ResidentPagesIn(deepest, deep_end), 200);
  }).join();
}

TEST(ReleaseStackBelowTest, LeavesMemoryOutsideThisThreadsStackAlone) {
  // Above the address, up to the caller's frame, is memory in use: a
  // release that did not check the address against the stack would zero
  // the heap's pages after it (and far more).
  std::vector<char> heap(size_t{1} << 20, 'x');
  ReleaseStackBelow(heap.data() + heap.size() / 2);
  EXPECT_EQ(heap[heap.size() / 2 + 4096], 'x');
  EXPECT_EQ(heap.back(), 'x');
}

}  // namespace
}  // namespace wm
