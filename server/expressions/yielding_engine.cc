#include "server/expressions/yielding_engine.h"

#include <algorithm>

namespace wm::expressions {

absl::Status YieldingEngine::Run(absl::FunctionRef<absl::Status(Session&)> fn,
                                 const RunOptions& options) {
  RunOptions sliced;
  sliced.yield_at = std::min(options.yield_at, slice_.yield_at);
  sliced.yield_above_built_bytes =
      std::min(options.yield_above_built_bytes, slice_.yield_above_built_bytes);
  absl::Status status = base_.Run(fn, sliced);
  if (IsYielded(status)) yielded_.store(true, std::memory_order_relaxed);
  return status;
}

}  // namespace wm::expressions
