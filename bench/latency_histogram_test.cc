#include "bench/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace wm::bench {
namespace {

TEST(LatencyHistogramTest, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Percentile(0.5), 0u);
  EXPECT_EQ(h.Max(), 0u);
  EXPECT_EQ(h.Mean(), 0);
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.Count(), 100u);
  EXPECT_EQ(h.Percentile(0.5), 50u);
  EXPECT_EQ(h.Percentile(0.99), 99u);
  EXPECT_EQ(h.Percentile(1.0), 100u);
  EXPECT_EQ(h.Percentile(0.0), 1u);
  EXPECT_EQ(h.Max(), 100u);
  EXPECT_DOUBLE_EQ(h.Mean(), 50.5);
}

// Percentiles of a wide log-normal sample (microseconds to seconds) agree
// with the exact order statistics within the promised 1 %.
TEST(LatencyHistogramTest, PercentilesWithinOnePercent) {
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> distribution(std::log(500000.0), 2.0);
  std::vector<int64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    auto v = static_cast<int64_t>(distribution(random));
    values.push_back(v);
    h.Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.01, 0.5, 0.9, 0.99, 0.999, 0.9999}) {
    auto exact = static_cast<double>(values[static_cast<size_t>(std::ceil(q * values.size())) - 1]);
    EXPECT_NEAR(static_cast<double>(h.Percentile(q)), exact, exact * 0.01) << "q=" << q;
  }
  EXPECT_EQ(h.Max(), static_cast<uint64_t>(values.back()));
}

TEST(LatencyHistogramTest, HugeAndNegativeValuesAreKept) {
  LatencyHistogram h;
  h.Record(-5);
  h.Record(int64_t{1} << 50);
  EXPECT_EQ(h.Count(), 2u);
  EXPECT_EQ(h.Percentile(0.5), 0u);
  EXPECT_EQ(h.Percentile(1.0), uint64_t{1} << 50);
}

TEST(LatencyHistogramTest, ConcurrentRecordsAllCount) {
  LatencyHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < 100000; ++i) h.Record(1000 * (t + 1));
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(h.Count(), 400000u);
  EXPECT_EQ(h.Max(), 4000u);
  EXPECT_NEAR(static_cast<double>(h.Percentile(0.25)), 1000, 10);
  EXPECT_NEAR(static_cast<double>(h.Percentile(0.75)), 3000, 30);
}

}  // namespace
}  // namespace wm::bench
