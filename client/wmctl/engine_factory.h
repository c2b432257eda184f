#ifndef WM_CLIENT_WMCTL_ENGINE_FACTORY_H_
#define WM_CLIENT_WMCTL_ENGINE_FACTORY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/expressions/engine.h"

namespace wm::wmctl {

// The engine wmctl uses when none is named (--engine): the daemon's own
// default (--jq-engine), so offline commands mean what the daemon means.
inline constexpr absl::string_view kDefaultEngine = "native";

// The engine names --engine takes, in the order help and completion list
// them.
const std::vector<absl::string_view>& EngineNames();

// The jq engine called `name`, with `limits`, for one command's in-process
// evaluations (a single evaluation at a time). Every wmctl command that
// evaluates in-process gets its engine here.
//  - "libjq": the daemon's libjq 1.6 engine with one worker process whose
//    memory limit is the share each worker of a daemon with default flags
//    gets (--jq-memory-limit 512 MiB divided among its workers, 256 MiB),
//    so an expression that runs out of memory here does so in the daemon.
//  - "native": the in-process engine (server/expressions/native_engine.h)
//    with gojq's semantics and the same limits.
// InvalidArgument for any other name; FailedPrecondition when the
// wm-jq-worker binary is not found.
absl::StatusOr<std::unique_ptr<expressions::Engine>> MakeEngine(
    absl::string_view name, const expressions::EvalLimits& limits = {});

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_ENGINE_FACTORY_H_
