#include "server/common/work_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <future>

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

}  // namespace
}  // namespace wm
