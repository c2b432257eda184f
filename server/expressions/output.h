#ifndef WM_SERVER_EXPRESSIONS_OUTPUT_H_
#define WM_SERVER_EXPRESSIONS_OUTPUT_H_

#include <memory>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "server/common/json.h"

namespace wm::expressions {

namespace internal {
// What a default Output reads as. A namespace-scope constant: an Output
// is read for every evaluation, and a function-local static costs a guard
// check each time.
inline const Json kNullOutput(nullptr);
}  // namespace internal

// One output of an evaluation (Session::EvaluateViews), read through `*`.
// Most outputs of a definition's expressions are parts of the object being
// resolved (a pod template, a label, a name); those are views and cost no
// copy. An output the evaluation computed is kept alive by the Output.
//
// REQUIRES: a view's document outlives the Output: the session's loaded
// inputs (which callers keep alive for the whole Engine::Run) and the
// program.
class Output {
 public:
  // null.
  Output() = default;

  // A view of `json`, which someone else keeps alive.
  static Output View(const Json& json) {
    Output out;
    out.view_ = &json;
    return out;
  }
  // A view of `member`, which lies inside `*owner`; the Output shares it.
  static Output Shared(std::shared_ptr<const Json> owner, const Json& member) {
    Output out;
    out.view_ = &member;
    out.owner_ = std::move(owner);
    return out;
  }
  // The Output holds `json` itself.
  static Output Value(Json json) {
    Output out;
    out.value_.emplace(std::move(json));
    return out;
  }

  const Json& operator*() const {
    return view_ != nullptr ? *view_ : value_ ? *value_ : internal::kNullOutput;
  }
  const Json* operator->() const { return &**this; }

  // The value as a Json of its own: moved out when this Output holds it
  // alone, copied otherwise.
  Json Take() && {
    if (view_ == nullptr) return value_ ? std::move(*value_) : Json();
    if (owner_ != nullptr && owner_.use_count() == 1 && owner_.get() == view_) {
      return std::move(const_cast<Json&>(*view_));
    }
    return *view_;
  }

 private:
  const Json* view_ = nullptr;  // null: the value is value_, or null
  std::shared_ptr<const Json> owner_;
  // Empty unless the Output holds its value: most Outputs are views, and an
  // empty optional costs no Json constructor and destructor call.
  std::optional<Json> value_;
};

// The outputs of one evaluation. Most of a definition's expressions have
// exactly one (a scale, a status matcher, a pod's label): that one is held
// in place rather than in an allocation of its own.
using Outputs = absl::InlinedVector<Output, 1>;

}  // namespace wm::expressions

#endif  // WM_SERVER_EXPRESSIONS_OUTPUT_H_
