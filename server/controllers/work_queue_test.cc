#include "server/controllers/work_queue.h"

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace wm::controllers {
namespace {

TEST(WorkQueueTest, AKeyIsQueuedOnceHoweverOftenItIsAdded) {
  WorkQueue queue;
  queue.Add("a");
  queue.Add("b");
  queue.Add("a");
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.Get(), "a");
  EXPECT_EQ(queue.Get(), "b");
  EXPECT_EQ(queue.Get(absl::Now()), std::nullopt);
}

TEST(WorkQueueTest, AKeyAddedWhileProcessedIsQueuedAgainWhenDone) {
  WorkQueue queue;
  queue.Add("a");
  ASSERT_EQ(queue.Get(), "a");
  queue.Add("a");
  queue.Add("a");
  // Not handed to a second worker while the first holds it.
  EXPECT_EQ(queue.Get(absl::Now()), std::nullopt);
  queue.Done("a");
  EXPECT_EQ(queue.Get(absl::Now()), "a");
  queue.Done("a");
  EXPECT_EQ(queue.Get(absl::Now()), std::nullopt);
}

TEST(WorkQueueTest, AddAfterWaitsForItsDelay) {
  WorkQueue queue;
  queue.AddAfter("late", absl::Milliseconds(200));
  EXPECT_EQ(queue.Get(absl::Now() + absl::Milliseconds(20)), std::nullopt);
  // A Get that waits longer than the delay gets the key when it is due.
  EXPECT_EQ(queue.Get(absl::Now() + absl::Seconds(10)), "late");
}

TEST(WorkQueueTest, ShutDownWakesAWaitingGet) {
  WorkQueue queue;
  std::thread waiter([&] { EXPECT_EQ(queue.Get(), std::nullopt); });
  absl::SleepFor(absl::Milliseconds(20));
  queue.ShutDown();
  waiter.join();
  queue.Add("a");
  EXPECT_EQ(queue.Get(), std::nullopt);
  EXPECT_TRUE(queue.shutting_down());
}

// Many producers and workers (run under TSan in the test command): no key
// is ever held by two workers at once, and every key added is processed
// after its last add.
TEST(WorkQueueTest, ConcurrentProducersAndWorkersNeverShareAKey) {
  WorkQueue queue;
  constexpr int kKeys = 16;
  std::mutex mu;
  std::set<std::string> held;
  std::map<std::string, int> last_added, last_seen;
  std::atomic<int> overlaps{0};
  std::atomic<bool> producing{true};

  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      for (;;) {
        std::optional<std::string> key = queue.Get();
        if (!key) return;
        {
          std::unique_lock lock(mu);
          if (!held.insert(*key).second) ++overlaps;
          last_seen[*key] = last_added[*key];
        }
        std::this_thread::yield();
        {
          std::unique_lock lock(mu);
          held.erase(*key);
        }
        queue.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 random(p);
      for (int i = 0; i < 3000; ++i) {
        std::string key = std::to_string(random() % kKeys);
        {
          std::unique_lock lock(mu);
          ++last_added[key];
        }
        if (i % 7 == 0) {
          queue.AddAfter(key, absl::Microseconds(random() % 500));
        } else {
          queue.Add(key);
        }
      }
    });
  }
  for (auto& t : producers) t.join();
  producing = false;
  // Wait until every key has been looked at after its last add.
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (;;) {
    {
      std::unique_lock lock(mu);
      if (last_seen == last_added) break;
    }
    ASSERT_LT(absl::Now(), deadline) << "keys added were never processed";
    absl::SleepFor(absl::Milliseconds(5));
  }
  queue.ShutDown();
  for (auto& t : workers) t.join();
  EXPECT_EQ(overlaps.load(), 0);
}

}  // namespace
}  // namespace wm::controllers
