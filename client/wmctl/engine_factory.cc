#include "client/wmctl/engine_factory.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/cpus.h"
#include "server/expressions/jq_engine.h"
#include "server/expressions/native_engine.h"

namespace wm::wmctl {
namespace {

absl::StatusOr<std::unique_ptr<expressions::Engine>> MakeJqEngine(
    const expressions::EvalLimits& limits) {
  // The daemon's pool with its default flags, for the share of memory each
  // of its workers gets.
  auto daemon_pool = expressions::PlanJqPool({}, AvailableCpus());
  if (!daemon_pool.ok()) return daemon_pool.status();
  return expressions::NewJqEngine({.workers = 1,
                                   .memory_limit_bytes = daemon_pool->worker_memory_limit_bytes,
                                   .limits = limits});
}

}  // namespace

const std::vector<absl::string_view>& EngineNames() {
  static const auto* names = new std::vector<absl::string_view>{"native", "libjq"};
  return *names;
}

absl::StatusOr<std::unique_ptr<expressions::Engine>> MakeEngine(
    absl::string_view name, const expressions::EvalLimits& limits) {
  if (name == "libjq") return MakeJqEngine(limits);
  if (name == "native") return expressions::NewNativeEngine({.limits = limits});
  return absl::InvalidArgumentError(
      absl::StrCat("unknown engine \"", name, "\" (", absl::StrJoin(EngineNames(), ", "), ")"));
}

}  // namespace wm::wmctl
