#ifndef WM_SERVER_COMMON_JSON_SIZE_H_
#define WM_SERVER_COMMON_JSON_SIZE_H_

// The size of a Json tree under a cost model: the one walk behind the
// budgets that count trees (the pod tree cache's heap bytes in kube/, the
// evaluator's memory bound in expressions/), each with its own prices.

#include <cstddef>
#include <string>

#include "server/common/json.h"

namespace wm {

// The sum of `model`'s prices over `value` and everything below it:
// model.Value(v) for every value (its own cost, not counting what it
// holds) and model.Member(key) for every object member besides its value.
// The containers are walked directly, not through nlohmann's iterators:
// the evaluator runs this over every output, pod templates included.
//
// Model: `size_t Value(const Json&) const` and
// `size_t Member(const std::string& key) const`.
template <typename Model>
size_t JsonTreeCost(const Json& value, const Model& model) {
  size_t total = model.Value(value);
  switch (value.type()) {
    case Json::value_t::array:
      for (const Json& element : *value.get_ptr<const Json::array_t*>()) {
        total += JsonTreeCost(element, model);
      }
      break;
    case Json::value_t::object:
      for (const auto& [key, member] : *value.get_ptr<const Json::object_t*>()) {
        total += model.Member(key) + JsonTreeCost(member, model);
      }
      break;
    default:
      break;
  }
  return total;
}

}  // namespace wm

#endif  // WM_SERVER_COMMON_JSON_SIZE_H_
