#include "server/expressions/native/value_size.h"

#include <string>

#include "server/common/json_size.h"

namespace wm::expressions::native {

namespace {

// 16 bytes a node, and the characters of strings and keys. (get_ptr, not
// get_ref: get_ref's checked path is a call of its own, for every string of
// every output.)
struct Approximate {
  static constexpr size_t kNode = 16;
  size_t Value(const Json& value) const {
    const std::string* text = value.get_ptr<const std::string*>();
    return kNode + (text != nullptr ? text->size() : 0);
  }
  size_t Member(const std::string& key) const { return kNode + key.size(); }
};

}  // namespace

size_t ApproximateBytes(const Json& value) { return JsonTreeCost(value, Approximate()); }

size_t ShallowWorkUnits(const Json& value) {
  if (value.is_string()) return value.get_ptr<const std::string*>()->size() / kBytesPerWorkUnit;
  if (value.is_structured()) return value.size();
  return 0;
}

}  // namespace wm::expressions::native
