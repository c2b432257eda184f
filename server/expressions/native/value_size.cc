#include "server/expressions/native/value_size.h"

namespace wm::expressions::native {

size_t ApproximateBytes(const Json& value) {
  constexpr size_t kNode = 16;
  switch (value.type()) {
    case Json::value_t::string:
      return kNode + value.get_ref<const std::string&>().size();
    case Json::value_t::array: {
      size_t total = kNode;
      for (const Json& element : value) total += ApproximateBytes(element);
      return total;
    }
    case Json::value_t::object: {
      size_t total = kNode;
      for (auto it = value.begin(); it != value.end(); ++it) {
        total += kNode + it.key().size() + ApproximateBytes(*it);
      }
      return total;
    }
    default:
      return kNode;
  }
}

size_t ShallowWorkUnits(const Json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>().size() / kBytesPerWorkUnit;
  if (value.is_structured()) return value.size();
  return 0;
}

}  // namespace wm::expressions::native
