#include "server/common/cpus.h"

#include <thread>

#include "gtest/gtest.h"

namespace wm {
namespace {

TEST(CpusTest, CgroupV2Quota) {
  EXPECT_EQ(CpuQuotaFromCgroupV2("200000 100000\n"), 2.0);
  EXPECT_EQ(CpuQuotaFromCgroupV2("50000 100000"), 0.5);
  EXPECT_EQ(CpuQuotaFromCgroupV2("max 100000\n"), std::nullopt);
  EXPECT_EQ(CpuQuotaFromCgroupV2(""), std::nullopt);
  EXPECT_EQ(CpuQuotaFromCgroupV2("100000"), std::nullopt);
  EXPECT_EQ(CpuQuotaFromCgroupV2("0 100000"), std::nullopt);
}

TEST(CpusTest, CgroupV1Quota) {
  EXPECT_EQ(CpuQuotaFromCgroupV1("150000\n", "100000\n"), 1.5);
  EXPECT_EQ(CpuQuotaFromCgroupV1("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(CpuQuotaFromCgroupV1("x", "100000"), std::nullopt);
}

TEST(CpusTest, AvailableCpusIsBetweenOneAndTheMachine) {
  int cpus = AvailableCpus();
  EXPECT_GE(cpus, 1);
  EXPECT_LE(cpus, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace wm
