#ifndef WM_SERVER_RESOLUTION_EVALUATION_H_
#define WM_SERVER_RESOLUTION_EVALUATION_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/definitions/compiled_definition.h"
#include "server/expressions/engine.h"

namespace wm::resolution {

// Evaluates one definition's expressions inside an engine session, naming
// the definition field in every error (a FieldError: "<field>: <detail>",
// the field path attached).
class Evaluation {
 public:
  Evaluation(const definitions::CompiledDefinition& def, expressions::Session& session)
      : def_(def), session_(session) {}

  const definitions::CompiledDefinition& def() const { return def_; }
  expressions::Session::InputId Load(const Json& input) { return session_.Load(input); }

  // All outputs of expression `index`, as views where they are parts of
  // the input (expressions::Output); the error names the field.
  absl::StatusOr<expressions::Outputs> Views(definitions::ExprIndex index,
                                             expressions::Session::InputId input);

  // The same outputs, each a Json of its own (for callers that edit them).
  absl::StatusOr<std::vector<Json>> All(definitions::ExprIndex index,
                                        expressions::Session::InputId input);

  // Upstream's single-value rule for pod keys: exactly one output, not
  // null and not "", rendered as Go's %v would ("3", "true", "x").
  // Remembered per expression and input: a pod's instance id is asked for
  // by placement, by its parent's split and by the gang.
  absl::StatusOr<std::string> Single(definitions::ExprIndex index,
                                     expressions::Session::InputId input);

 private:
  absl::StatusOr<std::string> EvaluateSingle(definitions::ExprIndex index,
                                             expressions::Session::InputId input);

  const definitions::CompiledDefinition& def_;
  expressions::Session& session_;
  // Single's answers by input, then expression: an input is asked a few
  // (a pod: its instance id and replica key), and a large job has
  // thousands of inputs.
  std::vector<
      absl::InlinedVector<std::pair<definitions::ExprIndex, absl::StatusOr<std::string>>, 2>>
      singles_;
};

// Go's %v of a JSON value for keys and ids: strings as-is, integral numbers
// without a fraction, other values as JSON.
std::string KeyString(const Json& value);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_EVALUATION_H_
