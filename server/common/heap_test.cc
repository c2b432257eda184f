// ReturnFreeHeapToSystem and ReadHeapStats with the daemon's allocator
// (jemalloc, linked into this test as into workloadmapd): freed pages go
// back at once, not after jemalloc's decay time, and the figures follow
// what the program allocates and frees.

#include "server/common/heap.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "server/common/process_memory.h"

namespace wm {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// `bytes` (64 MiB unless told) in the small sizes resolution allocates.
std::vector<std::unique_ptr<char[]>> AllocateSmallBlocks(size_t bytes = 64 * kMiB) {
  std::vector<std::unique_ptr<char[]>> blocks;
  for (size_t i = 0; i < bytes / 256; ++i) {
    blocks.emplace_back(new char[256]);
    blocks.back()[0] = 1;  // touched, so its page is resident
  }
  return blocks;
}

TEST(HeapTest, FreedPagesGoBackToTheSystemAtOnce) {
  if (!ReadHeapStats()) GTEST_SKIP() << "not linked with jemalloc (a sanitizer build)";
  std::vector<std::unique_ptr<char[]>> blocks = AllocateSmallBlocks();
  blocks.clear();
  blocks.shrink_to_fit();
  ASSERT_GT(ReadHeapStats()->dirty, 4 * kMiB) << "jemalloc returned the pages before the trim";
  ReturnFreeHeapToSystem();
  EXPECT_LT(ReadHeapStats()->dirty, kMiB / 2);
}

// Freeing megabytes wakes jemalloc's background thread to purge some of
// them; a purge asked for while it does so must not be lost (it once was:
// jemalloc skips an arena another thread is purging).
TEST(HeapTest, FreedPagesGoBackWhileTheBackgroundThreadPurgesToo) {
  if (!ReadHeapStats()) GTEST_SKIP() << "not linked with jemalloc (a sanitizer build)";
  for (int round = 0; round < 200; ++round) {
    std::vector<std::unique_ptr<char[]>> blocks = AllocateSmallBlocks(8 * kMiB);
    blocks.clear();
    blocks.shrink_to_fit();
    ReturnFreeHeapToSystem();
    ASSERT_LT(ReadHeapStats()->dirty, 2 * kMiB) << "round " << round;
  }
}

TEST(HeapTest, TheThreadsCacheOfFreedObjectsIsEmptiedToo) {
  if (!ReadHeapStats()) GTEST_SKIP() << "not linked with jemalloc (a sanitizer build)";
  ReturnFreeHeapToSystem();
  const size_t empty = ReadHeapStats()->thread_cached;
  // Objects of a few small sizes, freed: the thread keeps some of each
  // size for its next allocations.
  for (size_t size : {64, 256, 1024, 2048}) {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 1000; ++i) blocks.emplace_back(new char[size]);
  }
  ASSERT_GT(ReadHeapStats()->thread_cached, empty + 16 * 1024);
  ReturnFreeHeapToSystem();
  EXPECT_LE(ReadHeapStats()->thread_cached, empty);
}

TEST(HeapTest, StatsFollowWhatIsAllocatedAndFreed) {
  std::optional<HeapStats> before = ReadHeapStats();
  if (!before) GTEST_SKIP() << "not linked with jemalloc (a sanitizer build)";
  ReturnFreeHeapToSystem();
  std::vector<std::unique_ptr<char[]>> blocks = AllocateSmallBlocks();
  HeapStats held = *ReadHeapStats();
  EXPECT_GE(held.allocated, before->allocated + 64 * kMiB);
  EXPECT_GE(held.active, held.allocated);
  EXPECT_GE(held.resident, held.active + held.dirty);
  EXPECT_GT(held.metadata, 0u);
  // The heap is most of the process's resident set here.
  EXPECT_GE(ResidentBytes(), held.allocated);

  blocks.clear();
  blocks.shrink_to_fit();
  HeapStats freed = *ReadHeapStats();
  EXPECT_LT(freed.allocated, held.allocated - 60 * kMiB);
  EXPECT_GT(freed.dirty, 4 * kMiB);
  ReturnFreeHeapToSystem();
  HeapStats trimmed = *ReadHeapStats();
  EXPECT_LT(trimmed.dirty, kMiB / 2);
  EXPECT_LT(trimmed.resident, held.resident - 60 * kMiB);
}

}  // namespace
}  // namespace wm
