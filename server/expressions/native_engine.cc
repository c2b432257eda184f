#include "server/expressions/native_engine.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/expressions/native/compiler.h"
#include "server/expressions/native/interpreter.h"
#include "server/expressions/native/parser.h"
#include "server/expressions/native/path_plan.h"
#include "server/expressions/native/value_size.h"

namespace wm::expressions {
namespace {

using native::Flow;
using native::Interpreter;
using native::Op;
using native::PathNode;
using native::Value;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kStackScale = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr size_t kStackScale = 4;
#else
constexpr size_t kStackScale = 1;
#endif
#else
constexpr size_t kStackScale = 1;
#endif

bool HasNan(const Json& value) {
  if (value.is_number_float()) return std::isnan(value.get<double>());
  if (!value.is_structured()) return false;
  for (const Json& member : value) {
    if (HasNan(member)) return true;
  }
  return false;
}

void NanToNull(Json& value) {
  if (value.is_number_float() && std::isnan(value.get<double>())) {
    value = nullptr;
  } else if (value.is_structured()) {
    for (Json& member : value) NanToNull(member);
  }
}

// An interpreter value as an Output that outlives the evaluation: views of
// the input stay views, computed values are shared. NaN has no JSON form;
// gojq writes it as null. Only computed values can hold one (a JSON input
// cannot).
Output ToOutput(const Value& v) {
  if (v.borrowed()) return Output::View(*v);
  if (v.owner() == nullptr || HasNan(*v)) {
    Json copy = *v;
    NanToNull(copy);
    return Output::Value(std::move(copy));
  }
  return Output::Shared(v.owner(), *v);
}

class NativeProgram : public Program {
 public:
  NativeProgram(std::vector<std::string> sources, std::vector<std::unique_ptr<const Op>> ops)
      : sources_(std::move(sources)), ops_(std::move(ops)) {
    for (const auto& op : ops_) plans_.push_back(native::PathPlan::Of(*op));
  }
  size_t size() const override { return sources_.size(); }
  const std::string& source(size_t index) const override { return sources_[index]; }
  const Op& op(size_t index) const { return *ops_[index]; }
  // The fast lane of expression `index` when it is a plain walk.
  const std::optional<native::PathPlan>& plan(size_t index) const { return plans_[index]; }

 private:
  std::vector<std::string> sources_;
  std::vector<std::unique_ptr<const Op>> ops_;
  std::vector<std::optional<native::PathPlan>> plans_;
};

class NativeSession : public Session {
 public:
  NativeSession(const native::Prelude& prelude, const NativeEngineOptions& options,
                const RunOptions& run)
      : prelude_(prelude), options_(options), run_(run) {}

  // Whether an evaluation stopped at a yield point (RunOptions) short of
  // its own bounds.
  bool yielded() const { return yielded_; }

  // The document is borrowed: callers keep it alive while they evaluate
  // (resolution loads objects it holds for the whole Run).
  InputId Load(const Json& input) override {
    inputs_.push_back(&input);
    return static_cast<InputId>(inputs_.size() - 1);
  }

  // The evaluator uses nlohmann's checked accessors only after checking
  // types; should one still throw (a defect), the evaluation fails rather
  // than the process. The outputs are made in place in the one result
  // returned: a resolution evaluates dozens of expressions, and moving
  // outputs costs about what a short walk does.
  absl::StatusOr<Outputs> EvaluateViews(const Program& program, size_t index,
                                        InputId input) override {
    absl::StatusOr<Outputs> result(absl::in_place);
    try {
      if (absl::Status status = EvaluateUnguarded(program, index, input, *result); !status.ok()) {
        result = std::move(status);
      }
    } catch (const std::exception& e) {
      result = absl::InternalError(absl::StrCat("native jq engine defect: ", e.what()));
    }
    return result;
  }

