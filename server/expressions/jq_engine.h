#ifndef WM_SERVER_EXPRESSIONS_JQ_ENGINE_H_
#define WM_SERVER_EXPRESSIONS_JQ_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/expressions/engine.h"

namespace wm::expressions {

// Memory of the jq workers, all of them together: each worker's address
// space is limited to its share (RLIMIT_AS), so the sum of the workers'
// resident memory stays below this whatever expressions do. 512 MiB is half
// of the Deployment's 1 GiB limit (deploy/base/deployment.yaml); the other
// half is the daemon's own (45 MiB after sync, its watch cache, requests).
inline constexpr int64_t kDefaultJqMemoryLimitBytes = int64_t{512} << 20;
// The smallest share a worker may get: a fresh worker maps 7 MiB and
// libjq's values take ~8 bytes per byte of JSON loaded, so 64 MiB still
// holds a workload with a few hundred pods.
inline constexpr int64_t kMinJqWorkerMemoryBytes = int64_t{64} << 20;
// The share an automatically sized pool leaves each worker at least (fewer
// workers rather than smaller ones). Measured: libjq holds a loaded input in
// about 8 bytes per byte of its JSON, and a session loads every pod of the
// workload it resolves, so 256 MiB holds the largest inline request (16 MiB
// messages) or a cached workload of tens of thousands of pods; the default
// limit thus gets 2 workers whatever the node's CPUs.
inline constexpr int64_t kAutoJqWorkerMemoryBytes = int64_t{256} << 20;

struct JqEngineOptions {
  // Path of the wm-jq-worker binary. Empty: $WM_JQ_WORKER, else next to the
  // running executable (the build tree), else where `cmake --install` puts
  // it relative to the executable (bin/../libexec/workloadmap/), else ../bin/
  // from it (the build tree's tests/).
  std::string worker_path;
  // Worker processes, i.e. evaluations that can run at once. 0: one per CPU
  // the process may use (affinity mask and cgroup quota), at least 2, and
  // no more than give each kAutoJqWorkerMemoryBytes of memory_limit_bytes.
  int workers = 0;
  // Memory of all workers together, divided equally among them as each
  // one's address-space limit; a worker that exceeds its share ends alone
  // (RESOURCE_EXHAUSTED, "expression exceeded its memory limit of N MiB")
  // and the next evaluation gets a fresh one. Each share must be at least
  // kMinJqWorkerMemoryBytes. Not enforced in sanitizer builds, whose
  // runtimes reserve terabytes of address space.
  int64_t memory_limit_bytes = kDefaultJqMemoryLimitBytes;
  EvalLimits limits;
};

// How many workers a pool gets and the address-space limit of each.
struct JqPoolPlan {
  int workers = 0;
  int64_t worker_memory_limit_bytes = 0;
};

// The pool NewJqEngine starts for `options` on a process that may use
// `available_cpus` CPUs. InvalidArgument when a share would be smaller than
// kMinJqWorkerMemoryBytes (the message names both numbers).
absl::StatusOr<JqPoolPlan> PlanJqPool(const JqEngineOptions& options, int available_cpus);

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
