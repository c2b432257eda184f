#ifndef WM_SERVER_EXPRESSIONS_YIELDING_ENGINE_H_
#define WM_SERVER_EXPRESSIONS_YIELDING_ENGINE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "server/expressions/engine.h"

namespace wm::expressions {

// An engine that runs `base`'s sessions with yield points (RunOptions) no
// later than `slice`'s, and remembers whether one yielded. Code that takes an
// Engine (a resolution) can then be run within a time slice without
// knowing it: a caller that finds yielded() true after it drops what the
// code answered (its errors may be the cut evaluations' own, rewritten) and
// runs it again with `base`.
//
// One per attempt; `base` must outlive it. Safe to share between threads
// as `base` is.
class YieldingEngine : public Engine {
 public:
  YieldingEngine(Engine& base, const RunOptions& slice) : base_(base), slice_(slice) {}

  absl::StatusOr<std::shared_ptr<const Program>> Compile(
      const std::vector<std::string>& sources, std::vector<CompileError>* errors) override {
    return base_.Compile(sources, errors);
  }
  absl::Status Run(absl::FunctionRef<absl::Status(Session&)> fn,
                   const RunOptions& options) override;
  using Engine::Run;
  const EvalLimits& limits() const override { return base_.limits(); }

  // Whether a session run through this engine reached its yield time.
  bool yielded() const { return yielded_.load(std::memory_order_relaxed); }

 private:
  Engine& base_;
  const RunOptions slice_;
  std::atomic<bool> yielded_ = false;
};

}  // namespace wm::expressions

#endif  // WM_SERVER_EXPRESSIONS_YIELDING_ENGINE_H_
