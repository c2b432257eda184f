#ifndef WM_SERVER_COMMON_WORK_POOL_H_
#define WM_SERVER_COMMON_WORK_POOL_H_

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace wm {

// A few threads for the RPC work that evaluates expressions or calls the
// apiserver (inline resolution, mutations, validation), so that gRPC's
// callback threads never block. Cached reads do not come here.
//
// The threads run at `nice` (Linux sets it per thread): a burst of costly
// requests, hostile or not, then takes CPU from itself rather than from
// the callback threads answering cached reads and health checks.
class WorkPool {
 public:
  explicit WorkPool(int threads, int nice = 0) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, nice] {
        if (nice != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice);
        Run();
      });
    }
  }
  ~WorkPool() {
    {
      std::unique_lock lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // Runs `work` on a pool thread; work queued at destruction still runs.
  void Post(std::function<void()> work) {
    {
      std::unique_lock lock(mu_);
      queue_.push_back(std::move(work));
    }
    cv_.notify_one();
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Calls `work(i)` for every i in [0, n) on the calling thread and
// `helpers` of `pool`'s threads (none when `pool` is null), each claiming
// the next i in order, and returns once every claimed i is done. After
// `work` returns false no i is claimed any more (those claimed finish), so
// every i before a failing one has been worked.
// REQUIRES: with helpers, not called on one of `pool`'s own threads (the
// helpers could queue behind the caller).
inline void ForEachIndex(WorkPool* pool, int helpers, size_t n,
                         absl::FunctionRef<bool(size_t)> work) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  auto claim = [&] {
    while (!stopped) {
      size_t i = next++;
      if (i >= n) return;
      if (!work(i)) stopped = true;
    }
  };
  if (pool == nullptr || n < 2) helpers = 0;
  std::mutex done_mu;
  std::condition_variable done_cv;
  int running = helpers;
  for (int h = 0; h < helpers; ++h) {
    pool->Post([&] {
      claim();
      std::unique_lock lock(done_mu);
      if (--running == 0) done_cv.notify_one();
    });
  }
  claim();
  std::unique_lock lock(done_mu);
  done_cv.wait(lock, [&] { return running == 0; });
}

}  // namespace wm

#endif  // WM_SERVER_COMMON_WORK_POOL_H_
