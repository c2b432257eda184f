#include "server/common/work_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace wm {
namespace {

// The nice value of the calling thread.
int ThreadNice() { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); }

TEST(WorkPoolTest, ThreadsRunAtTheirNiceValue) {
  int base = ThreadNice();
  WorkPool pool(2, /*nice=*/5);
  std::promise<int> seen;
  pool.Post([&] { seen.set_value(ThreadNice()); });
  EXPECT_EQ(seen.get_future().get(), std::min(base + 5, 19));
  EXPECT_EQ(ThreadNice(), base);  // the caller's own priority is untouched
}

TEST(WorkPoolTest, QueuedWorkRunsBeforeDestruction) {
  std::atomic<int> done{0};
  {
    WorkPool pool(2);
    for (int i = 0; i < 100; ++i) pool.Post([&] { done.fetch_add(1); });
  }
  EXPECT_EQ(done.load(), 100);
}

// Every index once, spread over the caller and the helpers (a TSan stress
// of the claims: the vector is written without a lock).
TEST(ForEachIndexTest, WorksEveryIndexExactlyOnce) {
  WorkPool pool(3);
  for (int round = 0; round < 50; ++round) {
    std::vector<int> worked(1000, 0);
    ForEachIndex(&pool, 3, worked.size(), [&](size_t i) {
      ++worked[i];
      return true;
    });
    EXPECT_EQ(std::count(worked.begin(), worked.end(), 1), 1000);
  }
}

TEST(ForEachIndexTest, WithoutAPoolTheCallerWorksAlone) {
  std::vector<std::thread::id> by(10);
  ForEachIndex(nullptr, 4, by.size(), [&](size_t i) {
    by[i] = std::this_thread::get_id();
    return true;
  });
  EXPECT_EQ(std::count(by.begin(), by.end(), std::this_thread::get_id()), 10);
  ForEachIndex(nullptr, 4, 0, [&](size_t) -> bool {
    ADD_FAILURE() << "no index to work";
    return true;
  });
}

// After a failing index no new one is claimed: alone, the caller stops
// right there; with helpers, every index before the failing one was still
// worked (those after it that a helper had claimed may be too).
TEST(ForEachIndexTest, AFailureStopsTheClaimsAfterIt) {
  std::vector<int> alone(500, 0);
  ForEachIndex(nullptr, 0, alone.size(), [&](size_t i) {
    ++alone[i];
    return i != 100;
  });
  EXPECT_EQ(std::count(alone.begin(), alone.begin() + 101, 1), 101);
  EXPECT_EQ(std::count(alone.begin() + 101, alone.end(), 0), 399);

  WorkPool pool(2);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<bool>> worked(500);
    ForEachIndex(&pool, 2, worked.size(), [&](size_t i) {
      worked[i] = true;
      return i != 100;
    });
    for (size_t i = 0; i <= 100; ++i) ASSERT_TRUE(worked[i]) << i;
  }
}

}  // namespace
}  // namespace wm