 private:
  // REQUIRES: `outputs` is empty.
  absl::Status EvaluateUnguarded(const Program& program, size_t index, InputId input,
                                 Outputs& outputs) {
    if (input < 0 || static_cast<size_t>(input) >= inputs_.size()) {
      return absl::InvalidArgumentError("unknown input");
    }
    if (index >= program.size()) return absl::InvalidArgumentError("unknown expression");
    // typeid, not dynamic_cast: the exact class is all there is to check,
    // and this runs for every evaluation.
    if (typeid(program) != typeid(NativeProgram)) {
      return absl::InvalidArgumentError("the program was not compiled by the native engine");
    }
    const auto* compiled = static_cast<const NativeProgram*>(&program);
    const EvalLimits& limits = options_.limits;
    if (const auto& plan = compiled->plan(index)) {
      if (Walk(*plan, *inputs_[input], outputs)) return absl::OkStatus();
    }
    native::EvalBounds bounds;
    bounds.budget = limits.budget;
    bounds.deadline = run_.yield_at;
    bounds.max_built_bytes = std::min(options_.max_built_bytes, run_.yield_above_built_bytes);
    bounds.max_stack_bytes = options_.max_stack_bytes * kStackScale;
    Interpreter interpreter(bounds);
    size_t output_bytes = 0;
    absl::Status limit;
    Flow flow = interpreter.Run(
        compiled->op(index), prelude_.env(), Value::Borrowed(*inputs_[input]),
        [&](const Value& v, const PathNode*) {
          if (outputs.size() >= static_cast<size_t>(limits.max_outputs)) {
            limit = absl::InvalidArgumentError(
                absl::StrCat("query results exceed the allowed number ", limits.max_outputs + 1));
            return Flow::kError;
          }
          output_bytes += native::ApproximateBytes(*v);
          if (output_bytes > limits.max_output_bytes) {
            limit = absl::InvalidArgumentError(absl::StrCat(
                "query results exceed the allowed size of ", limits.max_output_bytes, " bytes"));
            return Flow::kError;
          }
          outputs.push_back(ToOutput(v));
          return Flow::kContinue;
        });
    if (!limit.ok()) return limit;
    if (flow == Flow::kBreak) return absl::InvalidArgumentError("break outside its label");
    if (flow == Flow::kError) {
      std::string message = interpreter.ErrorMessage();
      if (!interpreter.error_is_bound()) return absl::InvalidArgumentError(message);
      const Interpreter::Bound bound = interpreter.error_bound();
      if ((bound == Interpreter::Bound::kTime && run_.yield_at < interpreter.budget_end()) ||
          (bound == Interpreter::Bound::kMemory &&
           run_.yield_above_built_bytes < options_.max_built_bytes)) {
        yielded_ = true;
        return YieldedError();
      }
      if (bound == Interpreter::Bound::kTime) {
        return absl::DeadlineExceededError(absl::StrCat(
            "expression exceeded its evaluation budget of ", absl::FormatDuration(limits.budget)));
      }
      return absl::ResourceExhaustedError(message);
    }
    return absl::OkStatus();
  }

  // The outputs of a plain walk (path_plan.h) in `outputs`; false, with
  // `outputs` left empty, when the interpreter must decide: the walk met
  // something unusual, or the outputs pass a bound (the interpreter then
  // words the error). REQUIRES: `outputs` is empty.
  bool Walk(const native::PathPlan& plan, const Json& input, Outputs& outputs) {
    views_.clear();
    const EvalLimits& limits = options_.limits;
    if (!plan.Walk(input, static_cast<size_t>(limits.max_outputs), views_)) return false;
    size_t bytes = 0;
    for (const Json* view : views_) bytes += native::ApproximateBytes(*view);
    if (bytes > limits.max_output_bytes) return false;
    outputs.reserve(views_.size());
    for (const Json* view : views_) outputs.push_back(Output::View(*view));
    return true;
  }

  const native::Prelude& prelude_;
  const NativeEngineOptions& options_;
  const RunOptions run_;
  bool yielded_ = false;
  // A resolution loads its root and its pods: a small one, a handful.
  absl::InlinedVector<const Json*, 8> inputs_;
  std::vector<const Json*> views_;  // Walk's, kept to reuse its allocation
};

class NativeEngine : public Engine {
 public:
  NativeEngine(std::unique_ptr<const native::Prelude> prelude, NativeEngineOptions options)
      : prelude_(std::move(prelude)), options_(options) {}

  absl::StatusOr<std::shared_ptr<const Program>> Compile(
      const std::vector<std::string>& sources, std::vector<CompileError>* errors) override {
    std::vector<std::unique_ptr<const Op>> ops;
    std::vector<CompileError> found;
    for (size_t i = 0; i < sources.size(); ++i) {
      auto tree = native::Parse(sources[i]);
      absl::StatusOr<std::unique_ptr<const Op>> op =
          tree.ok() ? native::Compile(**tree, *prelude_) : tree.status();
      if (!op.ok()) {
        found.push_back({i, std::string(op.status().message())});
        ops.push_back(nullptr);
        continue;
      }
      ops.push_back(*std::move(op));
    }
    if (!found.empty()) {
      absl::Status status = absl::InvalidArgumentError(
          absl::StrCat(found.size(), " expression(s) do not compile: ", found[0].message));
      if (errors != nullptr) *errors = std::move(found);
      return status;
    }
    return std::make_shared<const NativeProgram>(sources, std::move(ops));
  }

  absl::Status Run(absl::FunctionRef<absl::Status(Session&)> fn,
                   const RunOptions& options) override {
    NativeSession session(*prelude_, options_, options);
    absl::Status status = fn(session);
    return session.yielded() ? YieldedError() : status;
  }

  const EvalLimits& limits() const override { return options_.limits; }

 private:
  std::unique_ptr<const native::Prelude> prelude_;
  NativeEngineOptions options_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> NewNativeEngine(const NativeEngineOptions& options) {
  auto prelude = native::Prelude::Build();
  if (!prelude.ok()) return prelude.status();
  return std::make_unique<NativeEngine>(*std::move(prelude), options);
}

}  // namespace wm::expressions
