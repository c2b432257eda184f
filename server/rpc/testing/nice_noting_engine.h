#ifndef WM_SERVER_RPC_TESTING_NICE_NOTING_ENGINE_H_
#define WM_SERVER_RPC_TESTING_NICE_NOTING_ENGINE_H_

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "server/expressions/engine.h"

namespace wm::rpc::testing {

// For tests of where the service evaluates: an engine that runs `engine`'s
// sessions and notes the nice value of the thread of its last Run (the work
// pool's threads run at Options::pool_nice, gRPC's at the process's) and
// how many Runs there were.
class NiceNotingEngine : public expressions::Engine {
 public:
  explicit NiceNotingEngine(std::unique_ptr<expressions::Engine> engine)
      : engine_(std::move(engine)) {}

  absl::StatusOr<std::shared_ptr<const expressions::Program>> Compile(
      const std::vector<std::string>& sources, std::vector<CompileError>* errors) override {
    return engine_->Compile(sources, errors);
  }
  absl::Status Run(absl::FunctionRef<absl::Status(expressions::Session&)> fn,
                   const expressions::RunOptions& options) override {
    last_run_nice_ = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    runs_.fetch_add(1);
    return engine_->Run(fn, options);
  }
  using Engine::Run;
  const expressions::EvalLimits& limits() const override { return engine_->limits(); }

  int last_run_nice() const { return last_run_nice_; }
  int runs() const { return runs_; }

 private:
  std::unique_ptr<expressions::Engine> engine_;
  std::atomic<int> last_run_nice_ = 0;
  std::atomic<int> runs_ = 0;
};

}  // namespace wm::rpc::testing

#endif  // WM_SERVER_RPC_TESTING_NICE_NOTING_ENGINE_H_
