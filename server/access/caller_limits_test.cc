#include "server/access/caller_limits.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/testing/fake_clock.h"

namespace wm::access {
namespace {

using ::testing::HasSubstr;
using ::wm::testing::FakeClock;

TEST(CallerLimitsTest, ABurstThenTheRateAndEachCallerHasItsOwnBucket) {
  FakeClock clock;
  CallerLimits limits({.calls_per_second = 10, .burst = 3, .clock = clock.AsClock()});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.AdmitCall("greedy").ok()) << i;
  absl::Duration retry;
  absl::Status refused = limits.AdmitCall("greedy", &retry);
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("\"greedy\" is over its limit of 10 calls per second"));
  EXPECT_EQ(retry, absl::Milliseconds(100));
  EXPECT_THAT(refused.message(), HasSubstr("retry in 100ms"));
  // Another caller is not held back by the first.
  EXPECT_TRUE(limits.AdmitCall("scheduler").ok());
  // The bucket refills at the rate.
  clock.Advance(absl::Milliseconds(100));
  EXPECT_TRUE(limits.AdmitCall("greedy").ok());
  EXPECT_FALSE(limits.AdmitCall("greedy").ok());
  // ...but never past the burst.
  clock.Advance(absl::Hours(1));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.AdmitCall("greedy").ok()) << i;
  EXPECT_FALSE(limits.AdmitCall("greedy").ok());
  EXPECT_EQ(limits.refused(), 3);
}

TEST(CallerLimitsTest, ExemptCallersAndNoLimitsAreNeverRefused) {
  FakeClock clock;
  CallerLimits limits({.calls_per_second = 1,
                       .burst = 1,
                       .max_streams = 1,
                       .exempt = {"kai"},
                       .clock = clock.AsClock()});
  for (int i = 0; i < 100; ++i) {
    EXPECT_TRUE(limits.AdmitCall("kai").ok());
    EXPECT_TRUE(limits.OpenStream("kai").ok());
  }
  CallerLimits none({});
  EXPECT_FALSE(none.limits_anything());
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(none.AdmitCall("anyone").ok());
}

TEST(CallerLimitsTest, StreamsAreCountedUntilClosed) {
  CallerLimits limits({.max_streams = 2});
  EXPECT_TRUE(limits.OpenStream("tool").ok());
  EXPECT_TRUE(limits.OpenStream("tool").ok());
  absl::Status refused = limits.OpenStream("tool");
  EXPECT_TRUE(absl::IsResourceExhausted(refused));
  EXPECT_THAT(refused.message(), HasSubstr("already holds 2 watches"));
  EXPECT_TRUE(limits.OpenStream("other").ok());
  limits.CloseStream("tool");
  EXPECT_TRUE(limits.OpenStream("tool").ok());
  limits.CloseStream("nobody");  // never opened: ignored
}

TEST(CallerLimitsTest, IdleCallersAreForgottenAndBusyOnesKept) {
  FakeClock clock;
  CallerLimits limits({.calls_per_second = 1,
                       .burst = 1,
                       .max_streams = 1,
                       .max_callers = 3,
                       .clock = clock.AsClock()});
  ASSERT_TRUE(limits.OpenStream("watcher").ok());
  ASSERT_TRUE(limits.AdmitCall("busy").ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(limits.AdmitCall("caller-" + std::to_string(i)).ok());
  // Every bucket is empty: none is forgotten.
  EXPECT_EQ(limits.callers(), 12);
  // Once they are full again, the next look (due now: their number has
  // doubled since the last) forgets them, but not the watcher, whose stream
  // is open.
  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(limits.AdmitCall("busy").ok());
  EXPECT_EQ(limits.callers(), 2);
  EXPECT_FALSE(limits.OpenStream("watcher").ok());
  EXPECT_FALSE(limits.AdmitCall("busy").ok());
}

// For TSan: callers admitted and streams opened and closed from many threads.
TEST(CallerLimitsTest, ConcurrentCallersStress) {
  CallerLimits limits(
      {.calls_per_second = 1e9, .burst = 1e9, .max_streams = 1000, .max_callers = 8});
  std::atomic<int> refused = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        std::string caller = "caller-" + std::to_string((t * 7 + i) % 12);
        if (!limits.AdmitCall(caller).ok()) ++refused;
        if (limits.OpenStream(caller).ok()) limits.CloseStream(caller);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(refused, 0);
  EXPECT_EQ(limits.refused(), 0);
}

}  // namespace
}  // namespace wm::access
