#include "server/resolution/evaluation.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/resolution/field_error.h"

namespace wm::resolution {

std::string KeyString(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) {
    double d = value.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 1e15) return absl::StrCat(static_cast<int64_t>(d));
    return absl::StrCat(d);
  }
  return value.dump();
}

absl::StatusOr<expressions::Outputs> Evaluation::Views(definitions::ExprIndex index,
                                                       expressions::Session::InputId input) {
  // One named result, returned on every path: no move of the outputs.
  absl::StatusOr<expressions::Outputs> result =
      session_.EvaluateViews(*def_.program, static_cast<size_t>(index), input);
  if (!result.ok()) {
    result = FieldError(result.status().code(), def_.field_paths[index], result.status().message());
  }
  return result;
}

absl::StatusOr<std::vector<Json>> Evaluation::All(definitions::ExprIndex index,
                                                  expressions::Session::InputId input) {
  auto result = session_.Evaluate(*def_.program, static_cast<size_t>(index), input);
  if (!result.ok()) {
    return FieldError(result.status().code(), def_.field_paths[index], result.status().message());
  }
  return result;
}

absl::StatusOr<std::string> Evaluation::Single(definitions::ExprIndex index,
                                               expressions::Session::InputId input) {
  if (input < 0) return EvaluateSingle(index, input);  // the session says which input is unknown
  if (static_cast<size_t>(input) >= singles_.size()) singles_.resize(input + 1);
  auto& answers = singles_[input];
  for (const auto& [expression, answer] : answers) {
    if (expression == index) return answer;
  }
  answers.emplace_back(index, EvaluateSingle(index, input));
  return answers.back().second;
}

absl::StatusOr<std::string> Evaluation::EvaluateSingle(definitions::ExprIndex index,
                                                       expressions::Session::InputId input) {
  auto values = Views(index, input);
  if (!values.ok()) return values.status();
  if (values->size() != 1) {
    return FieldError(absl::StatusCode::kInvalidArgument, def_.field_paths[index],
                      absl::StrCat("expected single query result, got ", values->size()));
  }
  const Json& v = *(*values)[0];
  if (v.is_null() || (v.is_string() && v.get_ptr<const std::string*>()->empty())) {
    return FieldError(absl::StatusCode::kInvalidArgument, def_.field_paths[index],
                      "query result is empty");
  }
  return KeyString(v);
}

}  // namespace wm::resolution
