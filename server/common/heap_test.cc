// ReturnFreeHeapToSystem with the daemon's allocator (jemalloc, linked into
// this test as into workloadmapd): freed pages go back at once, not after
// jemalloc's decay time.

#include "server/common/heap.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "server/common/internal/mallctl.h"

namespace wm {
namespace {

// Pages of all arenas that are free but not yet returned to the system.
size_t DirtyPages() {
  uint64_t epoch = 1;
  size_t length = sizeof(epoch);
  mallctl("epoch", &epoch, &length, &epoch, length);  // refreshes the statistics
  size_t dirty = 0;
  length = sizeof(dirty);
  EXPECT_EQ(mallctl("stats.arenas.4096.pdirty", &dirty, &length, nullptr, 0), 0);
  return dirty;
}

TEST(HeapTest, FreedPagesGoBackToTheSystemAtOnce) {
  if (mallctl == nullptr) GTEST_SKIP() << "not linked with jemalloc (a sanitizer build)";
  // 64 MiB in the small sizes resolution allocates, then freed.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < (64 << 20) / 256; ++i) blocks.emplace_back(new char[256]);
  blocks.clear();
  blocks.shrink_to_fit();
  ASSERT_GT(DirtyPages(), 1000u) << "jemalloc returned the pages before the trim";
  ReturnFreeHeapToSystem();
  EXPECT_LT(DirtyPages(), 100u);
}

}  // namespace
}  // namespace wm
