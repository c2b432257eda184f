#include "server/expressions/native/path_plan.h"

namespace wm::expressions::native {
namespace {

const Json& NullJson() {
  static const Json* const kNull = new Json(nullptr);
  return *kNull;
}

}  // namespace

std::optional<PathPlan> PathPlan::Of(const Op& op) {
  switch (op.kind) {
    case OpKind::kIdentity:
      return PathPlan();
    case OpKind::kIndex: {
      const Op* key = op.child(1);
      if (op.optional || key == nullptr || key->kind != OpKind::kConstant ||
          !key->constant.is_string()) {
        return std::nullopt;
      }
      std::optional<PathPlan> plan = Of(*op.child(0));
      if (plan) plan->steps_.push_back({false, key->constant.get<std::string>()});
      return plan;
    }
    case OpKind::kIterate: {
      if (op.optional) return std::nullopt;
      std::optional<PathPlan> plan = Of(*op.child(0));
      if (plan) plan->steps_.push_back({true, ""});
      return plan;
    }
    default:
      return std::nullopt;
  }
}

bool PathPlan::Walk(const Json& input, size_t max_outputs,
                    std::vector<const Json*>& outputs) const {
  size_t before = outputs.size();
  if (WalkFrom(0, input, max_outputs + before, outputs)) return true;
  outputs.resize(before);
  return false;
}

bool PathPlan::WalkFrom(size_t step, const Json& value, size_t max_outputs,
                        std::vector<const Json*>& outputs) const {
  const Json* current = &value;
  for (; step < steps_.size(); ++step) {
    const Step& s = steps_[step];
    if (s.iterate) {
      // `[]` over null is an error: the interpreter words it.
      if (current->is_array()) {
        for (const Json& element : *current->get_ptr<const Json::array_t*>()) {
          if (!WalkFrom(step + 1, element, max_outputs, outputs)) return false;
        }
        return true;
      }
      if (!current->is_object()) return false;
      for (const auto& [key, member] : *current->get_ptr<const Json::object_t*>()) {
        if (!WalkFrom(step + 1, member, max_outputs, outputs)) return false;
      }
      return true;
    }
    if (current->is_null()) continue;  // null.key is null, and so is every key after it
    if (!current->is_object()) return false;
    const Json* member = FindMember(*current, s.key);
    current = member == nullptr ? &NullJson() : member;
  }
  if (outputs.size() >= max_outputs) return false;
  outputs.push_back(current);
  return true;
}

}  // namespace wm::expressions::native
