#include "server/common/process_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace wm {
namespace {

TEST(ResidentBytesTest, CountsPagesAsTheyAreTouched) {
  constexpr size_t kBytes = size_t{32} << 20;
  void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  const size_t before = ResidentBytes();
  EXPECT_GT(before, 0u);
  std::memset(block, 1, kBytes);
  const size_t touched = ResidentBytes();
  munmap(block, kBytes);
  EXPECT_GE(touched, before + kBytes - (size_t{1} << 20));
  EXPECT_LT(ResidentBytes(), touched - kBytes / 2);
}

TEST(ResidentBytesTest, TellsAnonymousPagesFromFilePages) {
  constexpr size_t kBytes = size_t{16} << 20;
  void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  const ResidentMemory before = ResidentMemoryOf("self");
  std::memset(block, 1, kBytes);
  const ResidentMemory after = ResidentMemoryOf("self");
  munmap(block, kBytes);
  EXPECT_GT(before.shared, 0u);  // the test's own code
  EXPECT_GE(after.anonymous(), before.anonymous() + kBytes - (size_t{1} << 20));
  EXPECT_LT(after.shared, before.shared + (size_t{1} << 20));
}

TEST(ResidentBytesTest, ReadsAnotherProcessByNumber) {
  const std::string self = std::to_string(getpid());
  EXPECT_GT(ResidentBytesOf(self), 0u);
}

TEST(ResidentBytesTest, IsZeroForAProcessThatIsGone) {
  EXPECT_EQ(ResidentBytesOf("0"), 0u);
  EXPECT_EQ(ResidentMemoryOf("0").shared, 0u);
  EXPECT_EQ(ResidentBytesOf("not-a-pid"), 0u);
}

}  // namespace
}  // namespace wm
