#ifndef WM_SERVER_EXPRESSIONS_ENGINE_H_
#define WM_SERVER_EXPRESSIONS_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/common/json.h"
#include "server/expressions/output.h"

namespace wm::expressions {

// Bounds on one evaluation. Upstream caps outputs at 999 (the 1000th is an
// error) and gives each query 10 s; we default to a tighter 2 s because a
// definition's expressions run on every change of every workload.
struct EvalLimits {
  int max_outputs = 999;
  absl::Duration budget = absl::Seconds(2);
  // Total bytes of serialized outputs of one evaluation, enforced in the
  // worker (what exceeds it is never sent). Definition expressions yield
  // names, numbers and selectors; the largest legitimate output is a pod
  // template, part of one Kubernetes object, which etcd caps at 1.5 MiB.
  // 4 MiB leaves room for a few of those and keeps a `"x" * 50000000` from
  // shipping 50 MB into the daemon per evaluation.
  size_t max_output_bytes = 4 << 20;
};

// A set of jq expressions compiled together (one per definition: compiling
// is expensive, evaluating is cheap). Immutable and shareable across threads.
class Program {
 public:
  virtual ~Program() = default;
  virtual size_t size() const = 0;
  virtual const std::string& source(size_t index) const = 0;
};

// Evaluates expressions of compiled programs. A Session is handed out by
// Engine::Run and is valid only inside that call, on that thread.
class Session {
 public:
  // Identifies an input loaded into this session.
  using InputId = int;

  virtual ~Session() = default;

  // Makes `input` available to Evaluate. Loading once and evaluating many
  // expressions against it avoids converting the document per expression.
  // A session's inputs are numbered 0, 1, 2, ... in the order loaded, so
  // callers may keep what they learn per input in a vector.
  virtual InputId Load(const Json& input) = 0;

  // All outputs of expression `index` of `program` applied to the input, in
  // order. Fails on a jq error (the first error ends the evaluation, as in
  // upstream's gojq), on more than max_outputs outputs, and when the budget
  // is exhausted. Outputs that are parts of the input or the program are
  // views (output.h): valid while the input and the program are.
  virtual absl::StatusOr<Outputs> EvaluateViews(const Program& program, size_t index,
                                                InputId input) = 0;

  // The same outputs, each a Json of its own: for callers that keep or
  // edit them.
  absl::StatusOr<std::vector<Json>> Evaluate(const Program& program, size_t index, InputId input) {
    absl::StatusOr<Outputs> views = EvaluateViews(program, index, input);
    if (!views.ok()) return views.status();
    std::vector<Json> outputs;
    outputs.reserve(views->size());
    for (Output& view : *views) outputs.push_back(std::move(view).Take());
    return outputs;
  }
};

// How Engine::Run runs one session.
//
// A session may be given a yield point short of the engine's own bounds:
// an evaluation that reaches it stops, and Run then fails with
// YieldedError() whatever `fn` made of that evaluation's error. The work is
// incomplete and is to be done again, from the start, where a long
// evaluation harms nobody. The daemon serves a small inline call on gRPC's
// own thread this way, and redoes the rare one that yields (an expression
// that spins to its budget, or builds a 50 MB string) on its low-priority
// pool, so that no expression holds a gRPC thread for long. An engine that
// cannot cut an evaluation short (libjq's workers) runs it whole.
struct RunOptions {
  // Evaluations yield at this time.
  absl::Time yield_at = absl::InfiniteFuture();
  // An evaluation yields before it builds more than this many bytes of
  // values (where it would otherwise fail at its memory bound).
  size_t yield_above_built_bytes = SIZE_MAX;
};

// Run's answer for a session that reached RunOptions::yield_at, and the
// test for it.
absl::Status YieldedError();
bool IsYielded(const absl::Status& status);

// A jq dialect compatible with upstream's gojq for the definitions it
// accepts. Implementations must be safe to call from many threads at once.
class Engine {
 public:
  struct CompileError {
    size_t index;
    std::string message;
  };

  virtual ~Engine() = default;

  // Compiles every source. On failure returns InvalidArgument and, when
  // `errors` is given, one entry per source that does not compile.
  virtual absl::StatusOr<std::shared_ptr<const Program>> Compile(
      const std::vector<std::string>& sources, std::vector<CompileError>* errors = nullptr) = 0;

  // Runs `fn` with a session. Sessions may be served by a pool; `fn`'s
  // status is returned, or YieldedError() (see RunOptions).
  virtual absl::Status Run(absl::FunctionRef<absl::Status(Session&)> fn,
                           const RunOptions& options) = 0;
  absl::Status Run(absl::FunctionRef<absl::Status(Session&)> fn) { return Run(fn, RunOptions()); }

  virtual const EvalLimits& limits() const = 0;
};

}  // namespace wm::expressions

#endif  // WM_SERVER_EXPRESSIONS_ENGINE_H_
