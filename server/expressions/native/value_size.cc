#include "server/expressions/native/value_size.h"

#include <string>

#include "server/common/json_size.h"

namespace wm::expressions::native {

namespace {

// 16 bytes a node, and the characters of strings and keys.
struct Approximate {
  static constexpr size_t kNode = 16;
  size_t Value(const Json& value) const {
    return kNode + (value.is_string() ? value.get_ref<const std::string&>().size() : 0);
  }
  size_t Member(const std::string& key) const { return kNode + key.size(); }
};

}  // namespace

size_t ApproximateBytes(const Json& value) { return JsonTreeCost(value, Approximate()); }

size_t ShallowWorkUnits(const Json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>().size() / kBytesPerWorkUnit;
  if (value.is_structured()) return value.size();
  return 0;
}

}  // namespace wm::expressions::native
