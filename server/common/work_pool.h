#ifndef WM_SERVER_COMMON_WORK_POOL_H_
#define WM_SERVER_COMMON_WORK_POOL_H_

#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

}  // namespace wm

#endif  // WM_SERVER_COMMON_WORK_POOL_H_
