#ifndef WM_SERVER_EXPRESSIONS_JQ_ENGINE_H_
#define WM_SERVER_EXPRESSIONS_JQ_ENGINE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/expressions/engine.h"

namespace wm::expressions {

struct JqEngineOptions {
  // Path of the wm-jq-worker binary. Empty: $WM_JQ_WORKER, else next to the
  // running executable, else ../bin/ from it (where tests live).
  std::string worker_path;
  // Worker processes, i.e. evaluations that can run at once. 0: one per CPU
  // the process may use (affinity mask and cgroup quota), at least 2.
  int workers = 0;
  // Address-space limit of each worker; exceeding it ends that worker only.
  int64_t memory_limit_bytes = int64_t{4} << 30;
  EvalLimits limits;
};

// The libjq 1.6 backend. Every libjq call runs in a pool of single-threaded
// worker processes (see jq_worker_main.cc for why); this object only talks
// to them, so it is safe to use from any number of threads. gojq
// compatibility: jq 1.7/gojq builtins that 1.6 lacks are defined in front of
// every program (abs, toarray, pick, trim, ltrim, rtrim, trimstr, scan/2,
// add/1); limit, first, isempty, any and all are redefined without
// label/break, because jq 1.6 lets a postfix `?` in the generator swallow
// the break (and gojq's limit(0; f) is empty); an `if` without `else` is
// rewritten to `else .`.
absl::StatusOr<std::unique_ptr<Engine>> NewJqEngine(const JqEngineOptions& options = {});

// The definitions prepended to every program (exposed for tests and docs).
const std::string& JqPolyfills();

}  // namespace wm::expressions

#endif  // WM_SERVER_EXPRESSIONS_JQ_ENGINE_H_
