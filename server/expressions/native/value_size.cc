#include "server/expressions/native/value_size.h"

namespace wm::expressions::native {

size_t ApproximateBytes(const Json& value) {
  constexpr size_t kNode = 16;
  // The containers are walked directly, not through nlohmann's iterators:
  // this runs over every output, pod templates included.
  switch (value.type()) {
    case Json::value_t::string:
      return kNode + value.get_ref<const std::string&>().size();
    case Json::value_t::array: {
      size_t total = kNode;
      for (const Json& element : value.get_ref<const Json::array_t&>()) {
        total += ApproximateBytes(element);
      }
      return total;
    }
    case Json::value_t::object: {
      size_t total = kNode;
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        total += kNode + key.size() + ApproximateBytes(member);
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
