#include "server/resolution/status.h"

#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/common/json_path.h"

namespace wm::resolution {
namespace {

using definitions::kMappedStatusCount;
using definitions::kNone;
using definitions::WorkloadStatus;

// The string under a condition's configured field name; a field name set
// to "" reads nothing (rather than the key "").
std::string ConditionField(const Json& condition, const std::string& name) {
  return name.empty() ? "" : FindString(condition, {name});
}

}  // namespace

absl::StatusOr<StatusResult> EvaluateStatus(Evaluation& eval, expressions::Session::InputId root) {
  StatusResult result;
  const auto& compiled = eval.def().components[0];
  const auto& status_def = compiled.def->status;
  if (!status_def) return result;
  result.defined = true;

  if (compiled.phase != kNone) {
    auto phase = eval.Views(compiled.phase, root);
    if (!phase.ok()) return phase.status();
    if (!phase->empty()) {
      const Json& first = *(*phase)[0];
      if (first.is_string()) {
        result.phase = first.get<std::string>();
      } else if (!first.is_null()) {
        return absl::InvalidArgumentError(absl::StrCat(eval.def().field_paths[compiled.phase],
                                                       ": phase must be a string, not ",
                                                       first.dump()));
      }
    }
  }
  std::map<std::string, const ConditionValue*> by_type;
  if (compiled.conditions != kNone) {
    const auto& names = *status_def->conditions;
    auto outputs = eval.Views(compiled.conditions, root);
    if (!outputs.ok()) return outputs.status();
    for (const expressions::Output& output : *outputs) {
      const Json& out = *output;
      if (out.is_null()) continue;
      if (!out.is_array()) {
        return absl::InvalidArgumentError(
            absl::StrCat(eval.def().field_paths[compiled.conditions],
                         ": conditions must be an array of objects, not ", out.type_name()));
      }
      for (const Json& c : *out.get_ptr<const Json::array_t*>()) {
        result.conditions.push_back({ConditionField(c, names.type_field_name),
                                     ConditionField(c, names.status_field_name),
                                     ConditionField(c, names.message_field_name),
                                     ConditionField(c, names.reason_field_name)});
      }
    }
    for (const auto& c : result.conditions) by_type[c.type] = &c;
  }

  for (int s = 0; s < kMappedStatusCount; ++s) {
    const auto& matchers = status_def->mappings[s];
    bool matched = false;
    for (size_t m = 0; m < matchers.size() && !matched; ++m) {
      const auto& matcher = matchers[m];
      bool ok = matcher.by_phase.empty() || matcher.by_phase == result.phase;
      for (size_t c = 0; ok && c < matcher.by_conditions.size(); ++c) {
        const auto& want = matcher.by_conditions[c];
        auto it = by_type.find(want.type);
        ok = it != by_type.end() && (want.status.empty() || want.status == it->second->status) &&
             (want.reason.empty() || want.reason == it->second->reason);
      }
      if (ok && matcher.by_expression) {
        auto values = eval.Views(compiled.matcher_expressions[s][m], root);
        if (!values.ok()) return values.status();
        ok = !values->empty() && (*values)[0]->is_string() &&
             *(*values)[0]->get_ptr<const std::string*>() == matcher.by_expression->expected_result;
      }
      matched = ok;
    }
    if (matched) result.matched.push_back(static_cast<WorkloadStatus>(s));
  }
  if (result.matched.empty()) result.matched.push_back(WorkloadStatus::kUndefined);
  return result;
}

}  // namespace wm::resolution
