#include "server/expressions/engine.h"

namespace wm::expressions {
namespace {

// Marks the status as Run's own; a DeadlineExceeded from an expression's
// budget carries no payload.
constexpr char kYieldedPayload[] = "wm.expressions/yielded";

}  // namespace

absl::Status YieldedError() {
  absl::Status status = absl::DeadlineExceededError(
      "an evaluation reached the session's yield time; the work is to be done again");
  status.SetPayload(kYieldedPayload, absl::Cord());
  return status;
}

bool IsYielded(const absl::Status& status) {
  return status.GetPayload(kYieldedPayload).has_value();
}

}  // namespace wm::expressions
